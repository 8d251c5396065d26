import { credentials, status as GrpcStatus, Metadata, type ServiceError } from '@grpc/grpc-js';
import {
  A2aError,
  taskCommandCall,
  taskCommandOutcome,
  taskPb,
  type TaskCommandMethod,
  type TaskCommandRequests,
  type TaskCommandResponses,
} from '@lib/a2a-protocol';
import type { IngressConfig } from '@lib/config';
import { activeTraceparent } from '@lib/observability';
import { callContextToWire, type CallContext } from '@lib/tenancy';
import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { INGRESS_CONFIG } from '../tokens';
import { A2aOperations, type Versioned } from './a2a-operations';

/** Extra time over the task-service's own blocking timeout before the ingress gives up on a call. */
const DEADLINE_MARGIN_MS = 120_000;

/**
 * The operations port over the internal TaskCommandService, spread round-robin across the task-service
 * replicas listed in TASK_SERVICE_URLS. A replica that cannot be reached is skipped for the next one.
 */
@Injectable()
export class TaskServiceOperations extends A2aOperations implements OnModuleDestroy {
  private readonly clients: taskPb.TaskCommandServiceClient[];
  private next = 0;

  constructor(@Inject(INGRESS_CONFIG) config: IngressConfig) {
    super();
    this.clients = config.TASK_SERVICE_URLS.split(',')
      .map((url) => url.trim())
      .filter((url) => url.length > 0)
      .map((url) => new taskPb.TaskCommandServiceClient(url, credentials.createInsecure()));
  }

  onModuleDestroy(): void {
    for (const client of this.clients) {
      client.close();
    }
  }

  async invoke<M extends TaskCommandMethod>(
    method: M,
    request: TaskCommandRequests[M],
    ctx: CallContext,
  ): Promise<Versioned<TaskCommandResponses[M]>> {
    const call = taskCommandCall(method, request, callContextToWire(ctx));
    let lastError: unknown = null;
    for (let tried = 0; tried < this.clients.length; tried++) {
      const client = this.clients[this.next++ % this.clients.length];
      if (!client) {
        break;
      }
      try {
        return taskCommandOutcome(method, await invoke(client, method, call));
      } catch (error) {
        if (!isUnreachable(error)) {
          throw transportError(error);
        }
        lastError = error;
      }
    }
    throw new A2aError('UNAVAILABLE', `task service unavailable: ${String(lastError)}`);
  }
}

/**
 * Transport failures after the call reached a replica (it went away mid-call, was overloaded, ran out of
 * time) are UNAVAILABLE: their outcome is unknown, and a retry is safe (SendMessage is idempotent by
 * messageId, the other operations read or are idempotent). Anything else is a bug and stays as it is.
 */
const TRANSIENT_TRANSPORT: ReadonlySet<number> = new Set([
  GrpcStatus.UNAVAILABLE,
  GrpcStatus.CANCELLED,
  GrpcStatus.DEADLINE_EXCEEDED,
  GrpcStatus.ABORTED,
  GrpcStatus.RESOURCE_EXHAUSTED,
]);

function transportError(error: unknown): unknown {
  if (error instanceof A2aError) {
    return error;
  }
  const { code, details } = error as Partial<ServiceError>;
  return code !== undefined && TRANSIENT_TRANSPORT.has(code)
    ? new A2aError('UNAVAILABLE', `task service call failed (${details ?? code}); retry shortly`)
    : error;
}

function invoke(
  client: taskPb.TaskCommandServiceClient,
  method: TaskCommandMethod,
  request: taskPb.OperationCall,
): Promise<taskPb.OperationResult> {
  const deadline = new Date(Date.now() + DEADLINE_MARGIN_MS);
  // The call's span continues in the task-service (W3C trace context over gRPC metadata).
  const metadata = new Metadata();
  const traceparent = activeTraceparent();
  if (traceparent) {
    metadata.set('traceparent', traceparent);
  }
  return new Promise((resolve, reject) => {
    client[method](request, metadata, { deadline }, (error, result) =>
      error ? reject(error) : resolve(result),
    );
  });
}

/** Only a call that never reached a replica may be tried on another one (the work is not idempotent). */
function isUnreachable(error: unknown): boolean {
  const code = (error as Partial<ServiceError>).code;
  return code === GrpcStatus.UNAVAILABLE && !(error instanceof A2aError);
}

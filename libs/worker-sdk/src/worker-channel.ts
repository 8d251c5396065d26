import {
  credentials,
  Metadata,
  type ClientDuplexStream,
  type status as GrpcStatus,
  type ServiceError,
  type StatusObject,
} from '@grpc/grpc-js';
import { workerPb } from '@lib/a2a-protocol';
import { DEFAULT_BACKOFF } from './backoff';
import type { UpdateFailure } from './update-failure';

/** How one `PublishUpdate` went. */
export type SendResult =
  | { readonly ok: true }
  | { readonly ok: false; readonly failure: UpdateFailure };

/** Sends execution updates to the platform (the port `TaskExecution` needs). */
export interface UpdateSender {
  send(request: workerPb.PublishUpdateRequest, timeoutMs: number): Promise<SendResult>;
}

/** How a session ended. */
export interface SessionEnd {
  readonly code: GrpcStatus;
  readonly message: string;
}

/** One `Connect` stream. */
export interface WorkerSession {
  /** Writes a message; returns false when the stream has already ended. */
  write(message: workerPb.WorkerMessage): boolean;
  /** Ends the stream from this side. */
  close(): void;
  /** Settles once the stream has ended, for whatever reason. */
  readonly ended: Promise<SessionEnd>;
}

/** The gRPC side of the worker: the only place that knows grpc-js. */
export class WorkerChannel implements UpdateSender {
  private readonly client: workerPb.WorkerServiceClient;
  /** The worker id of the latest welcome, sent as `x-worker-id` with every update. */
  workerId: string | undefined;

  constructor(
    target: string,
    private readonly credential: string,
    tls: boolean,
  ) {
    this.client = new workerPb.WorkerServiceClient(
      target,
      tls ? credentials.createSsl() : credentials.createInsecure(),
      {
        // Let the channel notice a restarted platform as fast as the worker retries.
        'grpc.initial_reconnect_backoff_ms': DEFAULT_BACKOFF.initialMs,
        'grpc.max_reconnect_backoff_ms': DEFAULT_BACKOFF.maxMs,
      },
    );
  }

  connect(onMessage: (message: workerPb.PlatformMessage) => void): WorkerSession {
    const call: ClientDuplexStream<workerPb.WorkerMessage, workerPb.PlatformMessage> =
      this.client.connect(this.metadata());
    let open = true;
    const ended = new Promise<SessionEnd>((resolve) => {
      call.on('status', (status: StatusObject) => {
        open = false;
        resolve({ code: status.code, message: status.details });
      });
    });
    // A failed call also emits 'error' (before 'status'); 'status' is what ends the session.
    call.on('error', () => undefined);
    call.on('data', onMessage);
    return {
      write: (message) => {
        if (open) {
          call.write(message);
        }
        return open;
      },
      close: () => {
        if (open) {
          call.cancel();
        }
      },
      ended,
    };
  }

  send(request: workerPb.PublishUpdateRequest, timeoutMs: number): Promise<SendResult> {
    const metadata = this.metadata();
    if (this.workerId) {
      metadata.set('x-worker-id', this.workerId);
    }
    return new Promise((resolve) => {
      this.client.publishUpdate(
        request,
        metadata,
        { deadline: Date.now() + timeoutMs },
        (error: ServiceError | null) =>
          resolve(error ? { ok: false, failure: toFailure(error) } : { ok: true }),
      );
    });
  }

  /** Hands a lease back (`ReleaseLease`); resolves with the outcome, never rejects. */
  release(lease: workerPb.LeaseRef, reason: string, timeoutMs: number): Promise<SendResult> {
    return new Promise((resolve) => {
      this.client.releaseLease(
        { taskId: lease.taskId, leaseEpoch: lease.leaseEpoch, reason },
        this.metadata(),
        { deadline: Date.now() + timeoutMs },
        (error: ServiceError | null) =>
          resolve(error ? { ok: false, failure: toFailure(error) } : { ok: true }),
      );
    });
  }

  close(): void {
    this.client.close();
  }

  private metadata(): Metadata {
    const metadata = new Metadata();
    metadata.set('authorization', `Bearer ${this.credential}`);
    return metadata;
  }
}

function toFailure(error: ServiceError): UpdateFailure {
  const reason = error.metadata.get('x-error-reason')[0];
  return {
    code: error.code,
    reason: reason === undefined ? undefined : String(reason),
    message: error.details || error.message,
  };
}

import {
  Metadata,
  Server,
  ServerCredentials,
  type sendUnaryData,
  type ServerUnaryCall,
  type ServerWritableStream,
  type StatusObject,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import {
  encodeGrpcStatus,
  GRPC_STATUS_DETAILS_KEY,
  toGrpcStatus,
  type A2aError,
  type A2aJsonRpcMethod,
} from '@lib/a2a-protocol';
import type { IngressConfig } from '@lib/config';
import { currentLogContext } from '@lib/observability';
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { performance } from 'node:perf_hooks';
import { bearerOf } from '../auth/bearer.authenticator';
import {
  A2aGateway,
  isStreamingMethod,
  reportedError,
  type A2aSession,
  type InboundRequest,
  type StreamingMethod,
  type UnaryMethod,
} from '../gateway/a2a-gateway';
import { observeCall } from '../gateway/call-metrics';
import {
  handleInbound,
  REQUEST_ID_HEADER,
  requestIdOf,
  type InboundCall,
} from '../gateway/inbound-call';
import type { TaskSubscription } from '../streaming/task-event-feed';
import { INGRESS_CONFIG } from '../tokens';
import {
  a2aServerDefinition,
  methodOf,
  responseMessage,
  SERVICE_KEYS,
  type InboundMessage,
  type ServiceKey,
} from './a2a-grpc.codec';
import { writeGrpcStream } from './grpc-stream-writer';

type StreamCall = ServerWritableStream<InboundMessage, unknown>;
type UnaryCall = ServerUnaryCall<InboundMessage, unknown>;

/** How long shutdown waits for calls in flight before cutting them. */
const SHUTDOWN_GRACE_MS = 5_000;

/**
 * The gRPC binding `lf.a2a.v1.A2AService` (spec digest §2, §8b): one server for every hosted agent, routed by
 * the request's `tenant` (`<tenant>/<agent>`). Each RPC turns its protobuf request into ProtoJSON, hands it to
 * the gateway like the JSON bindings do, and encodes the result; errors become a status with a binary
 * `google.rpc.Status` (ErrorInfo, BadRequest) in `grpc-status-details-bin` (§9.3).
 */
@Injectable()
export class A2aGrpcServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(A2aGrpcServer.name);
  private readonly server: Server;
  private readonly openStreams = new Set<TaskSubscription>();
  private stopping: Promise<void> | null = null;

  constructor(
    private readonly gateway: A2aGateway,
    @Inject(INGRESS_CONFIG) private readonly config: IngressConfig,
  ) {
    this.server = new Server({ 'grpc.max_receive_message_length': config.MAX_BODY_BYTES });
  }

  async onApplicationBootstrap(): Promise<void> {
    this.server.addService(a2aServerDefinition(), this.handlers());
    const host = this.config.A2A_GRPC_HOST;
    const port = await new Promise<number>((resolve, reject) => {
      this.server.bindAsync(
        `${host}:${this.config.A2A_GRPC_PORT}`,
        ServerCredentials.createInsecure(),
        (error, bound) => (error ? reject(error) : resolve(bound)),
      );
    });
    this.logger.log(`A2A gRPC on ${host}:${port}`);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.stop(Date.now() + SHUTDOWN_GRACE_MS);
  }

  /**
   * Ends open streams with UNAVAILABLE (the event feed ends its own subscriptions first; this also covers
   * streams opened since), takes no new call, lets unary calls in flight finish until `deadline`, then cuts
   * what is left. Runs once: as a drain step, or at shutdown.
   */
  stop(deadline: number): Promise<void> {
    this.stopping ??= new Promise<void>((resolve) => {
      this.openStreams.forEach((subscription) => subscription.close('shutdown'));
      const timer = setTimeout(
        () => {
          this.server.forceShutdown();
          resolve();
        },
        Math.max(0, deadline - Date.now()),
      );
      this.server.tryShutdown(() => {
        clearTimeout(timer);
        resolve();
      });
    });
    return this.stopping;
  }

  private handlers(): UntypedServiceImplementation {
    return Object.fromEntries(
      SERVICE_KEYS.map((key) => {
        const method = methodOf(key);
        return [
          key,
          isStreamingMethod(method)
            ? (call: StreamCall) =>
                void handleInbound(inboundCall(method, call.metadata), (answered) =>
                  this.serverStreaming(key, method, call).finally(() => answered()),
                )
            : (call: UnaryCall, callback: sendUnaryData<unknown>) =>
                void handleInbound(inboundCall(method, call.metadata), (answered) =>
                  this.unary(key, method, call, callback).finally(() => answered()),
                ),
        ];
      }),
    );
  }

  private async unary(
    key: ServiceKey,
    method: UnaryMethod,
    call: UnaryCall,
    callback: sendUnaryData<unknown>,
  ): Promise<void> {
    const started = performance.now();
    try {
      const params = paramsOf(call.request);
      const session = await this.gateway.open(
        inboundRequest(call.metadata, params, call.getPeer()),
      );
      sendInitialMetadata(call, session);
      const result = await this.gateway.call(session, method, params);
      callback(null, responseMessage(key, result ?? {}));
      observeCall('GRPC', method, started);
    } catch (thrown) {
      const error = reportedError(thrown, this.logger);
      callback(grpcStatus(error, currentLogContext()?.requestId));
      observeCall('GRPC', method, started, error);
    }
  }

  private async serverStreaming(
    key: ServiceKey,
    method: StreamingMethod,
    call: StreamCall,
  ): Promise<void> {
    const started = performance.now();
    let opened = false;
    let subscription: TaskSubscription | null = null;
    const cancelled = (): void => subscription?.close('closed');
    call.on('cancelled', cancelled);
    try {
      const params = paramsOf(call.request);
      const session = await this.gateway.open(
        inboundRequest(call.metadata, params, call.getPeer()),
      );
      sendInitialMetadata(call, session);
      const stream = await this.gateway.stream(
        session,
        method,
        params,
        firstValue(call.metadata, 'last-event-id'),
      );
      opened = true;
      observeCall('GRPC', method, started);
      subscription = stream.subscription;
      if (subscription) {
        this.openStreams.add(subscription);
        if (call.cancelled) {
          subscription.close('closed');
        }
      }
      await writeGrpcStream(call, stream.first, subscription, (item) =>
        responseMessage(key, item.response),
      );
      call.end();
    } catch (thrown) {
      // Before the first message this is the RPC's error; after it, why the stream was cut off.
      const error = reportedError(thrown, this.logger);
      if (!opened) {
        observeCall('GRPC', method, started, error);
      }
      if (!call.cancelled) {
        call.emit('error', grpcStatus(error, currentLogContext()?.requestId));
      }
    } finally {
      call.off('cancelled', cancelled);
      if (subscription) {
        subscription.close('closed');
        this.openStreams.delete(subscription);
      }
    }
  }
}

/**
 * The status of an A2A error (digest §9.1 v1.0.1 codes) with its binary `google.rpc.Status` trailer and the
 * call's request id.
 */
function grpcStatus(error: A2aError, requestId: string | undefined): Partial<StatusObject> {
  const status = toGrpcStatus(error);
  const metadata = new Metadata();
  metadata.set(GRPC_STATUS_DETAILS_KEY, encodeGrpcStatus(status));
  if (requestId) {
    metadata.set(REQUEST_ID_HEADER, requestId);
  }
  return { code: status.code, details: status.message, metadata };
}

/** What a call says before its request is read: its method, request id and trace context. */
function inboundCall(method: A2aJsonRpcMethod, metadata: Metadata): InboundCall {
  return {
    binding: 'GRPC',
    method,
    requestId: requestIdOf(firstValue(metadata, REQUEST_ID_HEADER)),
    traceparent: firstValue(metadata, 'traceparent'),
  };
}

function paramsOf(message: InboundMessage): { [field: string]: unknown } {
  if (message.error) {
    throw message.error;
  }
  return message.params;
}

/**
 * The service parameters (digest §8b) travel as metadata, whose keys gRPC lower-cases; several extensions may
 * come in one comma-separated entry or in several entries.
 */
function inboundRequest(
  metadata: Metadata,
  params: { [field: string]: unknown },
  peer: string,
): InboundRequest {
  const tenant = params['tenant'];
  const extensions = metadata.get('a2a-extensions').filter((v) => typeof v === 'string');
  return {
    binding: 'GRPC',
    route: null,
    tenants: typeof tenant === 'string' && tenant !== '' ? [tenant] : [],
    apiKey: firstValue(metadata, 'x-api-key'),
    ...bearerOf(firstValue(metadata, 'authorization')),
    version: firstValue(metadata, 'a2a-version'),
    extensions: extensions.length > 0 ? extensions.join(',') : undefined,
    traceparent: firstValue(metadata, 'traceparent'),
    sourceAddress: peer,
  };
}

function firstValue(metadata: Metadata, key: string): string | undefined {
  const value = metadata.get(key)[0];
  return typeof value === 'string' ? value : undefined;
}

/**
 * The initial metadata: the request id, and `a2a-extensions` listing the activated extensions when there
 * are any (digest §10.2).
 */
function sendInitialMetadata(
  call: { sendMetadata(metadata: Metadata): void },
  session: A2aSession,
): void {
  const metadata = new Metadata();
  metadata.set(REQUEST_ID_HEADER, session.ctx.requestId);
  if (session.activatedExtensions.length > 0) {
    metadata.set('a2a-extensions', session.activatedExtensions.join(', '));
  }
  call.sendMetadata(metadata);
}

import {
  credentials,
  status as GrpcStatus,
  Metadata,
  type ClientDuplexStream,
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

/** Most requests in one `PublishUpdates` call. */
const MAX_REQUESTS_PER_CALL = 64;

/** An update request waiting for the next `PublishUpdates` call. */
interface QueuedRequest {
  request: workerPb.PublishUpdateRequest;
  deadline: number;
  resolve: (result: SendResult) => void;
}

/** A batch sent on the session, waiting for its `updates_applied`. */
interface SentBatch {
  session: ClientDuplexStream<workerPb.WorkerMessage, workerPb.PlatformMessage>;
  batch: QueuedRequest[];
  timer: NodeJS.Timeout;
}

/** The outcome of a batch whose answer never came: unknown, so the requests are sent again (same update ids). */
const UNANSWERED: UpdateFailure = {
  code: GrpcStatus.UNAVAILABLE,
  reason: undefined,
  message: 'the session ended before the platform answered the updates',
};

/** The gRPC side of the worker: the only place that knows grpc-js. */
export class WorkerChannel implements UpdateSender {
  private readonly client: workerPb.WorkerServiceClient;
  /** The worker id of the latest welcome, sent as `x-worker-id` with every update. */
  workerId: string | undefined;
  private queued: QueuedRequest[] = [];
  private flushScheduled = false;
  /** The open session's stream, once the platform welcomed it: updates go on it. */
  private session: ClientDuplexStream<workerPb.WorkerMessage, workerPb.PlatformMessage> | null =
    null;
  private readonly sent = new Map<string, SentBatch>();
  private nextBatch = 0;

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
        if (this.session === call) {
          this.session = null;
        }
        // Their outcome is unknown: each request is sent again by its task (same update id, applied once).
        for (const [batchId, { session, batch, timer }] of this.sent) {
          if (session !== call) {
            continue;
          }
          clearTimeout(timer);
          this.sent.delete(batchId);
          batch.forEach((queued) => queued.resolve({ ok: false, failure: UNANSWERED }));
        }
        resolve({ code: status.code, message: status.details });
      });
    });
    // A failed call also emits 'error' (before 'status'); 'status' is what ends the session.
    call.on('error', () => undefined);
    call.on('data', (message: workerPb.PlatformMessage) => {
      if (message.updatesApplied) {
        this.applied(message.updatesApplied);
        return;
      }
      if (message.welcome && open) {
        this.session = call;
      }
      onMessage(message);
    });
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

  /**
   * Sends one update request. The requests of every task sent in the same turn of the event loop go out
   * together, each with its own outcome: on the session once the platform welcomed it (`SessionUpdates`),
   * else as one `PublishUpdates` call. Their deadline is the earliest of theirs.
   */
  send(request: workerPb.PublishUpdateRequest, timeoutMs: number): Promise<SendResult> {
    return new Promise((resolve) => {
      this.queued.push({ request, deadline: Date.now() + timeoutMs, resolve });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.flushScheduled = false;
    while (this.queued.length > 0) {
      const batch = this.queued.splice(0, MAX_REQUESTS_PER_CALL);
      if (this.session) {
        this.sendOnSession(this.session, batch);
        continue;
      }
      const metadata = this.metadata();
      if (this.workerId) {
        metadata.set('x-worker-id', this.workerId);
      }
      this.client.publishUpdates(
        { requests: batch.map((queued) => queued.request) },
        metadata,
        { deadline: Math.min(...batch.map((queued) => queued.deadline)) },
        (error: ServiceError | null, response?: workerPb.PublishUpdatesResponse) => {
          batch.forEach((queued, index) =>
            queued.resolve(
              error
                ? { ok: false, failure: toFailure(error) }
                : resultOf(response?.outcomes[index]),
            ),
          );
        },
      );
    }
  }

  /** Sends a batch on the session; its answer (or the session's end, or its deadline) settles it. */
  private sendOnSession(
    session: ClientDuplexStream<workerPb.WorkerMessage, workerPb.PlatformMessage>,
    batch: QueuedRequest[],
  ): void {
    const batchId = String(++this.nextBatch);
    const deadline = Math.min(...batch.map((queued) => queued.deadline));
    const timer = setTimeout(
      () => {
        if (this.sent.delete(batchId)) {
          const late: UpdateFailure = {
            code: GrpcStatus.DEADLINE_EXCEEDED,
            reason: undefined,
            message: 'the platform did not answer the updates in time',
          };
          batch.forEach((queued) => queued.resolve({ ok: false, failure: late }));
        }
      },
      Math.max(0, deadline - Date.now()),
    );
    this.sent.set(batchId, { session, batch, timer });
    session.write({ updates: { batchId, requests: batch.map((queued) => queued.request) } });
  }

  private applied({ batchId, outcomes }: workerPb.SessionUpdatesApplied): void {
    const sent = this.sent.get(batchId);
    if (!sent) {
      return;
    }
    clearTimeout(sent.timer);
    this.sent.delete(batchId);
    sent.batch.forEach((queued, index) => queued.resolve(resultOf(outcomes[index])));
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

/** One request's outcome in a `PublishUpdates` answer; a missing one counts as a transient failure. */
function resultOf(outcome: workerPb.PublishOutcome | undefined): SendResult {
  if (!outcome) {
    return {
      ok: false,
      failure: {
        code: GrpcStatus.INTERNAL,
        reason: undefined,
        message: 'the platform sent no outcome for the update',
      },
    };
  }
  return outcome.code === (GrpcStatus.OK as number)
    ? { ok: true }
    : {
        ok: false,
        failure: {
          code: outcome.code,
          reason: outcome.reason || undefined,
          message: outcome.message,
        },
      };
}

function toFailure(error: ServiceError): UpdateFailure {
  const reason = error.metadata.get('x-error-reason')[0];
  return {
    code: error.code,
    reason: reason === undefined ? undefined : String(reason),
    message: error.details || error.message,
  };
}

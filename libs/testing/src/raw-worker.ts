import { credentials, Metadata, type ClientDuplexStream, type ServiceError } from '@grpc/grpc-js';
import { a2aPb, workerPb, type Artifact, type Message, type TaskStatus } from '@lib/a2a-protocol';

/**
 * A bare WorkerService client for tests: it speaks the worker protocol message by message, so tests can
 * misbehave on purpose (stop heart-beating, publish with a stale epoch, vanish mid-task).
 */
export class RawWorker {
  private readonly client: workerPb.WorkerServiceClient;
  private stream: ClientDuplexStream<workerPb.WorkerMessage, workerPb.PlatformMessage> | null =
    null;
  private readonly inbox: workerPb.PlatformMessage[] = [];
  private readonly waiters: (() => void)[] = [];
  workerId = '';
  closedWith: ServiceError | null = null;

  constructor(
    target: string,
    private readonly secret: string,
  ) {
    this.client = new workerPb.WorkerServiceClient(target, credentials.createInsecure());
  }

  private metadata(): Metadata {
    const metadata = new Metadata();
    metadata.set('authorization', `Bearer ${this.secret}`);
    if (this.workerId) {
      metadata.set('x-worker-id', this.workerId);
    }
    return metadata;
  }

  /**
   * Opens the session and waits for the welcome. With `takesAssignmentBatches`, the hello says so, and
   * assignments granted together may come as one `assignments` message.
   */
  async connect(
    maxConcurrentTasks = 4,
    leases: workerPb.LeaseRef[] = [],
    takesAssignmentBatches = false,
  ): Promise<workerPb.Welcome> {
    const stream = this.client.connect(this.metadata());
    this.stream = stream;
    stream.on('data', (message: workerPb.PlatformMessage) => {
      this.inbox.push(message);
      this.waiters.splice(0).forEach((wake) => wake());
    });
    stream.on('error', (error: ServiceError) => {
      this.closedWith = error;
      this.waiters.splice(0).forEach((wake) => wake());
    });
    stream.write({
      hello: { identity: 'raw-test-worker', maxConcurrentTasks, leases, takesAssignmentBatches },
    });
    const welcome = (await this.next((m) => m.welcome !== undefined)).welcome;
    if (!welcome) {
      throw new Error('no welcome');
    }
    this.workerId = welcome.workerId;
    return welcome;
  }

  /** The next platform message matching `match` (messages before it that do not match are kept). */
  async next(
    match: (m: workerPb.PlatformMessage) => boolean,
    timeoutMs = 10_000,
  ): Promise<workerPb.PlatformMessage> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = this.inbox.findIndex(match);
      if (index >= 0) {
        return this.inbox.splice(index, 1)[0] as workerPb.PlatformMessage;
      }
      if (this.closedWith) {
        throw this.closedWith;
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new Error('timed out waiting for a platform message');
      }
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, left);
      });
    }
  }

  nextAssignment(timeoutMs?: number): Promise<workerPb.Assignment> {
    return this.next((m) => m.assignment !== undefined, timeoutMs).then(
      (m) => m.assignment as workerPb.Assignment,
    );
  }

  heartbeat(leases: { taskId: string; leaseEpoch: number }[]): void {
    this.stream?.write({ heartbeat: { leases } });
  }

  publishStatus(
    taskId: string,
    leaseEpoch: number,
    status: TaskStatus,
    updateId = '',
  ): Promise<number> {
    return this.publishOne(taskId, leaseEpoch, updateId, {
      status: a2aPb.TaskStatus.fromJSON(status),
    });
  }

  publishMessage(
    taskId: string,
    leaseEpoch: number,
    message: Message,
    updateId = '',
  ): Promise<number> {
    return this.publishOne(taskId, leaseEpoch, updateId, {
      message: a2aPb.Message.fromJSON(message),
    });
  }

  publishArtifact(
    taskId: string,
    leaseEpoch: number,
    artifact: Artifact,
    append = false,
    lastChunk = true,
    updateId = '',
  ): Promise<number> {
    return this.publishOne(taskId, leaseEpoch, updateId, {
      artifact: { artifact: a2aPb.Artifact.fromJSON(artifact), append, lastChunk },
    });
  }

  /** Answers the assignment's message with a bare Message instead of a task (`reply`). */
  publishReply(
    taskId: string,
    leaseEpoch: number,
    message: Message,
    updateId = '',
  ): Promise<number> {
    return this.publishOne(taskId, leaseEpoch, updateId, {
      reply: a2aPb.Message.fromJSON(message),
    });
  }

  /** One update in the request's own `update` field. */
  private publishOne(
    taskId: string,
    leaseEpoch: number,
    updateId: string,
    update: workerPb.ExecutionUpdate,
  ): Promise<number> {
    return this.publish({ taskId, leaseEpoch, updateId, traceparent: '', updates: [], ...update });
  }

  /** Several updates in one request, applied as one change (all or none). */
  publishBatch(
    taskId: string,
    leaseEpoch: number,
    updates: workerPb.ExecutionUpdate[],
    updateId = '',
  ): Promise<number> {
    return this.publish({ taskId, leaseEpoch, updateId, traceparent: '', updates });
  }

  /** Sends requests on the session (`SessionUpdates`); resolves with the outcomes of `updates_applied`. */
  async publishOnSession(
    requests: workerPb.PublishUpdateRequest[],
    batchId = `b-${Math.random().toString(36).slice(2)}`,
  ): Promise<workerPb.PublishOutcome[]> {
    this.stream?.write({ updates: { batchId, requests } });
    const answer = await this.next((m) => m.updatesApplied?.batchId === batchId);
    return answer.updatesApplied?.outcomes ?? [];
  }

  /** Hands a leased task back (ReleaseLease); resolves with the task's version. */
  release(taskId: string, leaseEpoch: number, reason = 'draining'): Promise<number> {
    return new Promise((resolve, reject) => {
      this.client.releaseLease(
        { taskId, leaseEpoch, reason },
        this.metadata(),
        (error, response) => (error ? reject(error) : resolve(response.version)),
      );
    });
  }

  /** Sends a request as it is, however malformed. */
  publish(request: workerPb.PublishUpdateRequest): Promise<number> {
    return new Promise((resolve, reject) => {
      this.client.publishUpdate(request, this.metadata(), (error, response) =>
        error ? reject(error) : resolve(response.version),
      );
    });
  }

  /** Sends several requests in one PublishUpdates call; resolves with their outcomes, in order. */
  publishMany(requests: workerPb.PublishUpdateRequest[]): Promise<workerPb.PublishOutcome[]> {
    return new Promise((resolve, reject) => {
      this.client.publishUpdates({ requests }, this.metadata(), (error, response) =>
        error ? reject(error) : resolve(response.outcomes),
      );
    });
  }

  /** Ends the session the polite way. */
  disconnect(): void {
    this.stream?.end();
    this.stream = null;
  }

  /** Drops the connection as a crashed worker would. */
  vanish(): void {
    this.stream?.cancel();
    this.stream = null;
    this.client.close();
  }
}

/** The platform's error reason for a failed worker call (trailing metadata `x-error-reason`). */
export function workerErrorReason(error: unknown): string | undefined {
  const metadata = (error as Partial<ServiceError>).metadata;
  const value = metadata?.get('x-error-reason')[0];
  return value === undefined ? undefined : String(value);
}

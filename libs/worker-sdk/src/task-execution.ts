import { status as GrpcStatus } from '@grpc/grpc-js';
import type { Message, Part, TaskStateName, workerPb } from '@lib/a2a-protocol';
import { randomUUID } from 'node:crypto';
import type {
  AgentExecutor,
  ArtifactChunk,
  ExecutionEventBus,
  ExecutionUpdate,
  RequestContext,
} from './agent-executor';
import { agentMessage } from './agent-messages';
import { backoffDelayMs, DEFAULT_BACKOFF, pause, type BackoffPolicy } from './backoff';
import {
  endsAssignment,
  finalActionFor,
  type ExecuteOutcome,
  type FinalAction,
  type Published,
  type StopCause,
} from './execution-outcome';
import { executionFailed, inExecutionSpan, type WorkerAgent } from './execution-span';
import { taskOf, toPublishUpdateRequest, userMessageOf } from './proto-codec';
import { classifyUpdateFailure } from './update-failure';
import type { UpdateSender } from './worker-channel';
import type { WorkerLogger } from './worker-logger';
import { WorkerError } from './worker.errors';

/** Longest wait for one `PublishUpdate` answer before it counts as a transient failure. */
const PUBLISH_TIMEOUT_MS = 10_000;
/** Most updates sent together in one `PublishUpdate`. */
const MAX_UPDATES_PER_PUBLISH = 64;

/** An update waiting to be published, with the caller's promise to settle. */
interface QueuedUpdate {
  readonly update: ExecutionUpdate;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

export interface TaskExecutionDeps {
  readonly executor: AgentExecutor;
  readonly sender: UpdateSender;
  readonly logger: WorkerLogger;
  /** The lease time-to-live the platform announced; the lease is presumed lost this long after a renewal. */
  readonly leaseTtlMs: number;
  /** The agent the worker serves (names the assignment's span). */
  readonly agent: WorkerAgent;
  readonly backoff?: BackoffPolicy;
  readonly now?: () => number;
}

/**
 * One assignment: runs the executor, publishes its updates in order under the assignment's lease epoch,
 * retries transient failures until the lease would have expired, and applies the completion rule.
 */
export class TaskExecution {
  readonly taskId: string;
  readonly leaseEpoch: number;
  private readonly contextId: string;
  /** The agent's signal: cancel, lease loss or shutdown. */
  private readonly abort = new AbortController();
  /** Aborted when the lease is gone (lost or abandoned at shutdown): nothing may be published any more. */
  private readonly lease = new AbortController();
  private leaseError: WorkerError | undefined;
  private stopCause: StopCause | undefined;
  /** The last status (or the reply) the platform stored. */
  private lastState: Published | undefined;
  /** The last status (or the reply) queued, stored or not yet: nothing may follow one that ends the assignment. */
  private queuedState: Published | undefined;
  /** Something was queued: a reply may only be the first update. */
  private queuedAny = false;
  private leaseDeadline: number;
  private readonly queue: QueuedUpdate[] = [];
  /** Settles when the queue has been worked off (every queued update stored or refused). */
  private flushing: Promise<void> | null = null;
  private cancelling: Promise<void> = Promise.resolve();
  private readonly now: () => number;
  private readonly backoff: BackoffPolicy;
  private readonly bus: ExecutionEventBus;
  /** The trace the assignment's updates are published in (`traceparent`; empty when there is none). */
  private traceparent = '';

  constructor(
    private readonly assignment: workerPb.Assignment,
    private readonly deps: TaskExecutionDeps,
  ) {
    this.taskId = assignment.taskId;
    this.contextId = assignment.contextId;
    this.leaseEpoch = assignment.leaseEpoch;
    this.now = deps.now ?? Date.now;
    this.backoff = deps.backoff ?? DEFAULT_BACKOFF;
    this.leaseDeadline = this.now() + deps.leaseTtlMs;
    this.bus = this.createBus();
  }

  /** Whether the worker must keep renewing this lease in its heartbeats. */
  get holdsLease(): boolean {
    return !this.leaseError && !this.ended;
  }

  private get ended(): boolean {
    return this.lastState !== undefined && endsAssignment(this.lastState);
  }

  leaseRef(): workerPb.LeaseRef {
    return { taskId: this.taskId, leaseEpoch: this.leaseEpoch };
  }

  /** A heartbeat carrying this lease went out on a live session at `at`. */
  renewed(at: number): void {
    this.leaseDeadline = at + this.deps.leaseTtlMs;
  }

  /** Gives the lease up when it has gone unrenewed for longer than its time-to-live. */
  expireIfStale(at: number): void {
    if (at > this.leaseDeadline) {
      this.loseLease('the lease expired without renewal');
    }
  }

  /** The client asked to cancel: abort the signal and let the executor's `cancelTask` run. */
  requestCancel(): void {
    if (this.stopCause || !this.holdsLease) {
      return;
    }
    this.stopCause = 'cancel';
    this.abort.abort(new WorkerError('TASK_CANCELED', `task ${this.taskId} was cancelled`));
    if (this.deps.executor.cancelTask) {
      this.cancelling = this.runCancelTask();
    }
  }

  /** The platform revoked or fenced the lease: stop without publishing anything. */
  loseLease(why: string): void {
    this.stop(
      'lease-lost',
      new WorkerError('LEASE_LOST', `lost the lease on task ${this.taskId}: ${why}`),
    );
  }

  /** The worker is shutting down: stop without publishing; the platform re-dispatches the task. */
  abandon(): void {
    this.stop('shutdown', new WorkerError('WORKER_SHUTDOWN', 'the worker is shutting down'));
  }

  /** Runs the assignment to its end, in its span; never rejects. */
  run(): Promise<void> {
    return inExecutionSpan(this.assignment, this.deps.agent, async (span, traceparent) => {
      this.traceparent = traceparent;
      const outcome = await this.execute();
      await this.cancelling;
      while (this.flushing) {
        await this.flushing;
      }
      const action = finalActionFor(outcome, this.lastState, this.stopCause);
      if (outcome.kind === 'threw' && action.kind === 'fail') {
        executionFailed(span, outcome.error);
        this.logFailure(outcome.error);
      }
      await this.perform(action);
    });
  }

  private async execute(): Promise<ExecuteOutcome> {
    const task = taskOf(this.assignment);
    const userMessage = userMessageOf(this.assignment, task);
    if (!userMessage) {
      return { kind: 'threw', error: new Error('the assignment carries no user message') };
    }
    const context: RequestContext = {
      taskId: this.taskId,
      contextId: this.contextId,
      userMessage,
      task,
      attempt: this.assignment.attempt,
      mayReply: this.assignment.mayReply,
      signal: this.abort.signal,
    };
    try {
      await this.deps.executor.execute(context, this.bus);
      return { kind: 'returned' };
    } catch (error) {
      return { kind: 'threw', error };
    }
  }

  private async perform(action: FinalAction): Promise<void> {
    try {
      switch (action.kind) {
        case 'none':
          return;
        case 'complete':
          return await this.bus.complete();
        case 'cancel':
          return await this.bus.cancelled();
        case 'fail':
          return await this.bus.fail(action.text);
      }
    } catch (error) {
      if (!(error instanceof WorkerError && error.reason === 'LEASE_LOST')) {
        this.deps.logger.error('could not publish the final status', {
          taskId: this.taskId,
          status: action.kind,
          err: error,
        });
      }
    }
  }

  private async runCancelTask(): Promise<void> {
    try {
      await this.deps.executor.cancelTask?.(this.taskId, this.bus);
    } catch (error) {
      this.deps.logger.warn('cancelTask failed', { taskId: this.taskId, err: error });
    }
  }

  private stop(cause: StopCause, reason: WorkerError): void {
    if (!this.holdsLease) {
      return;
    }
    this.stopCause = cause;
    this.leaseError = reason;
    this.lease.abort(reason);
    if (!this.abort.signal.aborted) {
      this.abort.abort(reason);
    }
    if (cause === 'lease-lost') {
      this.deps.logger.warn('stopped working on a task', {
        taskId: this.taskId,
        reason: reason.message,
      });
    }
  }

  private logFailure(error: unknown): void {
    if (error instanceof WorkerError && error.reason === 'UPDATE_REJECTED') {
      this.deps.logger.error('the platform rejected an update (a bug in the agent)', {
        taskId: this.taskId,
        err: error,
        ...error.metadata,
      });
    } else {
      this.deps.logger.warn('execute failed', { taskId: this.taskId, err: error });
    }
  }

  /**
   * Publishes updates strictly in call order, whether or not the caller awaits each one. Updates queued
   * together (in the same turn of the event loop, or while an earlier publish is under way) go out as one
   * `PublishUpdate`, stored by the platform as one change; each caller's promise settles with it.
   */
  private enqueue(update: ExecutionUpdate): Promise<void> {
    const queued = new Promise<void>((resolve, reject) => {
      const refusal = this.publishRefusal(this.queuedState) ?? this.replyRefusal(update);
      if (refusal) {
        reject(refusal);
        return;
      }
      if (update.kind === 'status') {
        this.queuedState = update.status.state;
      } else if (update.kind === 'reply') {
        this.queuedState = 'reply';
      }
      this.queuedAny = true;
      this.queue.push({ update, resolve, reject });
      this.flushing ??= this.flush();
    });
    // An agent that does not await an update must not crash the worker when it fails; one that awaits
    // still gets the rejection.
    queued.catch(() => undefined);
    return queued;
  }

  private async flush(): Promise<void> {
    // Let the agent queue everything it produces in this turn of the event loop first.
    await new Promise<void>((resolve) => setImmediate(resolve));
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, MAX_UPDATES_PER_PUBLISH);
      try {
        await this.deliver(batch.map((queued) => queued.update));
        batch.forEach((queued) => queued.resolve());
      } catch (error) {
        batch.forEach((queued) => queued.reject(error));
      }
    }
    // In the same turn as the last look at the queue: an update queued from now on starts a new flush.
    this.flushing = null;
  }

  private async deliver(updates: ExecutionUpdate[]): Promise<void> {
    // One id for every retry of these updates: the platform applies them at most once.
    const request = toPublishUpdateRequest(
      this.taskId,
      this.leaseEpoch,
      updates,
      randomUUID(),
      this.traceparent,
    );
    for (let attempt = 0; ; attempt++) {
      this.assertPublishable(this.lastState);
      const remaining = this.leaseDeadline - this.now();
      if (remaining <= 0) {
        this.loseLease('the lease expired while an update was being retried');
        this.assertPublishable(this.lastState);
      }
      const result = await this.deps.sender.send(request, Math.min(PUBLISH_TIMEOUT_MS, remaining));
      if (result.ok) {
        const states = updates.flatMap((u): Published[] =>
          u.kind === 'status' ? [u.status.state] : u.kind === 'reply' ? ['reply'] : [],
        );
        this.lastState = states[states.length - 1] ?? this.lastState;
        return;
      }
      const { failure } = result;
      switch (classifyUpdateFailure(failure)) {
        case 'stop':
          this.loseLease(failure.message);
          break;
        case 'bug':
          throw new WorkerError('UPDATE_REJECTED', failure.message, {
            code: GrpcStatus[failure.code],
            serverReason: failure.reason ?? '',
          });
        case 'retry':
          this.deps.logger.debug('retrying an update', {
            taskId: this.taskId,
            attempt: attempt + 1,
            err: failure.message,
          });
          await pause(backoffDelayMs(attempt, this.backoff), this.lease.signal);
      }
    }
  }

  /** Throws when the assignment can take no more updates after a status `state`. */
  private assertPublishable(state: Published | undefined): void {
    const refusal = this.publishRefusal(state);
    if (refusal) {
      throw refusal;
    }
  }

  /** Why the assignment can take no more updates after a status `state` (or the reply), if it cannot. */
  private publishRefusal(state: Published | undefined): WorkerError | undefined {
    if (this.leaseError) {
      return this.leaseError;
    }
    if (state !== undefined && endsAssignment(state)) {
      return new WorkerError(
        'TASK_ENDED',
        state === 'reply'
          ? `the message of task ${this.taskId} was answered with a reply; this assignment has ended`
          : `task ${this.taskId} is already ${state}; this assignment has ended`,
      );
    }
    return undefined;
  }

  /** Why `update`, a reply, cannot be published: only as the first update, and only when the platform allows it. */
  private replyRefusal(update: ExecutionUpdate): WorkerError | undefined {
    if (update.kind !== 'reply' || (this.assignment.mayReply && !this.queuedAny)) {
      return undefined;
    }
    return new WorkerError(
      'UPDATE_REJECTED',
      this.assignment.mayReply
        ? `task ${this.taskId} has updates already: a reply can only be the first answer`
        : `the message of task ${this.taskId} cannot be answered with a reply (context.mayReply is false)`,
    );
  }

  private createBus(): ExecutionEventBus {
    const message = (content: string | Part[]): Message =>
      agentMessage({ taskId: this.taskId, contextId: this.contextId }, content);
    const status = (state: TaskStateName, content?: string | Part[]): Promise<void> =>
      this.enqueue({
        kind: 'status',
        status: content === undefined ? { state } : { state, message: message(content) },
      });
    return {
      working: (text) => status('TASK_STATE_WORKING', text),
      status,
      inputRequired: (text) => status('TASK_STATE_INPUT_REQUIRED', text),
      complete: (text) => status('TASK_STATE_COMPLETED', text),
      fail: (text) => status('TASK_STATE_FAILED', text),
      cancelled: () => status('TASK_STATE_CANCELED'),
      message: (parts) => this.enqueue({ kind: 'message', message: message(parts) }),
      // A bare Message belongs to the conversation, not to a task.
      reply: (content) =>
        this.enqueue({
          kind: 'reply',
          message: agentMessage({ contextId: this.contextId }, content),
        }),
      artifact: async (chunk: ArtifactChunk) => {
        const { append, lastChunk, artifactId = randomUUID(), ...rest } = chunk;
        await this.enqueue({
          kind: 'artifact',
          artifact: { ...rest, artifactId },
          ...(append === undefined ? {} : { append }),
          ...(lastChunk === undefined ? {} : { lastChunk }),
        });
        return artifactId;
      },
      publish: (update) => this.enqueue(update),
    };
  }
}

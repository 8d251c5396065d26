import { a2aPb } from '@lib/a2a-protocol';
import type { TaskServiceConfig } from '@lib/config';
import {
  isTransientDatabaseError,
  retryDelayMs,
  type EventMetadata,
  type Notice,
} from '@lib/event-store';
import { detached, tracingEnabled, underTraceparent } from '@lib/observability';
import {
  decide,
  foldTask,
  lastUserMessage,
  taskStreamId,
  type PresentTask,
  type TaskAggregate,
  type TaskCommand,
  type TaskEvent,
} from '@lib/task-domain';
import {
  agentIdOf,
  tenantIdOf,
  type AgentRef,
  type TaskId,
  type TaskRef,
  type TenantId,
} from '@lib/tenancy';
import { WorkQueue } from '@lib/work-queue';
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { setTimeout as delay } from 'node:timers/promises';
import { AgentDirectory } from '../agent-directory';
import { Clock } from '../clock';
import { NoticeBus } from '../notice-bus';
import { TASK_SERVICE_CONFIG } from '../tokens';
import { TaskDecisions } from '../write/task-decisions';
import { TaskStore } from '../write/task-store';
import { TaskWriter, type WriteOutcome } from '../write/task-writer';
import { afterRound, openSlots, type ClaimRound } from './claim-round';
import { dispatchInSpan } from './dispatch-span';
import { agentKey, type WorkerSession } from './worker-session';

/**
 * Hands work to the workers connected to this replica. A task accepted here while a local worker of its
 * agent has room is leased in the same append as its acceptance ({@link reserve}, {@link granted}); other
 * queued work is found in `ops.task_work` and leased through the writer. Two replicas never grant the same
 * lease: the grant is decided on the stream's current version, and only one append at that version wins.
 * Whichever replica hosts a worker of the agent picks queued work up, whatever replica accepted it.
 *
 * An agent whose worker policy caps its leases (`maxConcurrency`) never takes the accept-and-lease path: its
 * tasks are queued, and every replica grants their leases only in a transaction holding the agent's lease-slot
 * lock, which counts the leases held and grants no more than the cap leaves ({@link claimUnderCap}).
 */
@Injectable()
export class Dispatcher implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(Dispatcher.name);
  private readonly sessions = new Map<string, Set<WorkerSession>>();
  private readonly running = new Map<string, Promise<void>>();
  private readonly again = new Set<string>();
  /**
   * Agents whose queue the last claim run found empty, with no work notice since: a lease ending there does
   * not look for queued work (the notice of work queued later, or the poll, does).
   */
  private readonly drained = new Set<string>();
  /**
   * The end of the last claim of a capped agent: they run one at a time here, since each holds a pooled
   * connection for its transaction (waiting for the agent's lock too) that the writer's batches need.
   */
  private cappedTurn: Promise<unknown> = Promise.resolve();
  private subscriptions: (() => void)[] = [];
  /** Claims failed because the database was unreachable, since the last claim that worked. */
  private unreachable = 0;

  constructor(
    private readonly writer: TaskWriter,
    private readonly store: TaskStore,
    private readonly tasks: TaskDecisions,
    private readonly work: WorkQueue,
    private readonly bus: NoticeBus,
    private readonly clock: Clock,
    private readonly agents: AgentDirectory,
    @Inject(TASK_SERVICE_CONFIG) private readonly config: TaskServiceConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.subscriptions = [
      this.bus.subscribe((notice) => this.onNotice(notice)),
      // Work notices sent while the LISTEN connection was down are lost: look for queued work at once.
      this.bus.onReconnected(() => this.kickAll()),
      this.writer.onCommitted((task, after, events) => this.committed(task, after, events)),
      // A raised or lifted cap leaves slots for the agent's queued work.
      this.agents.onMaxConcurrencyChanged((agent) => this.wake(agentKey(agent))),
    ];
  }

  private kickAll(): void {
    this.drained.clear();
    for (const key of this.sessions.keys()) {
      this.kickKey(key);
    }
  }

  /** The agents with a worker connected here: those the replica's poll asks about (work-poll.ts). */
  hostedAgents(): AgentRef[] {
    return [...this.sessions.values()].flatMap((set) => {
      const [first] = set;
      return first ? [first.agent] : [];
    });
  }

  /**
   * The poll found queued work for these hosted agents: the fallback for lost notices and failed claims.
   * Only those agents are claimed for (an idle replica sends no claim per agent).
   */
  queuedWorkFound(agents: readonly AgentRef[]): void {
    this.reached();
    agents.forEach((agent) => this.wake(agentKey(agent)));
  }

  /** The poll failed: like a failed claim, retried by the next poll. */
  pollFailed(error: unknown): void {
    this.dispatchFailed(error);
  }

  async onModuleDestroy(): Promise<void> {
    this.subscriptions.forEach((unsubscribe) => unsubscribe());
    await Promise.allSettled(this.running.values());
  }

  attach(session: WorkerSession): void {
    const set = this.sessions.get(session.key) ?? new Set<WorkerSession>();
    set.add(session);
    this.sessions.set(session.key, set);
    this.kickKey(session.key);
  }

  detach(session: WorkerSession): void {
    session.closed = true;
    const set = this.sessions.get(session.key);
    set?.delete(session);
    if (set?.size === 0) {
      this.sessions.delete(session.key);
    }
  }

  /**
   * Sets aside room on the local worker of an agent with the most free capacity, for a lease appended with
   * the task's acceptance; null when no local worker has room, or when the agent's leases are capped (those
   * are granted only under the agent's lease-slot lock). Every reservation ends with {@link granted}.
   */
  reserve(agent: AgentRef): WorkerSession | null {
    return this.agents.capped(agent) ? null : this.reserveRoom(agentKey(agent));
  }

  private reserveRoom(key: string): WorkerSession | null {
    let best: WorkerSession | null = null;
    for (const session of this.sessions.get(key) ?? []) {
      if (session.free > 0 && (!best || session.free > best.free)) {
        best = session;
      }
    }
    if (best) {
      best.reserved += 1;
    }
    return best;
  }

  /**
   * The append a reservation was made for is over: when the task is leased to `session` now, the assignment
   * goes out (in the trace of the active context: the operation that made the append); otherwise (refused,
   * leased elsewhere) the room is given back. An append that failed, or that found its messageId claimed,
   * may have committed the grant on an earlier try whose outcome was lost with its connection (a retry then
   * grants nothing, the lease being there already): the log says whether `session` holds the lease, and an
   * assignment that never went out would leave the task waiting for the rest of its TTL.
   */
  granted(session: WorkerSession, outcome: WriteOutcome | null, task: TaskRef): void {
    session.reserved -= 1;
    const state =
      outcome?.kind === 'written'
        ? outcome.after
        : outcome?.kind === 'unchanged'
          ? outcome.state
          : null;
    if (state && this.holds(session, state)) {
      this.deliver(session, state);
    } else if (outcome === null || outcome.kind === 'duplicate') {
      void this.recheck(session, task);
    } else {
      this.wake(session.key);
    }
  }

  /** The task is leased to `session` and its assignment has not gone out. */
  private holds(session: WorkerSession, state: TaskAggregate): state is PresentTask {
    return (
      state.status === 'present' &&
      state.work === 'leased' &&
      state.lease?.workerId === session.workerId &&
      session.inflight.get(state.task.id) !== state.lease.epoch
    );
  }

  /**
   * Delivers the task if the log shows it leased to `session` (see {@link granted}); else gives room back. The
   * append's outcome was lost with the database, which may still be away (a restart): the log is read again,
   * with backoff, until it answers or the session ends, so that a committed lease is never left to its TTL.
   */
  private async recheck(session: WorkerSession, task: TaskRef): Promise<void> {
    const streamId = taskStreamId(task.tenantId, task.taskId);
    for (let attempt = 0; !session.closed; attempt += 1) {
      let state: TaskAggregate;
      try {
        const histories = await this.store.readStreams([{ tenantId: task.tenantId, streamId }]);
        state = foldTask(histories.get(streamId)?.events ?? []);
      } catch (error) {
        if (!isTransientDatabaseError(error)) {
          this.dispatchFailed(error);
          break;
        }
        await delay(retryDelayMs(attempt), undefined, { ref: false });
        continue;
      }
      if (!session.closed && this.holds(session, state)) {
        this.deliver(session, state);
        return;
      }
      break;
    }
    this.wake(session.key);
  }

  /** A lease of `session` ended (finished, revoked, lost): its capacity is free again. */
  released(session: WorkerSession, taskId: string): void {
    if (session.inflight.delete(taskId) && !this.drained.has(session.key)) {
      this.kickKey(session.key);
    }
  }

  private onNotice(notice: Notice): void {
    switch (notice.k) {
      case 'work':
        this.wake(agentKey({ tenantId: tenantIdOf(notice.t), agentId: agentIdOf(notice.a) }));
        return;
      case 'cancel':
        this.findSession(tenantIdOf(notice.t), notice.id, notice.e, notice.w)?.send({
          cancel: { taskId: notice.id, leaseEpoch: notice.e },
        });
        return;
      case 'revoke': {
        const tenantId = tenantIdOf(notice.t);
        const session = this.findSession(tenantId, notice.id, notice.e, notice.w);
        if (session) {
          session.send({
            leaseRevoked: { taskId: notice.id, leaseEpoch: notice.e, reason: 'lease ended' },
          });
          this.released(session, notice.id);
        } else {
          // Its worker is connected elsewhere, or gone: the slot it held may be for a worker here.
          this.wakeCapped(tenantId);
        }
        return;
      }
      case 'task':
        return;
    }
  }

  /**
   * A change this replica's writer committed. A lease that ended in it while its worker's session is not here
   * (an update sent while the worker reconnects, say) frees a slot of a capped agent that the replicas hosting
   * its workers would not hear of (the change sends a `task` notice only): they are told by a `work` notice.
   * With the session here, {@link released} looks for the next task.
   */
  private committed(task: TaskRef, after: PresentTask, events: readonly TaskEvent[]): void {
    if (after.work !== 'idle' || after.lastLeaseEpoch === 0 || !events.some(endsWork)) {
      return;
    }
    const agent: AgentRef = { tenantId: task.tenantId, agentId: agentIdOf(after.agentId) };
    if (!this.agents.capped(agent)) {
      return;
    }
    const here = this.sessions.get(agentKey(agent)) ?? [];
    if (![...here].some((session) => session.inflight.has(task.taskId))) {
      this.work.announce(agent).catch((error: unknown) => this.dispatchFailed(error));
    }
  }

  /** Looks for queued work of the tenant's capped agents that have workers here. */
  private wakeCapped(tenantId: TenantId): void {
    for (const [key, set] of this.sessions) {
      const [first] = set;
      if (
        first?.agent.tenantId === tenantId &&
        this.agents.capped(first.agent) &&
        !this.drained.has(key)
      ) {
        this.kickKey(key);
      }
    }
  }

  /**
   * The local session running lease `epoch` of a task: the one that reported it in a heartbeat (a worker
   * that reconnected has a new worker id), else the session the lease was granted to.
   */
  private findSession(
    tenantId: TenantId,
    taskId: string,
    epoch: number,
    workerId: string,
  ): WorkerSession | undefined {
    let granted: WorkerSession | undefined;
    for (const set of this.sessions.values()) {
      for (const session of set) {
        if (session.agent.tenantId !== tenantId) {
          continue;
        }
        if (session.inflight.get(taskId) === epoch) {
          return session;
        }
        if (session.workerId === workerId) {
          granted = session;
        }
      }
    }
    return granted;
  }

  /** Work may be queued for the agent's workers here: look, even if the last run found none. */
  private wake(key: string): void {
    this.drained.delete(key);
    this.kickKey(key);
  }

  /** Runs one claim loop per agent at a time; a kick during a run schedules one more run. */
  private kickKey(key: string): void {
    if (!this.sessions.has(key)) {
      return;
    }
    if (this.running.has(key)) {
      this.again.add(key);
      return;
    }
    // Claims serve whatever work is queued, not the call or update that happened to kick them.
    const run = detached(() => this.claimAll(key))
      .then(() => this.reached())
      .catch((error: unknown) => this.dispatchFailed(error))
      .finally(() => {
        this.running.delete(key);
        if (this.again.delete(key)) {
          this.kickKey(key);
        }
      });
    this.running.set(key, run);
  }

  /** The database answered a claim or a poll: the end of an outage, if there was one. */
  private reached(): void {
    if (this.unreachable > 0) {
      this.logger.log(`dispatching again after ${this.unreachable} failed claim(s)`);
      this.unreachable = 0;
    }
  }

  /** A failed claim is retried by the next kick (at the latest the next poll); outages are logged once. */
  private dispatchFailed(error: unknown): void {
    if (!isTransientDatabaseError(error)) {
      this.logger.warn(`dispatch failed: ${String(error)}`);
    } else if (this.unreachable++ === 0) {
      this.logger.warn(`dispatch paused, database unreachable: ${String(error)}`);
    }
  }

  private async claimAll(key: string): Promise<void> {
    for (;;) {
      const sessions = [...(this.sessions.get(key) ?? [])];
      const free = sessions.reduce((sum, s) => sum + s.free, 0);
      const first = sessions[0];
      if (free === 0 || !first) {
        return;
      }
      this.drained.delete(key);
      const limit = await this.agents.maxConcurrency(first.agent);
      const round =
        limit === null
          ? await this.claimQueued(first.agent, free)
          : await this.claimCapped(first.agent, free, limit);
      const next = afterRound(round);
      // A notice arriving during the run asked for another one: the queue is not known to be empty then.
      if (next === 'drained' && !this.again.has(key)) {
        this.drained.add(key);
      }
      if (next !== 'more') {
        return;
      }
    }
  }

  /** Leases queued tasks of an agent without a cap, each through the writer. */
  private async claimQueued(agent: AgentRef, free: number): Promise<ClaimRound> {
    const queued = await this.work.queued(agent, free);
    const leased = await Promise.all(queued.map((taskId) => this.lease(agent, taskId)));
    return { free, asked: free, found: queued.length, leased: leased.filter(Boolean).length };
  }

  /** Leases one queued task to a local worker with room; false when it went elsewhere or there is none. */
  private async lease(agent: AgentRef, taskId: TaskId): Promise<boolean> {
    const session = this.reserveRoom(agentKey(agent));
    if (!session) {
      return false;
    }
    const command = this.grantTo(session);
    let outcome: WriteOutcome | null = null;
    // The grant and the assignment continue the trace of the request the work is for.
    const trace = tracingEnabled()
      ? await this.tasks.requestTrace({ tenantId: agent.tenantId, taskId })
      : undefined;
    try {
      outcome = await underTraceparent(trace, () =>
        this.writer.write({
          tenantId: agent.tenantId,
          taskId,
          decide: (state) => decide(command, state),
          metadata: this.grantMetadata(trace),
          // The queue says the work waits; a cached state from before it was queued would grant nothing.
          reread: true,
        }),
      );
      return outcome.kind === 'written';
    } finally {
      underTraceparent(trace, () =>
        this.granted(session, outcome, { tenantId: agent.tenantId, taskId }),
      );
    }
  }

  /** Claims of capped agents take turns on this replica (see {@link cappedTurn}). */
  private claimCapped(agent: AgentRef, free: number, limit: number): Promise<ClaimRound> {
    const turn = this.cappedTurn.then(() => this.claimUnderCap(agent, free, limit));
    this.cappedTurn = turn.catch(() => undefined);
    return turn;
  }

  /**
   * Leases queued tasks of a capped agent in one transaction that holds the agent's lease-slot lock: it
   * counts the leases held, grants at most the slots the cap leaves, and its commit makes the new leases
   * visible as it frees the lock, so the next holder on any replica counts them. Assignments go out after the
   * commit.
   */
  private async claimUnderCap(agent: AgentRef, free: number, limit: number): Promise<ClaimRound> {
    let grants: Grant[] = [];
    let committed = false;
    try {
      const round = await this.tasks.transact(async (client) => {
        // The transaction is being tried again (a stream moved on): the attempt before granted nothing.
        grants.forEach(({ session }) => (session.reserved -= 1));
        grants = [];
        const slots = await this.work.lockSlots(client, agent, free);
        const asked = openSlots(limit, slots.leased, free);
        const taken = slots.queued.slice(0, asked);
        // In the order the writer's batches lock streams (by stream id, so by task id within a tenant): a
        // batch changing two of them then waits for this transaction rather than deadlocking with it.
        for (const taskId of taken.sort()) {
          const session = this.reserveRoom(agentKey(agent));
          if (!session) {
            break;
          }
          // The grant and the assignment continue the trace of the request the work is for.
          const trace = tracingEnabled()
            ? await this.tasks.requestTrace({ tenantId: agent.tenantId, taskId }, client)
            : undefined;
          const grant: Grant = { session, leased: null, trace };
          grants.push(grant);
          const command = this.grantTo(session);
          const { after, events } = await this.tasks.executeIn(
            client,
            { tenantId: agent.tenantId, taskId },
            (state) => decide(command, state),
            this.grantMetadata(trace),
          );
          if (after.status === 'present' && events.some((e) => e.type === 'TaskLeaseGranted')) {
            grant.leased = after;
          }
        }
        const leased = grants.filter((g) => g.leased).length;
        return { free, asked, found: taken.length, leased };
      });
      committed = true;
      return round;
    } finally {
      for (const { session, leased, trace } of grants) {
        session.reserved -= 1;
        if (committed && leased) {
          underTraceparent(trace, () => this.deliver(session, leased));
        }
      }
    }
  }

  private grantTo(session: WorkerSession): TaskCommand {
    return {
      type: 'GrantLease',
      workerId: session.workerId,
      leaseTtlMs: this.agents.leaseTtlMs(session.agent),
      now: this.clock.now(),
    };
  }

  /** A grant's metadata names the trace of the request the work is for (known with tracing on). */
  private grantMetadata(trace: string | undefined): EventMetadata {
    return {
      actor: { kind: 'system', id: this.config.REPLICA_ID },
      binding: 'dispatcher',
      ...(trace ? { traceparent: trace } : {}),
    };
  }

  private deliver(session: WorkerSession, after: PresentTask): void {
    const lease = after.lease;
    if (!lease) {
      return;
    }
    session.inflight.set(after.task.id, lease.epoch);
    const message = lastUserMessage(after.task);
    // If the worker is gone by now, the lease simply expires and the sweeper re-dispatches the task.
    dispatchInSpan(session, after, (traceparent) =>
      session.send({
        assignment: {
          taskId: after.task.id,
          contextId: after.task.contextId,
          leaseEpoch: lease.epoch,
          leaseExpiresAt: lease.expiresAt,
          task: a2aPb.Task.fromJSON(after.task),
          message: message ? a2aPb.Message.fromJSON(message) : undefined,
          attempt: after.attempt,
          mayReply: after.answer.kind === 'pending',
          traceparent: traceparent ?? '',
        },
      }),
    );
  }
}

/** A lease granted in a transaction not committed yet: its task's state once it is. */
interface Grant {
  session: WorkerSession;
  leased: PresentTask | null;
  /** The trace of the request the work is for (tracing on). */
  trace: string | undefined;
}

/** An event after which a task is idle ends its lease, if it had one. */
function endsWork(event: TaskEvent): boolean {
  return event.type === 'TaskStatusUpdated' || event.type === 'AgentReplied';
}

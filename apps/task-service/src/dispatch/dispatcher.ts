import { a2aPb } from '@lib/a2a-protocol';
import type { TaskServiceConfig } from '@lib/config';
import { isTransientDatabaseError, type Notice } from '@lib/event-store';
import { decide, lastUserMessage, type PresentTask } from '@lib/task-domain';
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { AgentDirectory } from '../agent-directory';
import { Clock } from '../clock';
import { NoticeBus } from '../notice-bus';
import { TASK_SERVICE_CONFIG } from '../tokens';
import { TaskWriter, type WriteOutcome } from '../write/task-writer';
import { WorkQueue } from './work-queue';
import { agentKey, type WorkerSession } from './worker-session';

/**
 * Hands work to the workers connected to this replica. A task accepted here while a local worker of its
 * agent has room is leased in the same append as its acceptance ({@link reserve}, {@link granted}); other
 * queued work is found in `ops.task_work` and leased through the writer. Two replicas never grant the same
 * lease: the grant is decided on the stream's current version, and only one append at that version wins.
 * Whichever replica hosts a worker of the agent picks queued work up, whatever replica accepted it.
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
  private timer: NodeJS.Timeout | null = null;
  private unsubscribe: () => void = () => undefined;
  private unsubscribeReconnect: () => void = () => undefined;
  /** Claims failed because the database was unreachable, since the last claim that worked. */
  private unreachable = 0;

  constructor(
    private readonly writer: TaskWriter,
    private readonly work: WorkQueue,
    private readonly bus: NoticeBus,
    private readonly clock: Clock,
    private readonly agents: AgentDirectory,
    @Inject(TASK_SERVICE_CONFIG) private readonly config: TaskServiceConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.unsubscribe = this.bus.subscribe((notice) => this.onNotice(notice));
    // Work notices sent while the LISTEN connection was down are lost: look for queued work at once.
    this.unsubscribeReconnect = this.bus.onReconnected(() => this.kickAll());
    this.timer = setInterval(() => this.kickAll(), this.config.SWEEP_INTERVAL_MS);
    this.timer.unref();
  }

  private kickAll(): void {
    this.drained.clear();
    for (const key of this.sessions.keys()) {
      this.kickKey(key);
    }
  }

  async onModuleDestroy(): Promise<void> {
    this.unsubscribe();
    this.unsubscribeReconnect();
    if (this.timer) {
      clearInterval(this.timer);
    }
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
   * Sets aside room on the local worker of an agent with the most free capacity, for a lease about to be
   * appended; null when no local worker has room. Every reservation ends with {@link granted}.
   */
  reserve(tenantId: string, agentId: string): WorkerSession | null {
    let best: WorkerSession | null = null;
    for (const session of this.sessions.get(agentKey(tenantId, agentId)) ?? []) {
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
   * The append a reservation was made for is over: when it leased the task to `session`, the assignment goes
   * out; otherwise (refused, failed, leased elsewhere) the room is given back.
   */
  granted(session: WorkerSession, outcome: WriteOutcome | null): void {
    session.reserved -= 1;
    const leased =
      outcome?.kind === 'written' && outcome.events.some((e) => e.type === 'TaskLeaseGranted')
        ? outcome.after
        : null;
    if (leased?.lease?.workerId === session.workerId) {
      this.deliver(session, leased);
    } else {
      this.drained.delete(session.key);
      this.kickKey(session.key);
    }
  }

  /** A lease of `session` ended (finished, revoked, lost): its capacity is free again. */
  released(session: WorkerSession, taskId: string): void {
    if (session.inflight.delete(taskId) && !this.drained.has(session.key)) {
      this.kickKey(session.key);
    }
  }

  private onNotice(notice: Notice): void {
    switch (notice.k) {
      case 'work': {
        const key = agentKey(notice.t, notice.a);
        this.drained.delete(key);
        this.kickKey(key);
        return;
      }
      case 'cancel':
        this.findSession(notice.t, notice.id, notice.e, notice.w)?.send({
          cancel: { taskId: notice.id, leaseEpoch: notice.e },
        });
        return;
      case 'revoke': {
        const session = this.findSession(notice.t, notice.id, notice.e, notice.w);
        if (session) {
          session.send({
            leaseRevoked: { taskId: notice.id, leaseEpoch: notice.e, reason: 'lease ended' },
          });
          this.released(session, notice.id);
        }
        return;
      }
      case 'task':
        return;
    }
  }

  /**
   * The local session running lease `epoch` of a task: the one that reported it in a heartbeat (a worker
   * that reconnected has a new worker id), else the session the lease was granted to.
   */
  private findSession(
    tenantId: string,
    taskId: string,
    epoch: number,
    workerId: string,
  ): WorkerSession | undefined {
    let granted: WorkerSession | undefined;
    for (const set of this.sessions.values()) {
      for (const session of set) {
        if (session.tenantId !== tenantId) {
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

  /** Runs one claim loop per agent at a time; a kick during a run schedules one more run. */
  private kickKey(key: string): void {
    if (!this.sessions.has(key)) {
      return;
    }
    if (this.running.has(key)) {
      this.again.add(key);
      return;
    }
    const run = this.claimAll(key)
      .then(() => {
        if (this.unreachable > 0) {
          this.logger.log(`dispatching again after ${this.unreachable} failed claim(s)`);
          this.unreachable = 0;
        }
      })
      .catch((error: unknown) => this.claimFailed(error))
      .finally(() => {
        this.running.delete(key);
        if (this.again.delete(key)) {
          this.kickKey(key);
        }
      });
    this.running.set(key, run);
  }

  /** A failed claim is retried by the next kick (at the latest the next poll); outages are logged once. */
  private claimFailed(error: unknown): void {
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
      const queued = await this.work.queued(first.tenantId, first.agentId, free);
      const leased = await Promise.all(
        queued.map((taskId) => this.lease(first.tenantId, first.agentId, taskId)),
      );
      if (queued.length < free) {
        // Every task queued when the query ran was tried. A notice arriving meanwhile asked for a new run.
        if (!this.again.has(key)) {
          this.drained.add(key);
        }
        return;
      }
      if (!leased.some(Boolean)) {
        return;
      }
    }
  }

  /** Leases one queued task to a local worker with room; false when it went elsewhere or there is none. */
  private async lease(tenantId: string, agentId: string, taskId: string): Promise<boolean> {
    const session = this.reserve(tenantId, agentId);
    if (!session) {
      return false;
    }
    const command = {
      type: 'GrantLease' as const,
      workerId: session.workerId,
      leaseTtlMs: this.agents.leaseTtlMs(tenantId, agentId),
      now: this.clock.now(),
    };
    let outcome: WriteOutcome | null = null;
    try {
      outcome = await this.writer.write({
        tenantId,
        taskId,
        decide: (state) => decide(command, state),
        metadata: { actor: { kind: 'system', id: this.config.REPLICA_ID }, binding: 'dispatcher' },
        // The queue says the work waits; a cached state from before it was queued would grant nothing.
        reread: true,
      });
      return outcome.kind === 'written';
    } finally {
      this.granted(session, outcome);
    }
  }

  private deliver(session: WorkerSession, after: PresentTask): void {
    const lease = after.lease;
    if (!lease) {
      return;
    }
    session.inflight.set(after.task.id, lease.epoch);
    const message = lastUserMessage(after.task);
    // If the worker is gone by now, the lease simply expires and the sweeper re-dispatches the task.
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
      },
    });
  }
}

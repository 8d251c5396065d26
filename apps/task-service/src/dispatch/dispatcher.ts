import { a2aPb, type Message } from '@lib/a2a-protocol';
import type { TaskServiceConfig } from '@lib/config';
import { isTransientDatabaseError, type Notice } from '@lib/event-store';
import { decide, lastUserMessage } from '@lib/task-domain';
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import type { Pool } from 'pg';
import { NoticeBus } from '../notice-bus';
import { TaskRepository } from '../task.repository';
import { PG_POOL, TASK_SERVICE_CONFIG } from '../tokens';
import { agentKey, type WorkerSession } from './worker-session';

interface Grant {
  session: WorkerSession;
  taskId: string;
  contextId: string;
  epoch: number;
  expiresAt: string;
  attempt: number;
  task: a2aPb.Task;
  message: Message | undefined;
}

/**
 * Hands queued work to the workers connected to this replica. Work rows are claimed with
 * `FOR UPDATE SKIP LOCKED`, so replicas never grant the same task twice; whichever replica hosts a worker
 * of the agent picks the work up, whatever replica accepted the message.
 */
@Injectable()
export class Dispatcher implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(Dispatcher.name);
  private readonly sessions = new Map<string, Set<WorkerSession>>();
  private readonly running = new Map<string, Promise<void>>();
  private readonly again = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private unsubscribe: () => void = () => undefined;
  private unsubscribeReconnect: () => void = () => undefined;
  /** Claims failed because the database was unreachable, since the last claim that worked. */
  private unreachable = 0;

  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly tasks: TaskRepository,
    private readonly bus: NoticeBus,
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

  /** A lease of `session` ended (finished, revoked, lost): its capacity is free again. */
  released(session: WorkerSession, taskId: string): void {
    if (session.inflight.delete(taskId)) {
      this.kickKey(session.key);
    }
  }

  private onNotice(notice: Notice): void {
    switch (notice.k) {
      case 'work':
        this.kickKey(agentKey(notice.t, notice.a));
        return;
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
      const grants = await this.claim(first.tenantId, first.agentId, sessions, free);
      for (const grant of grants) {
        this.deliver(grant);
      }
      if (grants.length < free) {
        return;
      }
    }
  }

  private async claim(
    tenantId: string,
    agentId: string,
    sessions: WorkerSession[],
    limit: number,
  ): Promise<Grant[]> {
    return this.tasks.transact(async (client) => {
      const queued = await client.query<{ task_id: string }>(
        `SELECT task_id FROM ops.task_work
          WHERE tenant_id = $1 AND agent_id = $2 AND status = 'queued'
          ORDER BY queued_at LIMIT $3 FOR UPDATE SKIP LOCKED`,
        [tenantId, agentId, limit],
      );
      const grants: Grant[] = [];
      const reserved = new Map<WorkerSession, number>();
      for (const { task_id: taskId } of queued.rows) {
        const session = sessions
          .filter((s) => s.free - (reserved.get(s) ?? 0) > 0)
          .sort((a, b) => b.free - (reserved.get(b) ?? 0) - (a.free - (reserved.get(a) ?? 0)))[0];
        if (!session) {
          break;
        }
        const command = {
          type: 'GrantLease' as const,
          workerId: session.workerId,
          leaseTtlMs: this.config.LEASE_TTL_MS,
          now: new Date(),
        };
        const { after } = await this.tasks.executeIn(
          client,
          tenantId,
          taskId,
          (state) => decide(command, state),
          { actor: { kind: 'system', id: this.config.REPLICA_ID }, binding: 'dispatcher' },
        );
        if (
          after.status !== 'present' ||
          !after.lease ||
          after.lease.workerId !== session.workerId
        ) {
          continue;
        }
        reserved.set(session, (reserved.get(session) ?? 0) + 1);
        grants.push({
          session,
          taskId,
          contextId: after.task.contextId,
          epoch: after.lease.epoch,
          expiresAt: after.lease.expiresAt,
          attempt: after.attempt,
          task: a2aPb.Task.fromJSON(after.task),
          message: lastUserMessage(after.task),
        });
      }
      return grants;
    });
  }

  private deliver(grant: Grant): void {
    grant.session.inflight.set(grant.taskId, grant.epoch);
    // If the worker is gone by now, the lease simply expires and the sweeper re-dispatches the task.
    grant.session.send({
      assignment: {
        taskId: grant.taskId,
        contextId: grant.contextId,
        leaseEpoch: grant.epoch,
        leaseExpiresAt: grant.expiresAt,
        task: grant.task,
        message: grant.message ? a2aPb.Message.fromJSON(grant.message) : undefined,
        attempt: grant.attempt,
      },
    });
  }
}

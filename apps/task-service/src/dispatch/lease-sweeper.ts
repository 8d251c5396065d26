import type { TaskServiceConfig } from '@lib/config';
import { isTransientDatabaseError } from '@lib/event-store';
import { metrics } from '@lib/observability';
import { decide, type TaskCommand } from '@lib/task-domain';
import { WorkQueue, type Overdue } from '@lib/work-queue';
import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { AgentDirectory } from '../agent-directory';
import { TASK_SERVICE_CONFIG } from '../tokens';
import { TaskDecisions } from '../write/task-decisions';

const BATCH = 100;

/**
 * Ends leases whose worker stopped heart-beating (re-dispatch or fail, per the agent's policy) and cancels
 * tasks whose worker did not confirm a cancel before the deadline. Runs on every replica, when the replica's
 * poll (work-poll.ts) finds a lease or a cancel deadline overdue; work rows are locked through the
 * {@link WorkQueue} with `FOR UPDATE SKIP LOCKED`, and each decision re-checks the lease epoch, so replicas
 * never double up.
 *
 * After the database was unreachable, no lease is expired for one lease TTL: heartbeats could not renew
 * leases meanwhile, so an overdue lease then says nothing about its worker. Live workers renew theirs within
 * a heartbeat or two of the return; only the leases of workers that really went away expire after that.
 */
@Injectable()
export class LeaseSweeper implements OnModuleDestroy {
  private readonly logger = new Logger(LeaseSweeper.name);
  private sweeping: Promise<void> | null = null;
  /** The database failed the last sweep: the next successful one starts the grace period. */
  private databaseAway = false;
  /** Until when (epoch ms) overdue leases are left alone, after the database came back. */
  private expiryHeldUntil = 0;

  constructor(
    private readonly tasks: TaskDecisions,
    private readonly work: WorkQueue,
    private readonly agents: AgentDirectory,
    @Inject(TASK_SERVICE_CONFIG) private readonly config: TaskServiceConfig,
  ) {}

  async onModuleDestroy(): Promise<void> {
    await this.sweeping;
  }

  /**
   * The poll reached the database and found `overdue`: a pass starts when there is something to do and no
   * pass is running (a pass still running will not miss it: it works until nothing overdue is left, or a
   * batch is done and the next poll finds the rest).
   */
  polled(overdue: Overdue): void {
    this.databaseReachable();
    if (overdue.leases || overdue.cancels) {
      this.sweeping ??= this.sweep(overdue)
        .catch((error: unknown) => this.sweepFailed(error))
        .finally(() => {
          this.sweeping = null;
        });
    }
  }

  /** One pass over what the poll found overdue. */
  private async sweep(overdue: Overdue): Promise<void> {
    // Right after an outage (seen, or still going on) overdue leases prove nothing: they wait.
    const expiring = overdue.leases && !this.databaseAway && Date.now() >= this.expiryHeldUntil;
    for (let i = 0; i < BATCH && expiring; i++) {
      if (!(await this.expireOne())) {
        break;
      }
    }
    for (let i = 0; i < BATCH && overdue.cancels; i++) {
      if (!(await this.enforceOneCancel())) {
        break;
      }
    }
  }

  private databaseReachable(): void {
    if (this.databaseAway) {
      this.databaseAway = false;
      this.expiryHeldUntil = Date.now() + this.config.LEASE_TTL_MS;
      this.logger.log(
        `database reachable again; leases are not expired for the next ${this.config.LEASE_TTL_MS} ms while workers renew them`,
      );
    }
  }

  /** A sweep, or the poll before it, failed: after an outage, expiries wait (see the class). */
  sweepFailed(error: unknown): void {
    if (!isTransientDatabaseError(error)) {
      this.logger.warn(`sweep failed: ${String(error)}`);
      return;
    }
    if (!this.databaseAway) {
      this.databaseAway = true;
      this.logger.warn(`database unreachable, lease sweeping paused: ${String(error)}`);
    }
  }

  /** Expires one overdue lease; false when none is left. */
  private async expireOne(): Promise<boolean> {
    return this.tasks.transact(async (client) => {
      const due = await this.work.lockOverdueLease(client);
      if (!due) {
        return false;
      }
      const command: TaskCommand = {
        type: 'ExpireLease',
        leaseEpoch: due.leaseEpoch,
        policy: await this.agents.leasePolicy({
          tenantId: due.task.tenantId,
          agentId: due.agentId,
        }),
        messageId: randomUUID(),
        now: new Date(),
      };
      const { events } = await this.tasks.executeIn(
        client,
        due.task,
        (state) => decide(command, state),
        { actor: { kind: 'system', id: this.config.REPLICA_ID }, binding: 'lease-sweeper' },
      );
      if (events.length > 0) {
        // The expiry alone requeues the task; with a status change it ended (failed, or canceled).
        metrics.leaseExpiries.inc({ outcome: events.length === 1 ? 'requeued' : 'ended' });
      }
      // Nothing changed (a clock edge): stop this pass rather than pick the same row again.
      return events.length > 0;
    });
  }

  private async enforceOneCancel(): Promise<boolean> {
    return this.tasks.transact(async (client) => {
      const task = await this.work.lockOverdueCancel(client);
      if (!task) {
        return false;
      }
      const command: TaskCommand = { type: 'EnforceCancelDeadline', now: new Date() };
      const { events } = await this.tasks.executeIn(
        client,
        task,
        (state) => decide(command, state),
        { actor: { kind: 'system', id: this.config.REPLICA_ID }, binding: 'lease-sweeper' },
      );
      // Nothing changed (a clock edge): stop this pass rather than pick the same row again.
      return events.length > 0;
    });
  }
}

import type { TaskServiceConfig } from '@lib/config';
import { pingPostgres } from '@lib/event-store';
import { lifecycle, metrics, OpsRegistrations } from '@lib/observability';
import { WorkQueue } from '@lib/work-queue';
import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { GrpcServers } from './grpc/grpc-servers';
import { WorkerServiceBinding } from './grpc/worker-service.binding';
import { TaskViews } from './queries/task-views';
import { PG_POOL, TASK_SERVICE_CONFIG } from './tokens';

/**
 * What the task-service tells the ops listener (docs/deploy.md): Postgres as a shared dependency (never a
 * reason to be unready); on drain the
 * command server takes no new call and lets those in flight finish, and the workers' leases are handed back
 * before their sessions end (they reconnect to another replica with their running tasks); at each scrape,
 * the tasks by state, the work queue and the connected workers.
 */
@Injectable()
export class TaskServiceOps extends OpsRegistrations {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly servers: GrpcServers,
    private readonly workers: WorkerServiceBinding,
    private readonly work: WorkQueue,
    private readonly views: TaskViews,
    @Inject(TASK_SERVICE_CONFIG) private readonly config: TaskServiceConfig,
  ) {
    super();
  }

  protected register(): (() => void)[] {
    return [
      lifecycle.addDependency('postgres', 'task-service', () => pingPostgres(this.pool)),
      lifecycle.addDrainStep('task-service-commands', (deadline) =>
        this.servers.stopCommands(deadline),
      ),
      lifecycle.addDrainStep('task-service-workers', async (deadline) => {
        // No new session first, so that the workers hung up next reconnect to another replica.
        const stopped = this.servers.stopWorkers(deadline);
        // Two heartbeats: time enough for a worker to reconnect and renew what it still runs.
        await this.workers.handBack(2 * this.config.HEARTBEAT_INTERVAL_MS);
        await stopped;
      }),
      metrics.addSource(async () => {
        const { queued, leased, oldestQueuedSeconds } = await this.work.depth();
        metrics.workQueued.set(queued);
        metrics.workQueuedOldest.set(oldestQueuedSeconds);
        metrics.leasesHeld.set(leased);
      }),
      metrics.addSource(async () => {
        const counts = await this.views.countByState();
        metrics.tasks.reset();
        counts.forEach((tasks, state) => metrics.tasks.set({ state }, tasks));
      }),
      metrics.addSource(() => {
        metrics.workerSessions.set(this.workers.sessions);
        return Promise.resolve();
      }),
    ];
  }
}

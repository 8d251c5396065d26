import type { workerPb } from '@lib/a2a-protocol';
import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { PG_POOL } from '../tokens';

/**
 * `ops.task_work`, the queue of work for agent workers, as the dispatcher and the worker gateway use it. Rows
 * are written with the task's events (the writer's batch); here they are only found and their leases renewed.
 */
@Injectable()
export class WorkQueue {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  /**
   * The oldest queued tasks of an agent. Not locked: two replicas may pick the same task, and the lease goes
   * to whichever appends first (the other's decision, re-taken on the moved stream, grants nothing).
   */
  async queued(tenantId: string, agentId: string, limit: number): Promise<string[]> {
    const result = await this.pool.query<{ task_id: string }>({
      name: 'work-queue.queued',
      text: `SELECT task_id FROM ops.task_work
              WHERE tenant_id = $1 AND agent_id = $2 AND status = 'queued'
              ORDER BY queued_at LIMIT $3`,
      values: [tenantId, agentId, limit],
    });
    return result.rows.map((row) => row.task_id);
  }

  /** Extends the leases a worker still holds by `ttlMs`; returns the task ids whose lease was current. */
  async renew(
    tenantId: string,
    agentId: string,
    leases: readonly workerPb.LeaseRef[],
    ttlMs: number,
  ): Promise<Set<string>> {
    const renewed = await this.pool.query<{ task_id: string }>({
      name: 'work-queue.renew',
      text: `UPDATE ops.task_work w
                SET lease_expires_at = now() + make_interval(secs => $4::double precision / 1000)
               FROM unnest($3::text[], $5::bigint[]) AS l(task_id, lease_epoch)
              WHERE w.tenant_id = $1 AND w.agent_id = $2 AND w.task_id = l.task_id
                AND w.lease_epoch = l.lease_epoch AND w.status = 'leased'
            RETURNING w.task_id`,
      values: [
        tenantId,
        agentId,
        leases.map((l) => l.taskId),
        ttlMs,
        leases.map((l) => l.leaseEpoch),
      ],
    });
    return new Set(renewed.rows.map((row) => row.task_id));
  }
}

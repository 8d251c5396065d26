import { NOTICE_CHANNEL, type Notice } from '@lib/event-store';
import {
  agentIdOf,
  taskIdOf,
  tenantIdOf,
  type AgentId,
  type AgentRef,
  type TaskId,
  type TaskRef,
  type TenantId,
} from '@lib/ids';
import type { Pool, PoolClient } from 'pg';

/** A lease a worker holds: the task, and the epoch of the lease on it. */
export interface LeaseRef {
  taskId: string;
  leaseEpoch: number;
}

/** A lease as operators see it: the task, the lease's epoch, and when it runs out unless renewed. */
export interface HeldLease extends LeaseRef {
  expiresAt: string;
}

/** What one poll of the queue found ({@link WorkQueue.scan}). */
export interface WorkScan {
  /** Of the agents asked about, those with queued work. */
  queued: AgentRef[];
  /** Whether any lease is overdue, and whether any cancel deadline has passed. */
  overdue: Overdue;
}

/** Whether the lease sweeper has work: an overdue lease, a passed cancel deadline. */
export interface Overdue {
  leases: boolean;
  cancels: boolean;
}

/** A task's row in `ops.task_work`: queued, or leased to a worker session. */
export interface TaskWork {
  status: 'queued' | 'leased';
  attempt: number;
  queuedAt: string;
  leaseEpoch: number | null;
  workerId: string | null;
  leaseExpiresAt: string | null;
  cancelDeadline: string | null;
}

/**
 * `ops.task_work`, the queue of work for agent workers; nothing else reads it. Rows are written with the
 * task's events (the writer's batch); here they are found, counted, locked for a sweep, their leases renewed
 * (the task-service's dispatcher, WorkerService binding and lease sweeper), and shown to operators (the admin
 * API).
 */
export class WorkQueue {
  constructor(private readonly pool: Pool) {}

  /**
   * The oldest queued tasks of an agent. Not locked: two replicas may pick the same task, and the lease goes
   * to whichever appends first (the other's decision, re-taken on the moved stream, grants nothing).
   */
  async queued(agent: AgentRef, limit: number): Promise<TaskId[]> {
    const result = await this.pool.query<{ task_id: string }>({
      name: 'work-queue.queued',
      text: `SELECT task_id FROM ops.task_work
              WHERE tenant_id = $1 AND agent_id = $2 AND status = 'queued'
              ORDER BY queued_at LIMIT $3`,
      values: [agent.tenantId, agent.agentId, limit],
    });
    return result.rows.map((row) => taskIdOf(row.task_id));
  }

  /**
   * What an idle replica looks for once per poll, in one statement without locks or a transaction: which of
   * `agents` (those it hosts) have queued work (one index probe each, however many it hosts), whether any
   * lease is overdue, and whether any cancel deadline has passed. Claims and the sweep's locking reads run
   * only where this finds work.
   */
  async scan(agents: readonly AgentRef[]): Promise<WorkScan> {
    const result = await this.pool.query<{
      leases: boolean;
      cancels: boolean;
      tenant_ids: string[] | null;
      agent_ids: string[] | null;
    }>({
      name: 'work-queue.scan',
      text: `SELECT EXISTS (SELECT 1 FROM ops.task_work
                             WHERE status = 'leased' AND lease_expires_at < now()) AS leases,
                    EXISTS (SELECT 1 FROM ops.task_work WHERE cancel_deadline < now()) AS cancels,
                    q.tenant_ids, q.agent_ids
               FROM (SELECT array_agg(a.tenant_id) AS tenant_ids, array_agg(a.agent_id) AS agent_ids
                       FROM unnest($1::text[], $2::text[]) AS a(tenant_id, agent_id)
                      WHERE EXISTS (SELECT 1 FROM ops.task_work w
                                     WHERE w.tenant_id = a.tenant_id AND w.agent_id = a.agent_id
                                       AND w.status = 'queued')) AS q`,
      values: [agents.map((a) => a.tenantId), agents.map((a) => a.agentId)],
    });
    const row = result.rows[0];
    const agentIds = row?.agent_ids ?? [];
    return {
      queued: (row?.tenant_ids ?? []).flatMap((tenantId, i) => {
        const agentId = agentIds[i];
        return agentId === undefined
          ? []
          : [{ tenantId: tenantIdOf(tenantId), agentId: agentIdOf(agentId) }];
      }),
      overdue: { leases: row?.leases ?? false, cancels: row?.cancels ?? false },
    };
  }

  /**
   * Takes the agent's lease-slot lock for the rest of `client`'s transaction, then reads how many leases the
   * agent's tasks hold and its oldest queued tasks (at most `limit`). Every grant of a lease of an agent with
   * a lease cap is made in such a transaction, so the count includes every lease committed before the lock
   * was free, and none is granted until this transaction ends.
   */
  async lockSlots(
    client: PoolClient,
    agent: AgentRef,
    limit: number,
  ): Promise<{ leased: number; queued: TaskId[] }> {
    // A transaction-scoped advisory lock, keyed like the relay's (ids contain no '/'). It is a statement of its
    // own: a statement reads from a snapshot taken when it starts, which would miss leases committed while it
    // waited for the lock.
    await client.query({
      name: 'work-queue.lock-slots',
      text: `SELECT pg_advisory_xact_lock(hashtextextended('lease-slots:' || $1 || '/' || $2, 0))`,
      values: [agent.tenantId, agent.agentId],
    });
    const result = await client.query<{ leased: number; queued: string[] }>({
      name: 'work-queue.slots',
      text: `SELECT (SELECT count(*)::int FROM ops.task_work
                      WHERE tenant_id = $1 AND agent_id = $2 AND status = 'leased') AS leased,
                    ARRAY(SELECT task_id FROM ops.task_work
                           WHERE tenant_id = $1 AND agent_id = $2 AND status = 'queued'
                           ORDER BY queued_at LIMIT $3) AS queued`,
      values: [agent.tenantId, agent.agentId, limit],
    });
    const row = result.rows[0];
    return { leased: row?.leased ?? 0, queued: (row?.queued ?? []).map(taskIdOf) };
  }

  /**
   * Locks the lease that has been overdue longest for the rest of `client`'s transaction, skipping rows other
   * replicas' sweepers hold; null when no lease is overdue (or all are taken).
   */
  async lockOverdueLease(
    client: PoolClient,
  ): Promise<{ task: TaskRef; agentId: AgentId; leaseEpoch: number } | null> {
    const result = await client.query<{
      tenant_id: string;
      task_id: string;
      agent_id: string;
      lease_epoch: string;
    }>(
      `SELECT tenant_id, task_id, agent_id, lease_epoch FROM ops.task_work
        WHERE status = 'leased' AND lease_expires_at < now()
        ORDER BY lease_expires_at LIMIT 1 FOR UPDATE SKIP LOCKED`,
    );
    const row = result.rows[0];
    return row
      ? {
          task: { tenantId: tenantIdOf(row.tenant_id), taskId: taskIdOf(row.task_id) },
          agentId: agentIdOf(row.agent_id),
          leaseEpoch: Number(row.lease_epoch),
        }
      : null;
  }

  /**
   * Locks, like {@link lockOverdueLease}, the task whose cancel deadline passed longest ago; null when none
   * did.
   */
  async lockOverdueCancel(client: PoolClient): Promise<TaskRef | null> {
    const result = await client.query<{ tenant_id: string; task_id: string }>(
      `SELECT tenant_id, task_id FROM ops.task_work
        WHERE cancel_deadline < now() ORDER BY cancel_deadline LIMIT 1 FOR UPDATE SKIP LOCKED`,
    );
    const row = result.rows[0];
    return row ? { tenantId: tenantIdOf(row.tenant_id), taskId: taskIdOf(row.task_id) } : null;
  }

  /** Wakes the dispatchers of every replica hosting a worker of the agent (a `work` notice). */
  async announce(agent: AgentRef): Promise<void> {
    const notice: Notice = { k: 'work', t: agent.tenantId, a: agent.agentId };
    await this.pool.query({
      name: 'work-queue.announce',
      text: 'SELECT pg_notify($1, $2)',
      values: [NOTICE_CHANNEL, JSON.stringify(notice)],
    });
  }

  /** Extends the leases a worker still holds by `ttlMs`; returns the task ids whose lease was current. */
  async renew(agent: AgentRef, leases: readonly LeaseRef[], ttlMs: number): Promise<Set<string>> {
    const renewed = await this.pool.query<{ task_id: string }>({
      name: 'work-queue.renew',
      text: `UPDATE ops.task_work w
                SET lease_expires_at = now() + make_interval(secs => $4::double precision / 1000)
               FROM unnest($3::text[], $5::bigint[]) AS l(task_id, lease_epoch)
              WHERE w.tenant_id = $1 AND w.agent_id = $2 AND w.task_id = l.task_id
                AND w.lease_epoch = l.lease_epoch AND w.status = 'leased'
            RETURNING w.task_id`,
      values: [
        agent.tenantId,
        agent.agentId,
        leases.map((l) => l.taskId),
        ttlMs,
        leases.map((l) => l.leaseEpoch),
      ],
    });
    return new Set(renewed.rows.map((row) => row.task_id));
  }

  /**
   * A draining replica hands its workers' leases back: each lease still current expires within `windowMs`
   * unless its worker renews it (it reconnects to another replica and says which leases it holds); one that
   * is not renewed is expired by any replica's sweeper and the task dispatched again, without waiting for
   * the rest of its TTL. Returns how many leases were shortened.
   */
  async handBack(
    leases: readonly { agent: AgentRef; taskId: string; leaseEpoch: number }[],
    windowMs: number,
  ): Promise<number> {
    if (leases.length === 0) {
      return 0;
    }
    const result = await this.pool.query({
      name: 'work-queue.hand-back',
      text: `UPDATE ops.task_work w
                SET lease_expires_at = LEAST(w.lease_expires_at,
                                             now() + make_interval(secs => $4::double precision / 1000))
               FROM unnest($1::text[], $2::text[], $3::bigint[]) AS l(tenant_id, task_id, lease_epoch)
              WHERE w.tenant_id = l.tenant_id AND w.task_id = l.task_id
                AND w.lease_epoch = l.lease_epoch AND w.status = 'leased'`,
      values: [
        leases.map((l) => l.agent.tenantId),
        leases.map((l) => l.taskId),
        leases.map((l) => l.leaseEpoch),
        windowMs,
      ],
    });
    return result.rowCount ?? 0;
  }

  /** The work of every tenant: tasks waiting for a worker, and tasks leased to one (for metrics). */
  async depth(): Promise<{ queued: number; leased: number; oldestQueuedSeconds: number }> {
    const result = await this.pool.query<{
      queued: number;
      leased: number;
      oldest_queued_s: number;
    }>({
      name: 'work-queue.depth',
      text: `SELECT count(*) FILTER (WHERE status = 'queued')::int AS queued,
                    count(*) FILTER (WHERE status = 'leased')::int AS leased,
                    COALESCE(EXTRACT(EPOCH FROM now() - min(queued_at) FILTER (WHERE status = 'queued')),
                             0)::float8 AS oldest_queued_s
               FROM ops.task_work`,
    });
    const row = result.rows[0];
    return {
      queued: row?.queued ?? 0,
      leased: row?.leased ?? 0,
      oldestQueuedSeconds: Math.max(0, row?.oldest_queued_s ?? 0),
    };
  }

  /** The leases the tenant's worker sessions hold (of one agent, when given), by session, soonest to expire first. */
  async leasesBySession(tenantId: TenantId, agentId?: string): Promise<Map<string, HeldLease[]>> {
    const result = await this.pool.query<{
      worker_id: string;
      task_id: string;
      lease_epoch: string;
      lease_expires_at: Date;
    }>({
      name: 'work-queue.leases-by-session',
      text: `SELECT worker_id, task_id, lease_epoch, lease_expires_at
               FROM ops.task_work
              WHERE tenant_id = $1 AND status = 'leased' AND ($2::text IS NULL OR agent_id = $2)
              ORDER BY worker_id, lease_expires_at, task_id`,
      values: [tenantId, agentId ?? null],
    });
    const bySession = new Map<string, HeldLease[]>();
    for (const row of result.rows) {
      const leases = bySession.get(row.worker_id) ?? [];
      leases.push({
        taskId: row.task_id,
        leaseEpoch: Number(row.lease_epoch),
        expiresAt: row.lease_expires_at.toISOString(),
      });
      bySession.set(row.worker_id, leases);
    }
    return bySession;
  }

  /** The task's work: queued, leased, or null when it waits for nothing (idle, interrupted or terminal). */
  async workOf(task: TaskRef): Promise<TaskWork | null> {
    const result = await this.pool.query<{
      status: 'queued' | 'leased';
      attempt: number;
      queued_at: Date;
      lease_epoch: string | null;
      worker_id: string | null;
      lease_expires_at: Date | null;
      cancel_deadline: Date | null;
    }>({
      name: 'work-queue.work-of',
      text: `SELECT status, attempt, queued_at, lease_epoch, worker_id, lease_expires_at, cancel_deadline
               FROM ops.task_work
              WHERE tenant_id = $1 AND task_id = $2`,
      values: [task.tenantId, task.taskId],
    });
    const row = result.rows[0];
    return row
      ? {
          status: row.status,
          attempt: row.attempt,
          queuedAt: row.queued_at.toISOString(),
          leaseEpoch: row.lease_epoch === null ? null : Number(row.lease_epoch),
          workerId: row.worker_id,
          leaseExpiresAt: row.lease_expires_at?.toISOString() ?? null,
          cancelDeadline: row.cancel_deadline?.toISOString() ?? null,
        }
      : null;
  }
}

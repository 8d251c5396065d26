import { Redis } from 'ioredis';
import type { Pool } from 'pg';
import type { TenantId } from './ids';

/** The task states that count against a tenant's active-task quota: every state a task can still leave. */
const ACTIVE_STATES = [
  'TASK_STATE_SUBMITTED',
  'TASK_STATE_WORKING',
  'TASK_STATE_INPUT_REQUIRED',
  'TASK_STATE_AUTH_REQUIRED',
];

/**
 * The Redis connection of the quota counters: made at once (a counter asked while it is still being made
 * would find no connection and go uncounted), never queueing commands while Redis is away (their callers go
 * on without a count), reconnecting with capped backoff, its errors left to the commands.
 */
export function quotaRedis(url: string, connectionName: string): Redis {
  const redis = new Redis(url, {
    connectionName,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    retryStrategy: (times) => Math.min(2_000, 100 * 2 ** Math.min(times, 5)),
  });
  redis.on('error', () => undefined);
  return redis;
}

/**
 * Counts a tenant's requests per second in Redis, shared by every ingress replica: one key per tenant and
 * second (`INCR`, expiring after two seconds), one round trip per request of a tenant that has a rate
 * quota. A fixed window: a client can get up to twice the rate across a window boundary.
 */
export class RequestRateCounter {
  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'a2a:quota',
  ) {}

  /** Counts one request now; returns the count of this second, this one included. */
  async hit(tenantId: TenantId, now = Date.now()): Promise<number> {
    const key = this.key(tenantId, now);
    const [[, count]] = (await this.redis.multi().incr(key).pexpire(key, 2_000).exec()) as [
      [Error | null, number],
      [Error | null, number],
    ];
    return count;
  }

  /** The requests counted in the current second (the operator's view). */
  async current(tenantId: TenantId, now = Date.now()): Promise<number> {
    return Number((await this.redis.get(this.key(tenantId, now))) ?? 0);
  }

  private key(tenantId: TenantId, now: number): string {
    return `${this.prefix}:rps:${tenantId}:${Math.floor(now / 1_000)}`;
  }
}

/** What a tenant uses of its quotas right now. */
export class TenantUsage {
  constructor(private readonly pool: Pool) {}

  /** The tenant's tasks that are not in a terminal state (from the task counts, not a scan of its tasks). */
  async activeTasks(tenantId: TenantId): Promise<number> {
    const result = await this.pool.query<{ active: string }>({
      name: 'quotas.active-tasks',
      text: `SELECT coalesce(sum(tasks), 0) AS active FROM read.task_counts
              WHERE tenant_id = $1 AND state = ANY ($2)`,
      values: [tenantId, ACTIVE_STATES],
    });
    return Number(result.rows[0]?.active ?? 0);
  }
}

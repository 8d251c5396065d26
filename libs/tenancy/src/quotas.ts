import type { TenantId } from '@lib/ids';
import { Redis } from 'ioredis';
import type { Pool } from 'pg';

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
 * The requests of the second that ends at `now`, as a sliding window estimates them from two fixed
 * one-second counts: all of this second's, and the share of the previous second's that the window still
 * covers (assuming those came evenly). A burst across a second boundary is counted whole, so a client cannot
 * get twice the rate by splitting it there.
 */
export function slidingRate(current: number, previous: number, now: number): number {
  return current + previous * (1 - (now % 1_000) / 1_000);
}

/**
 * Counts a tenant's requests per second in Redis, shared by every ingress replica: one key per tenant and
 * second (`INCR`, expiring after two seconds) and a sliding window over the last two ({@link slidingRate});
 * one round trip per request of a tenant that has a rate quota. Refused requests count too, so a client that
 * keeps sending over its rate stays refused.
 */
export class RequestRateCounter {
  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'a2a:quota',
  ) {}

  /** Counts one request now; returns the tenant's rate over the last second, this request included. */
  async hit(tenantId: TenantId, now = Date.now()): Promise<number> {
    const key = this.key(tenantId, now);
    const replies = (await this.redis
      .multi()
      .incr(key)
      .pexpire(key, 2_000)
      .get(this.key(tenantId, now - 1_000))
      .exec()) as [[Error | null, number], [Error | null, number], [Error | null, string | null]];
    const [[, current], , [, previous]] = replies;
    return slidingRate(current, Number(previous ?? 0), now);
  }

  /** The tenant's rate over the last second, rounded (the operator's view). */
  async current(tenantId: TenantId, now = Date.now()): Promise<number> {
    const [current, previous] = await this.redis.mget(
      this.key(tenantId, now),
      this.key(tenantId, now - 1_000),
    );
    return Math.round(slidingRate(Number(current ?? 0), Number(previous ?? 0), now));
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

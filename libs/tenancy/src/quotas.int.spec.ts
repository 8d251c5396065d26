import { tenantIdOf } from '@lib/ids';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quotaRedis, RequestRateCounter } from './quotas';

const REDIS_URL = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';

describe('RequestRateCounter (Redis)', () => {
  const redis = quotaRedis(REDIS_URL, 'a2a-test:quotas');
  const prefix = `a2a-test:${randomUUID()}`;
  const counter = new RequestRateCounter(redis, prefix);

  beforeAll(async () => {
    if (redis.status !== 'ready') {
      await new Promise((resolve) => redis.once('ready', resolve));
    }
  });

  afterAll(() => {
    redis.disconnect();
  });

  it('counts every request of a second, and forgets the counts after two seconds', async () => {
    const tenant = tenantIdOf(`t-${randomUUID()}`);
    const second = 1_000 * Math.floor(Date.now() / 1_000);
    const rates = [];
    for (let i = 0; i < 5; i++) {
      rates.push(await counter.hit(tenant, second + 100));
    }
    expect(rates).toEqual([1, 2, 3, 4, 5]);
    expect(await counter.current(tenant, second + 900)).toBe(5);
    const ttl = await redis.pttl(`${prefix}:rps:${tenant}:${second / 1_000}`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(2_000);
  });

  it('counts a burst split across a second boundary as one: no twice the rate there', async () => {
    const tenant = tenantIdOf(`t-${randomUUID()}`);
    const second = 1_000 * Math.floor(Date.now() / 1_000);
    for (let i = 0; i < 20; i++) {
      await counter.hit(tenant, second + 990);
    }
    // 20 requests 10 ms before the boundary, then one just after it: the window still holds nearly all.
    const after = await counter.hit(tenant, second + 1_010);
    expect(after).toBeCloseTo(1 + 20 * 0.99, 5);
    // Late in the next second the earlier burst has mostly left the window.
    expect(await counter.current(tenant, second + 1_900)).toBe(Math.round(1 + 20 * 0.1));
  });

  it('answers for tenants apart', async () => {
    const [a, b] = [tenantIdOf(`t-${randomUUID()}`), tenantIdOf(`t-${randomUUID()}`)];
    const now = Date.now();
    await counter.hit(a, now);
    await counter.hit(a, now);
    expect(await counter.hit(b, now)).toBe(1);
  });
});

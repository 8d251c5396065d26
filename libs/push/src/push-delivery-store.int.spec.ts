import { tenantIdOf } from '@lib/ids';
/**
 * The operators' delivery store against real Postgres (docs/push.md "Operating"): a tenant's deliveries newest
 * first with filters and cursor pages that neither repeat nor skip (rows created in the same microsecond
 * included), bad queries refused naming the parameter, and a redrive that touches a dead delivery of the
 * tenant and nothing else.
 */
import { createTestDatabase, type TestDatabase } from '@lib/testing';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  InvalidDeliveryQuery,
  PushDeliveryStore,
  type DeliveryRecord,
  type DeliveryState,
} from './push-delivery-store';

let db: TestDatabase;
let store: PushDeliveryStore;

beforeAll(async () => {
  db = await createTestDatabase('push_operator');
  store = new PushDeliveryStore(db.pool);
});

afterAll(async () => {
  await db.drop();
});

interface Row {
  tenantId: string;
  taskId: string;
  generation: number;
  state: DeliveryState;
  createdAt: string;
}

/** Inserts deliveries as the dispatcher leaves them; returns their ids in the order given. */
async function insert(rows: readonly Row[]): Promise<string[]> {
  const ids = rows.map(() => randomUUID());
  await db.pool.query(
    `INSERT INTO ops.push_deliveries
       (delivery_id, tenant_id, task_id, config_id, generation, event_id, body, state, attempts, last_status,
        last_error, created_at, finished_at)
     SELECT r.id, r.tenant_id, r.task_id, 'hook', r.generation, gen_random_uuid(), '{}', r.state,
            CASE r.state WHEN 'pending' THEN 0 ELSE 1 END,
            CASE r.state WHEN 'dead' THEN 410 WHEN 'delivered' THEN 200 END,
            CASE r.state WHEN 'dead' THEN 'HTTP 410' END,
            r.created_at, CASE WHEN r.state IN ('dead', 'delivered') THEN r.created_at END
       FROM unnest($1::uuid[], $2::text[], $3::text[], $4::integer[], $5::text[], $6::timestamptz[])
            AS r(id, tenant_id, task_id, generation, state, created_at)`,
    [
      ids,
      rows.map((r) => r.tenantId),
      rows.map((r) => r.taskId),
      rows.map((r) => r.generation),
      rows.map((r) => r.state),
      rows.map((r) => r.createdAt),
    ],
  );
  return ids;
}

/** Every page of a listing, following the cursors. */
async function allPages(
  query: Parameters<PushDeliveryStore['list']>[0],
): Promise<{ pages: number; deliveries: DeliveryRecord[] }> {
  const deliveries: DeliveryRecord[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await store.list({ ...query, ...(cursor !== undefined ? { cursor } : {}) });
    deliveries.push(...page.deliveries);
    cursor = page.nextCursor;
    pages += 1;
  } while (cursor !== undefined);
  return { pages, deliveries };
}

describe('PushDeliveryStore', () => {
  const tenant = tenantIdOf(`t-${randomUUID().slice(0, 8)}`);
  const taskA = 'task-a';
  const taskB = 'task-b';
  let ids: string[];

  beforeAll(async () => {
    // Four rows share one creation time to the microsecond: the id orders them.
    const tie = '2026-12-02T10:00:00.123456Z';
    ids = await insert([
      { tenantId: tenant, taskId: taskA, generation: 1, state: 'dead', createdAt: tie },
      { tenantId: tenant, taskId: taskA, generation: 2, state: 'dead', createdAt: tie },
      { tenantId: tenant, taskId: taskA, generation: 3, state: 'delivered', createdAt: tie },
      { tenantId: tenant, taskId: taskB, generation: 1, state: 'pending', createdAt: tie },
      {
        tenantId: tenant,
        taskId: taskB,
        generation: 2,
        state: 'dead',
        createdAt: '2026-12-02T10:00:00.123457Z',
      },
      {
        tenantId: tenant,
        taskId: taskB,
        generation: 3,
        state: 'sending',
        createdAt: '2026-12-02T10:00:01Z',
      },
      {
        tenantId: 'someone-else',
        taskId: taskA,
        generation: 1,
        state: 'dead',
        createdAt: '2026-12-02T10:00:02Z',
      },
    ]);
  });

  it('lists a tenant’s deliveries newest first, by task and state, and no other tenant’s', async () => {
    const all = await store.list({ tenantId: tenant });
    expect(all.nextCursor).toBeUndefined();
    const tied = ids.slice(0, 4).sort();
    expect(all.deliveries.map((d) => d.deliveryId)).toStrictEqual([ids[5], ids[4], ...tied]);
    expect(all.deliveries.find((d) => d.deliveryId === ids[0])).toStrictEqual({
      deliveryId: ids[0],
      tenantId: tenant,
      taskId: taskA,
      configId: 'hook',
      generation: 1,
      state: 'dead',
      attempts: 1,
      nextAttemptAt: null,
      lastStatus: 410,
      lastError: 'HTTP 410',
      createdAt: '2026-12-02T10:00:00.123Z',
      finishedAt: '2026-12-02T10:00:00.123Z',
    });
    const deadOfA = await store.list({ tenantId: tenant, taskId: taskA, state: 'dead' });
    expect(deadOfA.deliveries.map((d) => d.deliveryId).sort()).toStrictEqual(
      [ids[0], ids[1]].sort(),
    );
    expect((await store.list({ tenantId: tenantIdOf('nobody') })).deliveries).toStrictEqual([]);
  });

  it('pages with a cursor: every delivery once, in the same order, ties on the creation time included', async () => {
    const whole = (await store.list({ tenantId: tenant })).deliveries.map((d) => d.deliveryId);
    for (const limit of [1, 2, 4, 5]) {
      const { pages, deliveries } = await allPages({ tenantId: tenant, limit });
      expect(
        deliveries.map((d) => d.deliveryId),
        `limit ${limit}`,
      ).toStrictEqual(whole);
      expect(pages).toBe(Math.ceil(whole.length / limit));
    }
    const dead = await allPages({ tenantId: tenant, state: 'dead', limit: 1 });
    expect(dead.deliveries.map((d) => d.state)).toStrictEqual(['dead', 'dead', 'dead']);
  });

  it('refuses a bad limit, state or cursor, naming the parameter', async () => {
    const refusal = (query: Partial<Parameters<PushDeliveryStore['list']>[0]>) =>
      store.list({ tenantId: tenant, ...query }).then(
        () => null,
        (err: unknown) => err,
      );
    const page = await store.list({ tenantId: tenant, limit: 1 });
    const forged = Buffer.from('2026-12-02T10:00:00.123456 not-a-uuid').toString('base64url');
    for (const [query, field] of [
      [{ limit: 0 }, 'limit'],
      [{ limit: 501 }, 'limit'],
      [{ limit: 1.5 }, 'limit'],
      [{ limit: Number.NaN }, 'limit'],
      [{ state: 'lost' as DeliveryState }, 'state'],
      [{ cursor: 'not a cursor' }, 'cursor'],
      [{ cursor: forged }, 'cursor'],
      [{ cursor: `${page.nextCursor ?? ''}=` }, 'cursor'],
    ] as const) {
      const err = await refusal(query);
      expect(err, JSON.stringify(query)).toBeInstanceOf(InvalidDeliveryQuery);
      expect((err as InvalidDeliveryQuery).field).toBe(field);
    }
  });

  it('redrives a dead delivery of the tenant only: pending at once, attempts from zero', async () => {
    const state = async (id: string | undefined) =>
      (
        await db.pool.query<{ state: string; attempts: number }>(
          'SELECT state, attempts FROM ops.push_deliveries WHERE delivery_id = $1',
          [id],
        )
      ).rows[0];
    const redriven = await store.redrive(tenant, ids[1]!);
    expect(redriven).toMatchObject({
      deliveryId: ids[1],
      state: 'pending',
      attempts: 0,
      lastStatus: null,
      lastError: null,
      finishedAt: null,
      nextAttemptAt: expect.any(String),
    });
    expect(Date.parse(redriven!.nextAttemptAt!)).toBeLessThanOrEqual(Date.now() + 1_000);
    // Not dead (any more), another tenant's, unknown, or no delivery id at all: nothing changes.
    expect(await store.redrive(tenant, ids[1]!)).toBeNull();
    expect(await store.redrive(tenant, ids[2]!)).toBeNull();
    expect(await store.redrive(tenant, ids[3]!)).toBeNull();
    expect(await store.redrive(tenant, ids[6]!)).toBeNull();
    expect(await store.redrive(tenantIdOf('someone-else'), ids[0]!)).toBeNull();
    expect(await store.redrive(tenant, randomUUID())).toBeNull();
    expect(await store.redrive(tenant, 'not-a-uuid')).toBeNull();
    expect(await state(ids[2])).toStrictEqual({ state: 'delivered', attempts: 1 });
    expect(await state(ids[3])).toStrictEqual({ state: 'pending', attempts: 0 });
    expect(await state(ids[6])).toStrictEqual({ state: 'dead', attempts: 1 });
    expect(await state(ids[0])).toStrictEqual({ state: 'dead', attempts: 1 });
  });
});

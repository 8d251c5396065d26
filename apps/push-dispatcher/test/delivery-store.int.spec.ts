import { tenantIdOf } from '@lib/ids';
/**
 * The delivery store against real Postgres (docs/adr/0010-push-notifications.md): deliveries derived behind
 * an open one, and seen by whoever settles it; claims of many lanes per statement, and still only a lane's
 * head is ever claimed, in generation order; an outcome counts only for the attempt whose claim is current
 * (at most one recorded 2xx); the settle of many lanes and the claims of their next deliveries in one
 * statement; and two replicas' batched statements over the same lanes waiting for each other, never
 * deadlocking, each delivery delivered once and in order.
 */
import { createPool } from '@lib/event-store';
import { createTestDatabase, type TestDatabase } from '@lib/testing';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Batcher } from '../src/batcher';
import {
  deliveryId,
  DeliveryStore,
  laneKey,
  type Claim,
  type ClaimedDelivery,
  type FeedEvent,
  type FinalOutcome,
  type Lane,
} from '../src/delivery-store';

const TENANT = 'acme';
const CLAIM_MS = 60_000;

let db: TestDatabase;
let store: DeliveryStore;

beforeAll(async () => {
  db = await createTestDatabase('push_store');
  store = new DeliveryStore(db.pool);
});

afterAll(async () => {
  await db.drop();
});

/** A lane of a new task, its webhook registered with a token and credentials. */
async function newLane(configId = 'hook'): Promise<Lane> {
  const lane = { tenantId: TENANT, taskId: `task-${randomUUID()}`, configId };
  await db.pool.query(
    `INSERT INTO ops.push_configs
       (tenant_id, task_id, config_id, url, token, authentication, from_generation, created_by)
     VALUES ($1, $2, $3, $4, 'tok', '{"scheme": "Bearer", "credentials": "secret"}', 0, 'alice')`,
    [lane.tenantId, lane.taskId, lane.configId, `https://hooks.example/${lane.taskId}`],
  );
  return lane;
}

/** Events `from`, `from` + 1, … of the lane's task, `count` of them, in the trace `traceparent` names. */
function eventsOf(
  lane: Lane,
  count: number,
  from = 1,
  traceparent: string | null = null,
): FeedEvent[] {
  return Array.from({ length: count }, (_, k) => ({
    tenantId: tenantIdOf(lane.tenantId),
    taskId: lane.taskId,
    generation: from + k,
    eventId: randomUUID(),
    body: JSON.stringify({ statusUpdate: { taskId: lane.taskId, generation: from + k } }),
    traceparent,
  }));
}

/** Derives the deliveries of the lane's task's events 1..`generations`; their ids in generation order. */
async function deliveriesOf(
  lane: Lane,
  generations: number,
  traceparent: string | null = null,
): Promise<string[]> {
  const events = eventsOf(lane, generations, 1, traceparent);
  expect(await store.derive(events)).toHaveLength(generations);
  return events.map((event) => deliveryId(event.eventId, lane.configId));
}

function claimed(claim: Claim | undefined): ClaimedDelivery {
  if (claim?.kind !== 'claimed') {
    throw new Error(`expected a claimed delivery, got ${JSON.stringify(claim)}`);
  }
  return claim.delivery;
}

interface DeliveryRow {
  state: string;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
}

async function rowOf(id: string): Promise<DeliveryRow> {
  const result = await db.pool.query<DeliveryRow>(
    'SELECT state, attempts, last_status, last_error FROM ops.push_deliveries WHERE delivery_id = $1',
    [id],
  );
  const row = result.rows[0];
  if (!row) {
    throw new Error(`no delivery ${id}`);
  }
  return row;
}

/** Waits until `n` statements of the test database wait for a lock. */
async function untilWaiting(n: number): Promise<void> {
  for (let waited = 0; ; waited += 10) {
    const waiting = await db.pool.query<{ n: number }>(
      `SELECT count(*)::integer AS n FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock'`,
    );
    if ((waiting.rows[0]?.n ?? 0) >= n) {
      return;
    }
    if (waited > 10_000) {
      throw new Error(`not ${n} statements waiting for a lock`);
    }
    await sleep(10);
  }
}

/**
 * Holds a row's lock in a transaction of its own; starts `first`, which comes to wait for it, then
 * `second`, which comes to wait too (for the row, or for what `first` holds); then lets go and returns both
 * results. So two statements meet on their locks in a known order, at a known point.
 */
async function heldUp<A, B>(
  row: string,
  first: () => Promise<A>,
  second: () => Promise<B>,
): Promise<[A, B]> {
  const blocker = await db.pool.connect();
  let failed = false;
  try {
    await blocker.query('BEGIN');
    await blocker.query('SELECT 1 FROM ops.push_deliveries WHERE delivery_id = $1 FOR UPDATE', [
      row,
    ]);
    const a = first();
    await untilWaiting(1);
    const b = second();
    await untilWaiting(2);
    await blocker.query('COMMIT');
    return await Promise.all([a, b]);
  } catch (error) {
    failed = true;
    throw error;
  } finally {
    blocker.release(failed);
  }
}

const delivered = (delivery: ClaimedDelivery): FinalOutcome => ({
  delivery,
  settlement: { kind: 'delivered', status: 204 },
});

describe('DeliveryStore.derive', () => {
  it('inserts each delivery once; one behind an open delivery of its lane is behind', async () => {
    const lane = await newLane();
    const first = eventsOf(lane, 2);
    const derived = await store.derive(first);
    expect(derived.map((d) => [d.deliveryId, d.behind]).sort()).toStrictEqual(
      first.map((e) => [deliveryId(e.eventId, lane.configId), false]).sort(),
    );
    expect(await store.derive(first)).toStrictEqual([]);

    const next = eventsOf(lane, 1, 3);
    expect((await store.derive(next))[0]?.behind).toBe(true);

    // Once everything before is settled, a new delivery is its lane's head again.
    let claim = (await store.claimHeads([lane], CLAIM_MS))[0];
    while (claim?.kind === 'claimed') {
      claim = (await store.settleAndClaimNextMany([delivered(claim.delivery)], CLAIM_MS))[0]?.next;
    }
    expect((await store.derive(eventsOf(lane, 1, 4)))[0]?.behind).toBe(false);
  });

  it('a delivery inserted behind a head being settled is seen by a claim after the settlement', async () => {
    const lane = await newLane();
    await deliveriesOf(lane, 1);
    const head = claimed((await store.claimHeads([lane], CLAIM_MS))[0]);
    const late = eventsOf(lane, 1, 2);
    // The insert locks the head first; the settlement waits for the insert to commit, and its next claim
    // (the statement's snapshot, older than the insert) finds nothing.
    const [derived, [settled]] = await heldUp(
      head.deliveryId,
      () => store.derive(late),
      () => store.settleAndClaimNextMany([delivered(head)], CLAIM_MS),
    );
    expect(derived[0]?.behind).toBe(true);
    expect(settled).toStrictEqual({ settled: true, next: { kind: 'empty' } });
    // The run's own claim after that finds it: no job was needed.
    expect(claimed((await store.claimHeads([lane], CLAIM_MS))[0]).generation).toBe(2);
  });

  it('a delivery whose insert waits for the settlement of the head before it is not behind: it gets a job', async () => {
    const lane = await newLane();
    await deliveriesOf(lane, 1);
    const head = claimed((await store.claimHeads([lane], CLAIM_MS))[0]);
    // The settlement locks the head first; the insert's lock waits for it, and then the head is closed.
    const [[settled], derived] = await heldUp(
      head.deliveryId,
      () => store.settleAndClaimNextMany([delivered(head)], CLAIM_MS),
      () => store.derive(eventsOf(lane, 1, 2)),
    );
    expect(settled).toStrictEqual({ settled: true, next: { kind: 'empty' } });
    expect(derived[0]?.behind).toBe(false);
  });
});

describe('DeliveryStore.claimHeads', () => {
  it('claims the head of each lane in one call, answering in the requests order, with the webhook and the trace', async () => {
    const [a, b, idle] = [await newLane(), await newLane(), await newLane()];
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const aIds = await deliveriesOf(a, 3, traceparent);
    const bIds = await deliveriesOf(b, 2);

    const claims = await store.claimHeads([b, idle, a], CLAIM_MS);

    expect(claims.map((c) => c.kind)).toStrictEqual(['claimed', 'empty', 'claimed']);
    const [fromB, , fromA] = claims;
    expect(claimed(fromB)).toMatchObject({
      deliveryId: bIds[0],
      lane: b,
      generation: 1,
      attempt: 1,
    });
    expect(claimed(fromA)).toStrictEqual({
      deliveryId: aIds[0],
      lane: a,
      generation: 1,
      body: JSON.stringify({ statusUpdate: { taskId: a.taskId, generation: 1 } }),
      attempt: 1,
      url: `https://hooks.example/${a.taskId}`,
      token: 'tok',
      authentication: { scheme: 'Bearer', credentials: 'secret' },
      traceparent,
    });
    expect(claimed(fromB).traceparent).toBeNull();
    expect(await rowOf(aIds[0] ?? '')).toMatchObject({ state: 'sending', attempts: 1 });
    expect(await rowOf(aIds[1] ?? '')).toMatchObject({ state: 'pending', attempts: 0 });
  });

  it('keeps a lane in order: while its head is claimed or in backoff, nothing after it is claimed', async () => {
    const lane = await newLane();
    const ids = await deliveriesOf(lane, 3);
    const head = claimed((await store.claimHeads([lane], CLAIM_MS))[0]);

    // Claimed by a run: later, at the claim's end, and the head named.
    const busy = (await store.claimHeads([lane], CLAIM_MS))[0];
    expect(busy).toMatchObject({
      kind: 'later',
      head: { deliveryId: ids[0], state: 'sending', attempts: 1 },
    });
    if (busy?.kind !== 'later') {
      throw new Error('expected later');
    }
    expect(busy.at.getTime()).toBeGreaterThan(Date.now() + CLAIM_MS / 2);

    // In backoff: later, at the backoff's end, still the head.
    const at = new Date(Date.now() + 30_000);
    expect(await store.settle(head, { kind: 'retry', at, status: 503, error: 'HTTP 503' })).toBe(
      true,
    );
    expect((await store.claimHeads([lane], CLAIM_MS))[0]).toStrictEqual({
      kind: 'later',
      at,
      head: { lane, deliveryId: ids[0], state: 'pending', attempts: 1, due: at },
    });
    expect(await rowOf(ids[1] ?? '')).toMatchObject({ state: 'pending', attempts: 0 });
  });

  it('refuses a lane twice in one call', async () => {
    const lane = await newLane();
    await expect(store.claimHeads([lane, { ...lane }], CLAIM_MS)).rejects.toThrow(
      'a lane may appear once per statement',
    );
  });
});

describe('DeliveryStore.settleAndClaimNextMany', () => {
  it('settles deliveries of many lanes and claims each lane`s next delivery in one call', async () => {
    const [a, b, last] = [await newLane(), await newLane(), await newLane()];
    const aIds = await deliveriesOf(a, 3);
    const bIds = await deliveriesOf(b, 2);
    const lastIds = await deliveriesOf(last, 1);
    const heads = (await store.claimHeads([a, b, last], CLAIM_MS)).map(claimed);
    const [headA, headB, headLast] = heads;
    if (!headA || !headB || !headLast) {
      throw new Error('expected three heads');
    }

    const outcomes = await store.settleAndClaimNextMany(
      [
        delivered(headB),
        { delivery: headA, settlement: { kind: 'dead', status: 410, error: 'HTTP 410 Gone' } },
        delivered(headLast),
      ],
      CLAIM_MS,
    );

    expect(outcomes.map((o) => o.settled)).toStrictEqual([true, true, true]);
    expect(claimed(outcomes[0]?.next)).toMatchObject({ deliveryId: bIds[1], generation: 2 });
    expect(claimed(outcomes[1]?.next)).toMatchObject({
      deliveryId: aIds[1],
      generation: 2,
      url: `https://hooks.example/${a.taskId}`,
      token: 'tok',
    });
    expect(outcomes[2]?.next).toStrictEqual({ kind: 'empty' });
    expect(await rowOf(aIds[0] ?? '')).toStrictEqual({
      state: 'dead',
      attempts: 1,
      last_status: 410,
      last_error: 'HTTP 410 Gone',
    });
    expect(await rowOf(bIds[0] ?? '')).toMatchObject({ state: 'delivered', last_status: 204 });
    expect(await rowOf(lastIds[0] ?? '')).toMatchObject({ state: 'delivered' });
    expect(await rowOf(aIds[2] ?? '')).toMatchObject({ state: 'pending', attempts: 0 });
  });

  it('records an outcome only for the current claim: a superseded attempt settles nothing and claims nothing', async () => {
    const [lane, other] = [await newLane(), await newLane()];
    const ids = await deliveriesOf(lane, 2);
    await deliveriesOf(other, 2);
    // A run's claim that expires (it died, say), and the run that claims the head again after it.
    const stale = claimed((await store.claimHeads([lane], 1))[0]);
    await sleep(20);
    const current = claimed((await store.claimHeads([lane], CLAIM_MS))[0]);
    expect(current).toMatchObject({ deliveryId: stale.deliveryId, attempt: 2 });
    const otherHead = claimed((await store.claimHeads([other], CLAIM_MS))[0]);

    const [late, alongside] = await store.settleAndClaimNextMany(
      [delivered(stale), delivered(otherHead)],
      CLAIM_MS,
    );

    // The stale attempt's 2xx is not recorded, and the lane's next delivery is not claimed behind the
    // current claim: the head is reported as the current run's, due at its claim's end.
    expect(late).toMatchObject({
      settled: false,
      next: { kind: 'later', head: { deliveryId: ids[0], state: 'sending', attempts: 2 } },
    });
    expect(alongside?.settled).toBe(true);
    expect(claimed(alongside?.next).generation).toBe(2);
    expect(await rowOf(ids[0] ?? '')).toMatchObject({ state: 'sending', attempts: 2 });
    expect(await rowOf(ids[1] ?? '')).toMatchObject({ state: 'pending', attempts: 0 });
    expect(await store.settle(stale, { kind: 'delivered', status: 200 })).toBe(false);

    // The current attempt's outcome counts, once.
    const [settled] = await store.settleAndClaimNextMany([delivered(current)], CLAIM_MS);
    expect(settled?.settled).toBe(true);
    expect(claimed(settled?.next)).toMatchObject({ deliveryId: ids[1], generation: 2 });
    const [again] = await store.settleAndClaimNextMany([delivered(current)], CLAIM_MS);
    expect(again).toMatchObject({
      settled: false,
      next: { kind: 'later', head: { deliveryId: ids[1], state: 'sending' } },
    });
    expect(await rowOf(ids[0] ?? '')).toMatchObject({ state: 'delivered', attempts: 2 });
  });
});

/**
 * One replica's lane runs, without the POST: a run claims its lane through the claims batcher and, while it
 * gets deliveries, settles each one as delivered and claims the next through the settlements batcher. A
 * replica drives a lane once at a time, as LaneRunner does.
 */
class Replica {
  readonly driving = new Set<string>();
  private readonly claims: Batcher<Lane, Claim>;
  private readonly settlements: Batcher<FinalOutcome, { settled: boolean; next: Claim }>;

  constructor(
    readonly name: string,
    replicaStore: DeliveryStore,
    private readonly ledger: Ledger,
  ) {
    const limits = { maxBatch: 50, maxInFlight: 2 };
    this.claims = new Batcher((lanes) => replicaStore.claimHeads(lanes, CLAIM_MS), limits);
    this.settlements = new Batcher(
      (outcomes) => replicaStore.settleAndClaimNextMany(outcomes, CLAIM_MS),
      limits,
    );
  }

  async drive(lane: Lane): Promise<void> {
    const key = laneKey(lane);
    if (this.driving.has(key)) {
      return;
    }
    this.driving.add(key);
    try {
      let claim = await this.claims.submit(lane);
      while (claim.kind === 'claimed') {
        this.ledger.claimed(claim.delivery, this.name);
        // Let the other replica's statements run while this delivery is "being sent".
        await sleep(Math.random() * 3);
        const outcome = await this.settlements.submit(delivered(claim.delivery));
        expect(outcome.settled).toBe(true);
        this.ledger.settled(claim.delivery);
        claim = outcome.next;
      }
    } finally {
      this.driving.delete(key);
    }
  }
}

/** What the replicas claimed and settled: checks that a lane has one claim at a time, in order. */
class Ledger {
  /** Per lane, the generation of the delivery claimed now (and by whom), if any. */
  private readonly holding = new Map<string, { generation: number; by: string }>();
  /** Per lane, the generations delivered, in the order they were settled. */
  readonly delivered = new Map<string, number[]>();
  readonly violations: string[] = [];

  claimed(delivery: ClaimedDelivery, by: string): void {
    const key = laneKey(delivery.lane);
    const held = this.holding.get(key);
    if (held) {
      this.violations.push(
        `${by} claimed generation ${delivery.generation} of ${key} while ${held.by} held ${held.generation}`,
      );
    }
    const done = this.delivered.get(key) ?? [];
    if (done.length !== delivery.generation - 1) {
      this.violations.push(
        `${by} claimed generation ${delivery.generation} of ${key} after [${done.join(', ')}]`,
      );
    }
    this.holding.set(key, { generation: delivery.generation, by });
  }

  settled(delivery: ClaimedDelivery): void {
    const key = laneKey(delivery.lane);
    this.holding.delete(key);
    this.delivered.set(key, [...(this.delivered.get(key) ?? []), delivery.generation]);
  }
}

describe('two replicas batching claims and settlements over the same lanes', () => {
  let second: Pool;

  beforeAll(() => {
    second = createPool(db.url, { max: 10, applicationName: 'a2a-test:second-replica' });
  });

  afterAll(async () => {
    await second.end();
  });

  /** Three lanes in (tenant, task, config) order, two deliveries each. */
  async function threeLanes(): Promise<{ lanes: Lane[]; ids: string[][] }> {
    const prefix = `order-${randomUUID()}`;
    const lanes: Lane[] = [];
    const ids: string[][] = [];
    for (const suffix of ['a', 'b', 'c']) {
      const lane = { tenantId: TENANT, taskId: `${prefix}-${suffix}`, configId: 'hook' };
      await db.pool.query(
        `INSERT INTO ops.push_configs (tenant_id, task_id, config_id, url, from_generation, created_by)
         VALUES ($1, $2, $3, 'https://hooks.example/', 0, 'alice')`,
        [lane.tenantId, lane.taskId, lane.configId],
      );
      lanes.push(lane);
      ids.push(await deliveriesOf(lane, 2));
    }
    return { lanes, ids };
  }

  it('claims of the same lanes in opposite orders wait for each other instead of deadlocking', async () => {
    const { lanes, ids } = await threeLanes();
    const other = new DeliveryStore(second);
    // The first statement locks the first lane's head and waits for the middle one's; the second waits for
    // the first lane's, holding nothing, and then finds every head claimed.
    const [mine, theirs] = await heldUp(
      ids[1]?.[0] ?? '',
      () => store.claimHeads(lanes, CLAIM_MS),
      () => other.claimHeads([...lanes].reverse(), CLAIM_MS),
    );
    expect(mine.map((c) => c.kind)).toStrictEqual(['claimed', 'claimed', 'claimed']);
    expect(theirs.map((c) => c.kind)).toStrictEqual(['later', 'later', 'later']);
  });

  it('a settlement with next claims and claims of the same lanes in opposite orders do not deadlock', async () => {
    const { lanes, ids } = await threeLanes();
    const other = new DeliveryStore(second);
    const heads = (await store.claimHeads(lanes, CLAIM_MS)).map(claimed);
    // Held: the middle lane's second delivery, the next head the settlement claims there.
    const [outcomes, claims] = await heldUp(
      ids[1]?.[1] ?? '',
      () => store.settleAndClaimNextMany(heads.map(delivered), CLAIM_MS),
      () => other.claimHeads([...lanes].reverse(), CLAIM_MS),
    );
    expect(outcomes.map((o) => [o.settled, o.next.kind])).toStrictEqual([
      [true, 'claimed'],
      [true, 'claimed'],
      [true, 'claimed'],
    ]);
    expect(claims.map((c) => c.kind)).toStrictEqual(['later', 'later', 'later']);
  });

  it('wait for each other without deadlocks; each delivery is delivered once, in order per lane', async () => {
    const LANES = 30;
    const GENERATIONS = 10;
    const lanes: Lane[] = [];
    for (let n = 0; n < LANES; n++) {
      const lane = await newLane(`hook-${n % 3}`);
      await deliveriesOf(lane, GENERATIONS);
      lanes.push(lane);
    }
    const ledger = new Ledger();
    const replicas = [
      new Replica('replica-1', store, ledger),
      new Replica('replica-2', new DeliveryStore(second), ledger),
    ];
    const open = (): Lane[] =>
      lanes.filter((lane) => (ledger.delivered.get(laneKey(lane))?.length ?? 0) < GENERATIONS);
    const deadline = Date.now() + 20_000;

    // Round after round, each replica drives every open lane at once: its claims go in one statement, the
    // first replica's in one order, the second's in the reverse order, and their settlements and next claims
    // follow in batches as the "sends" end. Both replicas' statements lock heads of the same lanes at the
    // same time; locked in request order, they would deadlock within a few rounds.
    for (let rest = open(); rest.length > 0 && Date.now() < deadline; rest = open()) {
      const [first, second] = replicas;
      await Promise.all([
        ...rest.map((lane) => first?.drive(lane)),
        ...[...rest].reverse().map((lane) => second?.drive(lane)),
      ]);
    }

    expect(ledger.violations).toStrictEqual([]);
    for (const lane of lanes) {
      expect(ledger.delivered.get(laneKey(lane))).toStrictEqual(
        Array.from({ length: GENERATIONS }, (_, k) => k + 1),
      );
    }
    const states = await db.pool.query<{ state: string; attempts: number; n: number }>(
      `SELECT state, attempts, count(*)::integer AS n FROM ops.push_deliveries
        WHERE task_id = ANY($1) GROUP BY state, attempts`,
      [lanes.map((l) => l.taskId)],
    );
    expect(states.rows).toStrictEqual([
      { state: 'delivered', attempts: 1, n: LANES * GENERATIONS },
    ]);
  });
});

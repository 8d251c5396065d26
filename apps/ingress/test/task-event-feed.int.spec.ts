/**
 * TaskEventFeed against real Postgres (spec digest §10.6; DESIGN.md "Live updates across replicas"): events
 * are appended to task streams the way the task-service does (appendToStream in a transaction, then
 * `pg_notify` on the platform channel) and read back through subscriptions. A subscription must carry exactly
 * the log's client-visible events after its cursor, in generation order, with no gap and no duplicate,
 * whether woken by a notice or by the fallback poll; its memory is bounded; it ends after a terminal status
 * (and, for a `turn` stream, after an interrupted one). ADR 0008: all subscribers of a task on one replica
 * share one log read per change, and the fallback poll is one query for all followed tasks. The last block
 * drives the SSE writer over a real socket: a client that goes away must release its subscription.
 */
import type { Message, TaskStateName, TaskStatus } from '@lib/a2a-protocol';
import { ingressSchema, loadConfig, oidcSchema, postgresSchema, quotaSchema } from '@lib/config';
import {
  appendToStream,
  ConcurrencyConflict,
  NOTICE_CHANNEL,
  readStream,
  withTransaction,
  type EventMetadata,
} from '@lib/event-store';
import {
  TASK_EVENT_SCHEMA_VERSION,
  taskStreamId,
  toStreamResponse,
  type TaskEvent,
  type TaskRef,
} from '@lib/task-domain';
import { taskIdOf, tenantIdOf, type TaskRef as TenantTaskRef } from '@lib/tenancy';
import { createTestDatabase, type TestDatabase } from '@lib/testing';
import type { Request, Response } from 'express';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import type { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { readBody } from '../src/http/read-body';
import { LocalCommits, type LocalCommitListener } from '../src/streaming/local-commits';
import { writeSse } from '../src/streaming/sse-writer';
import {
  TaskEventFeed,
  type FollowedTask,
  type StreamItem,
  type TaskSubscription,
} from '../src/streaming/task-event-feed';

const TENANT = tenantIdOf('feed-tenant');
const META: EventMetadata = { actor: { kind: 'system', id: 'feed-test' }, binding: 'test' };
const HIDDEN = new Set([
  'TaskLeaseGranted',
  'TaskLeaseExpired',
  'TaskCancelRequested',
  'UserMessageAppended',
]);

// ---------------------------------------------------------------------------------------------------------
// realistic task events
// ---------------------------------------------------------------------------------------------------------

const now = (): string => new Date().toISOString();

function submitted(ref: TaskRef): TaskEvent {
  const message: Message = {
    messageId: randomUUID(),
    role: 'ROLE_USER',
    parts: [{ text: 'count' }],
    taskId: ref.taskId,
    contextId: ref.contextId,
  };
  return {
    type: 'TaskSubmitted',
    data: {
      taskId: ref.taskId,
      contextId: ref.contextId,
      agentId: 'countdown',
      ownerId: 'alice',
      message,
      submittedAt: now(),
    },
  };
}

function status(state: TaskStateName, text?: string): TaskEvent {
  const value: TaskStatus = {
    state,
    timestamp: now(),
    ...(text
      ? { message: { messageId: randomUUID(), role: 'ROLE_AGENT', parts: [{ text }] } }
      : {}),
  };
  return { type: 'TaskStatusUpdated', data: { status: value } };
}

function chunk(text: string, append: boolean, lastChunk = false): TaskEvent {
  return {
    type: 'ArtifactChunkAppended',
    data: {
      artifact: { artifactId: 'countdown', name: 'countdown', parts: [{ text }] },
      append,
      lastChunk,
    },
  };
}

function lease(epoch: number): TaskEvent {
  return {
    type: 'TaskLeaseGranted',
    data: { leaseEpoch: epoch, workerId: 'w-1', expiresAt: now(), attempt: 1 },
  };
}

// ---------------------------------------------------------------------------------------------------------
// the log under test
// ---------------------------------------------------------------------------------------------------------

let db: TestDatabase;

/** One task stream in the test database, written like the task-service writes it. */
class TaskLog {
  constructor(
    readonly tenant = TENANT,
    readonly ref: TaskRef = { taskId: randomUUID(), contextId: randomUUID() },
  ) {}

  get streamId(): string {
    return taskStreamId(this.tenant, this.ref.taskId);
  }

  /** The task as a subscription follows it. */
  get task(): FollowedTask {
    return {
      tenantId: this.tenant,
      taskId: taskIdOf(this.ref.taskId),
      contextId: this.ref.contextId,
    };
  }

  /**
   * Appends `events` at the stream's current version in one transaction (retrying on a concurrent append),
   * then notifies like the task-service (`{"k":"task",…,"v":version}`) unless `notify` is false.
   */
  async append(events: TaskEvent[], notify = true): Promise<number> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await withTransaction(db.pool, async (client) => {
          const current = await client.query<{ version: number }>(
            'SELECT version FROM events.streams WHERE tenant_id = $1 AND stream_id = $2',
            [this.tenant, this.streamId],
          );
          const expected = current.rows[0]?.version ?? 0;
          const stored = await appendToStream(
            client,
            this.tenant,
            this.streamId,
            expected,
            events.map((event) => ({ event, schemaVersion: TASK_EVENT_SCHEMA_VERSION })),
            META,
          );
          const version = stored[stored.length - 1]?.streamVersion ?? expected;
          if (notify) {
            const notice = { k: 'task', t: this.tenant, id: this.ref.taskId, v: version };
            await client.query('SELECT pg_notify($1, $2)', [
              NOTICE_CHANNEL,
              JSON.stringify(notice),
            ]);
          }
          return version;
        });
      } catch (error) {
        if (!(error instanceof ConcurrencyConflict) || attempt > 50) {
          throw error;
        }
        await sleep(Math.random() * 10);
      }
    }
  }

  /** The client-visible events of the log after `after`, as a subscription must deliver them. */
  async expectedAfter(after: number): Promise<StreamItem[]> {
    const events = await readStream<TaskEvent>(db.pool, this.tenant, this.streamId, after);
    return events.flatMap((stored) => {
      const response = toStreamResponse(stored.event, this.ref);
      return response ? [{ id: stored.streamVersion, response }] : [];
    });
  }
}

/** A log with a submitted task and its lease: generations 1 (visible) and 2 (hidden). */
async function startedLog(log = new TaskLog()): Promise<TaskLog> {
  await log.append([submitted(log.ref)]);
  await log.append([lease(1)]);
  return log;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function feedConfig(maxPending: number) {
  return loadConfig(postgresSchema.merge(ingressSchema).merge(quotaSchema).merge(oidcSchema), {
    POSTGRES_URL: db.url,
    STREAM_MAX_PENDING_EVENTS: String(maxPending),
    // A subscriber that leaves its full buffer alone this long is cut off; one that takes as it goes is not,
    // however busy the machine.
    STREAM_STALL_MS: '2000',
  });
}

async function startFeed(maxPending = 1_000): Promise<TaskEventFeed> {
  const feed = new TaskEventFeed(db.pool, feedConfig(maxPending));
  await feed.onModuleInit();
  return feed;
}

/** One `take()`, failing (and closing the subscription) if nothing arrives within `timeoutMs`. */
async function takeWithin(
  subscription: TaskSubscription,
  timeoutMs: number,
): Promise<StreamItem[]> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
  });
  try {
    const result = await Promise.race([subscription.take(), timedOut]);
    if (result === 'timeout') {
      subscription.close('closed');
      throw new Error(`no events within ${timeoutMs} ms`);
    }
    return result;
  } finally {
    clearTimeout(timer);
  }
}

/** Takes until the subscription ends; fails after `timeoutMs` (of real time, whatever a test does to `Date`). */
async function drain(subscription: TaskSubscription, timeoutMs = 10_000): Promise<StreamItem[]> {
  const deadline = performance.now() + timeoutMs;
  const items: StreamItem[] = [];
  for (;;) {
    const batch = await takeWithin(subscription, Math.max(1, deadline - performance.now()));
    if (batch.length === 0) {
      return items;
    }
    items.push(...batch);
  }
}

/** Takes until at least `count` items arrived; fails after `timeoutMs` (of real time). */
async function takeAtLeast(
  subscription: TaskSubscription,
  count: number,
  timeoutMs = 10_000,
): Promise<StreamItem[]> {
  const deadline = performance.now() + timeoutMs;
  const items: StreamItem[] = [];
  while (items.length < count) {
    const batch = await takeWithin(subscription, Math.max(1, deadline - performance.now()));
    if (batch.length === 0) {
      throw new Error(`subscription ended (${subscription.ended}) after ${items.length} items`);
    }
    items.push(...batch);
  }
  return items;
}

/** Waits until `probe` holds; fails after `timeoutMs` (of real time). */
async function eventually(probe: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!probe()) {
    if (performance.now() > deadline) {
      throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    }
    await sleep(10);
  }
}

/** Private state read only to prove the memory bound (the number of events a subscription holds). */
const held = (subscription: TaskSubscription): number =>
  (subscription as unknown as { pending: unknown[] }).pending.length;

// ---------------------------------------------------------------------------------------------------------
// tests
// ---------------------------------------------------------------------------------------------------------

beforeAll(async () => {
  db = await createTestDatabase('task_event_feed');
});

afterAll(async () => {
  await db?.drop();
});

describe('TaskEventFeed against real Postgres', () => {
  let feed: TaskEventFeed;

  beforeAll(async () => {
    feed = await startFeed();
  });

  afterAll(async () => {
    await feed?.onModuleDestroy();
  });

  it('§10.6 a subscription after generation n receives exactly the visible events after n, in generation order, then live ones', async () => {
    const log = await startedLog();
    await log.append([status('TASK_STATE_WORKING', 'step 1/3')]);
    await log.append([chunk('3', false)]);
    await log.append([status('TASK_STATE_WORKING', 'step 2/3'), chunk('2', true)]);
    const subscription = feed.subscribe(log.task, 3);
    const caughtUp = await takeAtLeast(subscription, 3);
    expect(caughtUp).toEqual(await log.expectedAfter(3));
    expect(caughtUp.map((i) => i.id)).toStrictEqual([4, 5, 6]);
    // Live: a hidden event, then visible ones; ids skip the hidden generation.
    await log.append([lease(2)]);
    await log.append([status('TASK_STATE_WORKING', 'step 3/3')]);
    await log.append([chunk('1', true, true)]);
    await log.append([status('TASK_STATE_COMPLETED', 'done')]);
    const live = await drain(subscription);
    expect(subscription.ended).toBe('final');
    expect([...caughtUp, ...live]).toEqual(await log.expectedAfter(3));
    expect(live.map((i) => i.id)).toStrictEqual([8, 9, 10]);
  });

  it('§10.6 a subscription after 0 starts with the submitted task as generation 1, and hidden events never show', async () => {
    const log = await startedLog();
    await log.append([status('TASK_STATE_WORKING')]);
    await log.append([status('TASK_STATE_FAILED', 'boom')]);
    const items = await drain(feed.subscribe(log.task, 0));
    expect(items).toEqual(await log.expectedAfter(0));
    expect(items.map((i) => i.id)).toStrictEqual([1, 3, 4]);
    expect('task' in items[0]!.response).toBe(true);
  });

  it('§10.6 a subscription ends with "final" after a terminal status and after an interrupted one, and leaves the feed', async () => {
    const before = feed.size;
    for (const end of ['TASK_STATE_CANCELED', 'TASK_STATE_INPUT_REQUIRED'] as const) {
      const log = await startedLog();
      const subscription = feed.subscribe(log.task, 2);
      expect(feed.size).toBe(before + 1);
      await log.append([status('TASK_STATE_WORKING')]);
      await log.append([status(end, 'stop here')]);
      const items = await drain(subscription);
      expect(subscription.ended).toBe('final');
      expect(items.map((i) => i.id)).toStrictEqual([3, 4]);
      expect(feed.size).toBe(before);
      expect(await subscription.take()).toStrictEqual([]);
    }
  });

  it('§10.6 a "terminal" subscription (SubscribeToTask) stays open through INPUT_REQUIRED and AUTH_REQUIRED and ends at the terminal status, while a "turn" subscription of the same task ends at INPUT_REQUIRED', async () => {
    const log = await startedLog();
    const turn = feed.subscribe(log.task, 2, 'turn');
    const follower = feed.subscribe(log.task, 2, 'terminal');
    const fromTurn = drain(turn);
    const fromFollower = drain(follower);
    await log.append([status('TASK_STATE_INPUT_REQUIRED', 'your name?')]);
    expect((await fromTurn).map((i) => i.id)).toStrictEqual([3]);
    expect(turn.ended).toBe('final');
    // Continued on another connection: the follower carries the rest of the task.
    await sleep(50);
    expect(follower.ended).toBeNull();
    await log.append([status('TASK_STATE_WORKING')]);
    await log.append([status('TASK_STATE_AUTH_REQUIRED', 'sign in')]);
    await log.append([status('TASK_STATE_WORKING')]);
    await log.append([chunk('hello', false, true)]);
    await log.append([status('TASK_STATE_COMPLETED')]);
    expect(await fromFollower).toEqual(await log.expectedAfter(2));
    expect(follower.ended).toBe('final');
  });

  it('tenant isolation: the same task id in two tenants is two channels; a subscriber sees only its tenant’s log, and the other tenant’s notices do not leak into it', async () => {
    const ref: TaskRef = { taskId: randomUUID(), contextId: randomUUID() };
    const mine = await startedLog(new TaskLog(TENANT, ref));
    const theirs = await startedLog(new TaskLog(tenantIdOf('other-tenant'), ref));
    const before = feed.tasks;
    const subscription = feed.subscribe(mine.task, 2);
    const other = feed.subscribe(theirs.task, 2);
    expect(feed.tasks).toBe(before + 2);
    const reading = drain(subscription);
    const otherReading = drain(other);
    for (let i = 1; i <= 3; i++) {
      await theirs.append([status('TASK_STATE_WORKING', `theirs ${i}`), chunk(`t${i}`, i > 1)]);
    }
    await mine.append([status('TASK_STATE_WORKING', 'mine')]);
    await theirs.append([status('TASK_STATE_COMPLETED', 'theirs done')]);
    await mine.append([status('TASK_STATE_COMPLETED', 'mine done')]);
    const got = await reading;
    expect(got).toEqual(await mine.expectedAfter(2));
    expect(got.map((i) => i.id)).toStrictEqual([3, 4]);
    expect(JSON.stringify(got)).not.toContain('theirs');
    expect(await otherReading).toEqual(await theirs.expectedAfter(2));
  });

  it('§10.6 two subscribers on one task each get every event, in the same order', async () => {
    const log = await startedLog();
    const a = feed.subscribe(log.task, 2);
    const b = feed.subscribe(log.task, 2);
    const reading = Promise.all([drain(a), drain(b)]);
    for (let step = 5; step >= 1; step--) {
      await log.append([status('TASK_STATE_WORKING', `step ${6 - step}/5`)]);
      await log.append([chunk(String(step), step < 5, step === 1)]);
    }
    await log.append([status('TASK_STATE_COMPLETED')]);
    const [fromA, fromB] = await reading;
    const expected = await log.expectedAfter(2);
    expect(expected).toHaveLength(11);
    expect(fromA).toEqual(expected);
    expect(fromB).toEqual(expected);
    // Closing one subscriber affects no other.
    const c = feed.subscribe(log.task, 0);
    const d = feed.subscribe(log.task, 0);
    c.close('closed');
    expect(await drain(d)).toEqual(await log.expectedAfter(0));
  });

  it('ARCHITECTURE "Notices are hints": events appended WITHOUT a notice are still delivered, by the fallback poll', async () => {
    const log = await startedLog();
    const subscription = feed.subscribe(log.task, 2);
    await sleep(100);
    for (let i = 0; i < 2; i++) {
      await log.append([status('TASK_STATE_WORKING', `silent ${i}`)], false);
      const items = await takeAtLeast(subscription, 1);
      expect(items.map((x) => x.id)).toStrictEqual([3 + i]);
    }
    subscription.close('closed');
  });

  it('DESIGN "woken by NOTIFY": a notified append reaches a waiting subscriber without the poll', async () => {
    // The fallback poll's interval is on a fake clock that never moves: only the notices can deliver.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const { feed: quiet, observed } = await startObservedFeed();
    try {
      const log = await startedLog();
      const subscription = quiet.subscribe(log.task, 2);
      await eventually(() => observed.reads.length === 1, 10_000, 'the read at the start');
      for (let i = 0; i < 5; i++) {
        await log.append([status('TASK_STATE_WORKING', `loud ${i}`)]);
        const items = await takeAtLeast(subscription, 1);
        expect(items.map((x) => x.id)).toStrictEqual([3 + i]);
      }
      subscription.close('closed');
      expect(observed.polls).toBe(0);
    } finally {
      await quiet.onModuleDestroy();
      vi.useRealTimers();
    }
  });

  it('§10.6 streams end when the server shuts down: every subscription ends with "shutdown"', async () => {
    const other = await startFeed();
    const log = await startedLog();
    const subscription = other.subscribe(log.task, 2);
    const waiting = subscription.take();
    await other.onModuleDestroy();
    expect(await waiting).toStrictEqual([]);
    expect(subscription.ended).toBe('shutdown');
    expect(other.size).toBe(0);
  });

  describe('STREAM_MAX_PENDING_EVENTS = 5', () => {
    const BOUND = 5;
    let small: TaskEventFeed;

    beforeAll(async () => {
      small = await startFeed(BOUND);
    });

    afterAll(async () => {
      await small?.onModuleDestroy();
    });

    it('§7.3 mid-stream error, STREAM_MAX_PENDING_EVENTS: a subscriber that does not take() while more than the bound arrive ends with "overflow", holding at most the bound at any time', async () => {
      const log = await startedLog();
      const subscription = small.subscribe(log.task, 2);
      expect(small.size).toBe(1);
      let most = 0;
      for (let i = 1; i <= BOUND + 3 && !subscription.ended; i++) {
        await log.append([status('TASK_STATE_WORKING', `step ${i}`)]);
        // The subscription has read what was appended, as far as its buffer holds it (or it was cut off).
        await eventually(
          () => held(subscription) >= Math.min(i, BOUND) || subscription.ended !== null,
          10_000,
          `step ${i} read`,
        );
        most = Math.max(most, held(subscription));
      }
      await eventually(() => subscription.ended !== null, 10_000, 'the overflow');
      expect(subscription.ended).toBe('overflow');
      expect(most).toBeLessThanOrEqual(BOUND);
      expect(most).toBeGreaterThan(0);
      expect(held(subscription)).toBe(0);
      expect(await subscription.take()).toStrictEqual([]);
      expect(small.size).toBe(0);
      // Nothing keeps reading for it: later events do not refill the buffer.
      await log.append([status('TASK_STATE_WORKING', 'after the cut')]);
      await sleep(1_200);
      expect(held(subscription)).toBe(0);
    });

    it('§10.6 every stream gets every event: a subscriber that keeps up with live events is never cut off, however long the task', async () => {
      const log = await startedLog();
      const subscription = small.subscribe(log.task, 2);
      const items: StreamItem[] = [];
      for (let i = 1; i <= BOUND * 4; i++) {
        await log.append([status('TASK_STATE_WORKING', `step ${i}`)]);
        items.push(...(await takeAtLeast(subscription, 1)));
      }
      await log.append([status('TASK_STATE_COMPLETED')]);
      items.push(...(await drain(subscription)));
      expect(subscription.ended).toBe('final');
      expect(items).toEqual(await log.expectedAfter(2));
    });

    it('DESIGN "a subscriber that falls behind or reconnects catches up from the log by generation": a backlog larger than the bound is delivered to a subscriber that takes as fast as it can', async () => {
      const log = await startedLog();
      for (let i = 1; i <= BOUND * 3; i++) {
        await log.append([status('TASK_STATE_WORKING', `step ${i}`)]);
      }
      await log.append([status('TASK_STATE_COMPLETED')]);
      // Resuming after generation 2 (a Last-Event-ID): the log holds 16 events the client has not seen.
      const subscription = small.subscribe(log.task, 2);
      const items = await drain(subscription);
      expect(subscription.ended, 'the catching-up subscriber was cut off').toBe('final');
      expect(items).toEqual(await log.expectedAfter(2));
    });
  });

  it('§10.6 many writers on many tasks, many subscribers: each subscriber sees exactly its task’s log after its cursor, gap-free in visible generations', async () => {
    const TASKS = 6;
    const WRITERS = 3;
    const STEPS = 12;
    const logs = await Promise.all(Array.from({ length: TASKS }, () => startedLog()));
    interface Watch {
      log: TaskLog;
      after: number;
      reading: Promise<StreamItem[]>;
    }
    const watches: Watch[] = [];
    const watch = (log: TaskLog, after: number): void => {
      watches.push({ log, after, reading: drain(feed.subscribe(log.task, after), 30_000) });
    };
    logs.forEach((log) => [0, 2, 2].forEach((after) => watch(log, after)));
    const writing = logs.map(async (log) => {
      await Promise.all(
        Array.from({ length: WRITERS }, async (_, w) => {
          for (let i = 0; i < STEPS; i++) {
            const events =
              i % 5 === 4
                ? [lease(100 + w * STEPS + i), status('TASK_STATE_WORKING', `w${w} ${i}`)]
                : [chunk(`w${w}-${i}`, true)];
            // Every third append goes without a notice: the poll must cover it.
            const version = await log.append(events, i % 3 !== 2);
            if (i === STEPS / 2 && w === 0) {
              watch(log, version); // a subscriber that joins mid-way
            }
          }
        }),
      );
      await log.append([status('TASK_STATE_COMPLETED')]);
    });
    await Promise.all(writing);
    const results = await Promise.all(watches.map((w) => w.reading));
    expect(watches).toHaveLength(TASKS * 4);
    for (const [index, w] of watches.entries()) {
      const expected = await w.log.expectedAfter(w.after);
      const got = results[index]!;
      expect(got.map((i) => i.id)).toStrictEqual(expected.map((i) => i.id));
      expect(got).toEqual(expected);
      // Gap-free in visible generations: every generation in (after, end] that is not hidden is present.
      const all = await readStream<TaskEvent>(db.pool, TENANT, w.log.streamId, w.after);
      const visible = all.filter((e) => !HIDDEN.has(e.event.type)).map((e) => e.streamVersion);
      expect(got.map((i) => i.id)).toStrictEqual(visible);
    }
    expect(feed.size).toBe(0);
  });
});

/**
 * The feed's view of the database, for the shared-read tests: counts its log reads (by the generation they
 * start after) and its answered version polls, can hold a read's answer back until the test lets it go (so
 * that the shared reader moves on while a subscriber is catching up), and can fail every query (the database
 * is away for the feed only; the test's writes still go through).
 */
class ObservedPool {
  /** `after` of every log read, in order. */
  readonly reads: number[] = [];
  /** Version polls answered. */
  polls = 0;
  failing = false;
  /** Holds back the answer of a log read after `after` until the promise settles (undefined: none). */
  hold: (after: number) => Promise<void> | undefined = () => undefined;

  readonly pool = {
    query: async (text: string, values?: unknown[]): Promise<unknown> => {
      const isRead = text.includes('events.messages');
      if (isRead) {
        this.reads.push(Number(values?.[2]));
      }
      if (this.failing) {
        throw new Error('Connection terminated unexpectedly (simulated outage)');
      }
      const result: unknown = await db.pool.query(text, values);
      if (isRead) {
        await this.hold(Number(values?.[2]));
      } else if (text.includes('events.streams')) {
        this.polls++;
      }
      return result;
    },
  } as unknown as Pool;

  reset(): void {
    this.reads.length = 0;
    this.polls = 0;
  }
}

async function startObservedFeed(
  maxPending = 1_000,
  local?: LocalCommits,
): Promise<{ feed: TaskEventFeed; observed: ObservedPool }> {
  const observed = new ObservedPool();
  const feed = new TaskEventFeed(observed.pool, feedConfig(maxPending), local);
  await feed.onModuleInit();
  return { feed, observed };
}

/**
 * A task-service in the same process, as the standalone has one: it appends (with the notice, which reaches
 * the feed first), and only then tells its listeners what it committed.
 */
class SameProcessCommits extends LocalCommits {
  private readonly listeners = new Set<LocalCommitListener>();
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly versions = new Map<string, number>();

  subscribe(listener: LocalCommitListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  settling(task: TenantTaskRef): Promise<void> | undefined {
    return this.inFlight.get(`${task.tenantId}/${task.taskId}`);
  }

  version(task: TenantTaskRef): number | undefined {
    return this.versions.get(`${task.tenantId}/${task.taskId}`);
  }

  /** A change made elsewhere: what this process knew of the task is stale. */
  forget(log: TaskLog): void {
    this.versions.delete(`${log.tenant}/${log.ref.taskId}`);
  }

  async commit(log: TaskLog, events: TaskEvent[]): Promise<void> {
    const k = `${log.tenant}/${log.ref.taskId}`;
    let done: () => void = () => undefined;
    this.inFlight.set(
      k,
      new Promise<void>((resolve) => {
        done = resolve;
      }),
    );
    try {
      const version = await log.append(events);
      // The notice is on its way meanwhile; the result of the commit comes later.
      await sleep(50);
      const from = version - events.length;
      const committed = events.map((event, i) => ({ version: from + i + 1, event }));
      this.versions.set(k, version);
      this.listeners.forEach((listener) => listener(log.task, committed));
    } finally {
      this.inFlight.delete(k);
      done();
    }
  }
}

describe('ADR 0008 shared per-task reads', () => {
  it('in the process that commits the changes, subscribers get them without a log read; a change made elsewhere is read', async () => {
    const commits = new SameProcessCommits();
    const { feed, observed } = await startObservedFeed(1_000, commits);
    try {
      const log = await startedLog();
      const subscriptions = [feed.subscribe(log.task, 2), feed.subscribe(log.task, 2)];
      await eventually(() => observed.reads.length === 1, 10_000, 'the read at the start');
      await sleep(50);
      observed.reset();
      const received: StreamItem[][] = subscriptions.map(() => []);
      const take = (count: number) =>
        Promise.all(
          subscriptions.map(async (s, n) => received[n]!.push(...(await takeAtLeast(s, count)))),
        );
      for (let i = 1; i <= 3; i++) {
        await commits.commit(log, [status('TASK_STATE_WORKING', `here ${i}`)]);
        await take(1);
      }
      // The notices arrived before each commit's result, and waited for it: no read at all.
      expect(observed.reads).toStrictEqual([]);
      // A subscriber of another task this process just wrote, from its newest generation: no read at the start.
      const other = await startedLog();
      await commits.commit(other, [status('TASK_STATE_WORKING', 'other')]);
      const fresh = feed.subscribe(other.task, 3);
      await sleep(100);
      expect(observed.reads).toStrictEqual([]);
      await commits.commit(other, [status('TASK_STATE_COMPLETED', 'other done')]);
      expect(await drain(fresh)).toEqual(await other.expectedAfter(3));
      expect(observed.reads).toStrictEqual([]);

      // Made elsewhere (another replica), notified: read, once.
      commits.forget(log);
      await log.append([status('TASK_STATE_WORKING', 'elsewhere')]);
      await take(1);
      expect(observed.reads).toStrictEqual([5]);

      // Made elsewhere without a notice, then a local commit after it: the gap is read, nothing is skipped.
      observed.reset();
      await log.append([status('TASK_STATE_WORKING', 'unnoticed')], false);
      await commits.commit(log, [status('TASK_STATE_COMPLETED', 'done')]);
      const rest = await Promise.all(subscriptions.map((s) => drain(s)));
      rest.forEach((items, n) => received[n]!.push(...items));
      expect(observed.reads).toStrictEqual([6]);
      const expected = await log.expectedAfter(2);
      received.forEach((items) => expect(items).toEqual(expected));
    } finally {
      await feed.onModuleDestroy();
    }
  });

  it('N subscribers of one task cost one log read per wake-up; idle ones cost no read, only one version query per poll for all tasks', async () => {
    // The fallback poll's interval is on the test's clock: it polls when the test moves the clock on.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const { feed, observed } = await startObservedFeed();
    try {
      const N = 50;
      const log = await startedLog();
      const subscriptions = Array.from({ length: N }, () => feed.subscribe(log.task, 2));
      expect({ size: feed.size, tasks: feed.tasks }).toStrictEqual({ size: N, tasks: 1 });
      await eventually(() => observed.reads.length === 1, 10_000, 'the read at the start');
      await sleep(100);
      // The first subscriber's channel read once at the start; the 49 others joined it without a query.
      expect(observed.reads).toStrictEqual([2]);

      observed.reset();
      const received: StreamItem[][] = subscriptions.map(() => []);
      for (let i = 1; i <= 5; i++) {
        await log.append([status('TASK_STATE_WORKING', `step ${i}`)]);
        await Promise.all(
          subscriptions.map(async (s, n) => received[n]!.push(...(await takeAtLeast(s, 1)))),
        );
      }
      // Five notified appends, fifty subscribers: five reads, each after the previous generation.
      expect(observed.reads).toStrictEqual([2, 3, 4, 5, 6]);
      const expected = await log.expectedAfter(2);
      received.forEach((items) => expect(items).toEqual(expected));

      // Idle, with 20 more followed tasks of 5 subscribers each: no log read, one version query per poll.
      const others = await Promise.all(Array.from({ length: 20 }, () => startedLog()));
      const more = others.flatMap((other) =>
        Array.from({ length: 5 }, () => feed.subscribe(other.task, 2)),
      );
      await eventually(() => observed.reads.length === 5 + 20, 10_000, 'the 20 start reads');
      observed.reset();
      for (let poll = 1; poll <= 2; poll++) {
        await vi.advanceTimersToNextTimerAsync();
        await eventually(() => observed.polls === poll, 10_000, `poll ${poll}`);
      }
      expect(observed.reads).toStrictEqual([]);
      expect(observed.polls).toBe(2);

      // An append without a notice: the poll finds that one stream moved and reads only it, once.
      observed.reset();
      await others[7]!.append([status('TASK_STATE_WORKING', 'silent')], false);
      await vi.advanceTimersToNextTimerAsync();
      const silent = more.slice(35, 40);
      await Promise.all(silent.map((s) => takeAtLeast(s, 1)));
      expect(observed.reads).toStrictEqual([2]);
      [...subscriptions, ...more].forEach((s) => s.close('closed'));
      expect({ size: feed.size, tasks: feed.tasks }).toStrictEqual({ size: 0, tasks: 0 });
    } finally {
      await feed.onModuleDestroy();
      vi.useRealTimers();
    }
  });

  it('late joiners from an older generation get exactly the missing events, then the live ones, even when the shared reader moves on during their catch-up', async () => {
    const { feed, observed } = await startObservedFeed();
    try {
      const log = await startedLog();
      for (let i = 1; i <= 4; i++) {
        await log.append([status('TASK_STATE_WORKING', `before ${i}`)]);
      }
      // Generation 6. A live subscriber from there, then three late joiners from older generations (a
      // snapshot taken earlier, Last-Event-ID resumptions) whose first read's answer (up to 6) is held back.
      const live = feed.subscribe(log.task, 6);
      await eventually(() => observed.reads.length === 1, 10_000, 'the read at the start');
      const joinAfter = [0, 2, 4];
      let answersHeld = 0;
      let letGo: () => void = () => undefined;
      const heldBack = new Promise<void>((resolve) => {
        letGo = resolve;
      });
      observed.hold = (after) => {
        if (!joinAfter.includes(after)) {
          return undefined;
        }
        answersHeld += 1;
        return heldBack;
      };
      const joiners = joinAfter.map((after) => feed.subscribe(log.task, after));
      const draining = [live, ...joiners].map((s) => drain(s));
      await eventually(
        () => answersHeld === joinAfter.length,
        10_000,
        'the joiners’ first answers',
      );
      // Meanwhile the shared reader delivers generations 7–9 to the live subscriber.
      for (let i = 1; i <= 3; i++) {
        await log.append([status('TASK_STATE_WORKING', `during ${i}`)]);
      }
      // The reader has moved past 6 once it reads after 7 or later: after one read of 7–9 together (their
      // notices can arrive together on a busy machine), the next is after 9.
      await eventually(() => observed.reads.some((a) => a >= 7), 10_000, 'a read after 7 or later');
      observed.hold = () => undefined;
      letGo();
      // Every joiner's first answer ended at 6, behind the reader (7 or later): each reads again from 6.
      await eventually(
        () => observed.reads.filter((after) => after === 6).length >= 1 + joinAfter.length,
        10_000,
        'the joiners’ reads from 6',
      );
      await log.append([lease(2)]);
      await log.append([status('TASK_STATE_WORKING', 'after')]);
      await log.append([status('TASK_STATE_COMPLETED')]);
      const [fromLive, ...fromJoiners] = await Promise.all(draining);
      expect(fromLive).toEqual(await log.expectedAfter(6));
      for (const [n, after] of joinAfter.entries()) {
        expect(fromJoiners[n]).toEqual(await log.expectedAfter(after));
      }
      expect(feed.size).toBe(0);
    } finally {
      await feed.onModuleDestroy();
    }
  });

  it('late joiners while writers append concurrently: every subscriber gets exactly its part of the log', async () => {
    const { feed } = await startObservedFeed();
    try {
      const log = await startedLog();
      const watches: { after: number; reading: Promise<StreamItem[]> }[] = [];
      const watch = (after: number): void => {
        watches.push({ after, reading: drain(feed.subscribe(log.task, after), 30_000) });
      };
      watch(2);
      const writers = Array.from({ length: 3 }, async (_, w) => {
        for (let i = 0; i < 15; i++) {
          const version = await log.append(
            [i % 4 === 3 ? lease(10 + w * 15 + i) : chunk(`w${w}-${i}`, true)],
            i % 5 !== 4,
          );
          if (w === 0) {
            // Joiners at every distance behind the head: current, just behind, far behind, from 0.
            [version, version - 1, Math.max(0, version - 7), 0].forEach(watch);
          }
        }
      });
      await Promise.all(writers);
      await log.append([status('TASK_STATE_COMPLETED')]);
      const results = await Promise.all(watches.map((w) => w.reading));
      for (const [index, w] of watches.entries()) {
        expect(results[index]!.map((i) => i.id)).toStrictEqual(
          (await log.expectedAfter(w.after)).map((i) => i.id),
        );
      }
      expect(feed.size).toBe(0);
    } finally {
      await feed.onModuleDestroy();
    }
  });

  it('§7.3 the slow-subscriber cut-off stays per subscriber: one that takes nothing is cut off, one that takes slowly catches up from the log, the others are unaffected', async () => {
    const BOUND = 5;
    const { feed } = await startObservedFeed(BOUND);
    try {
      const log = await startedLog();
      const fast = feed.subscribe(log.task, 2);
      const slow = feed.subscribe(log.task, 2);
      const stuck = feed.subscribe(log.task, 2);
      const fromFast = drain(fast);
      const fromSlow = (async (): Promise<StreamItem[]> => {
        const items: StreamItem[] = [];
        for (;;) {
          // Under the 2 s stall limit, but far slower than the writes.
          await sleep(150);
          const batch = await slow.take();
          if (batch.length === 0) {
            return items;
          }
          items.push(...batch);
        }
      })();
      let most = 0;
      for (let i = 1; i <= BOUND * 4; i++) {
        await log.append([status('TASK_STATE_WORKING', `step ${i}`)]);
        most = Math.max(most, held(stuck));
      }
      await eventually(() => stuck.ended !== null, 10_000, 'the cut-off');
      expect(stuck.ended).toBe('overflow');
      expect(most).toBeLessThanOrEqual(BOUND);
      await log.append([status('TASK_STATE_COMPLETED')]);
      const expected = await log.expectedAfter(2);
      expect(await fromFast).toEqual(expected);
      expect(await fromSlow).toEqual(expected);
      expect({ fast: fast.ended, slow: slow.ended }).toStrictEqual({
        fast: 'final',
        slow: 'final',
      });
      expect(feed.size).toBe(0);
    } finally {
      await feed.onModuleDestroy();
    }
  });

  it('docs/failure-model.md: a read failure shorter than the grace costs nothing; a longer one ends live and catching-up streams with "error", and resuming from the last id catches up exactly', async () => {
    // The grace counts from `Date.now()` and the fallback poll runs on an interval: both on the test's own
    // clock, which moves only when the test moves it (the database and its notices stay real).
    vi.useFakeTimers({ toFake: ['Date', 'setInterval', 'clearInterval'] });
    const { feed, observed } = await startObservedFeed();
    try {
      const log = await startedLog();
      const live = feed.subscribe(log.task, 2);
      const got: StreamItem[] = [];
      await log.append([status('TASK_STATE_WORKING', 'one')]);
      got.push(...(await takeAtLeast(live, 1)));

      // A blip: a failing read and a failing poll while the task moves on. Nothing is lost.
      observed.failing = true;
      observed.reset();
      await log.append([status('TASK_STATE_WORKING', 'during the blip')]);
      await eventually(() => observed.reads.length > 0, 10_000, 'the read the notice asked for');
      await vi.advanceTimersToNextTimerAsync();
      observed.failing = false;
      await vi.advanceTimersToNextTimerAsync();
      got.push(...(await takeAtLeast(live, 1)));
      expect(live.ended).toBeNull();
      expect(got).toEqual(await log.expectedAfter(2));

      // An outage: the live subscription and one catching up end with a retryable error after the grace.
      observed.failing = true;
      observed.reset();
      const catching = feed.subscribe(log.task, 0);
      await log.append([status('TASK_STATE_WORKING', 'during the outage')]);
      const lastLive = got.at(-1)!.id;
      await eventually(
        () => observed.reads.includes(lastLive),
        10_000,
        'the read the notice asked for',
      );
      // Three seconds of failing reads and polls: both streams still wait for the database…
      await vi.advanceTimersByTimeAsync(3_000);
      expect({ live: live.ended, catching: catching.ended }).toStrictEqual({
        live: null,
        catching: null,
      });
      // …and the first poll past the grace ends both.
      await vi.advanceTimersToNextTimerAsync();
      expect({ live: live.ended, catching: catching.ended }).toStrictEqual({
        live: 'error',
        catching: 'error',
      });
      got.push(...(await live.take()));
      expect(await live.take()).toStrictEqual([]);
      observed.failing = false;

      // The client resumes with Last-Event-ID: exactly the events it missed, then the live ones.
      const lastId = got.at(-1)!.id;
      await log.append([status('TASK_STATE_WORKING', 'after the outage')]);
      const resumed = feed.subscribe(log.task, lastId);
      const rest = drain(resumed);
      await log.append([status('TASK_STATE_COMPLETED')]);
      expect([...got, ...(await rest)]).toEqual(await log.expectedAfter(2));
      expect(feed.size).toBe(0);
    } finally {
      await feed.onModuleDestroy();
      vi.useRealTimers();
    }
  });

  it('docs/failure-model.md: when the LISTEN connection is cut, notices sent meanwhile are lost, and the reconnect (or the poll) catches every stream up', async () => {
    const { feed } = await startObservedFeed();
    try {
      const logs = await Promise.all([startedLog(), startedLog()]);
      const subscriptions = logs.map((log) => feed.subscribe(log.task, 2));
      const reading = subscriptions.map((s) => drain(s));
      await sleep(200);
      const cut = await db.pool.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE datname = current_database() AND application_name = 'a2a-ingress:listen'`,
      );
      expect(cut.rowCount).toBeGreaterThan(0);
      for (const log of logs) {
        await log.append([status('TASK_STATE_WORKING', 'while the LISTEN connection is down')]);
      }
      for (const log of logs) {
        await log.append([status('TASK_STATE_COMPLETED')]);
      }
      const results = await Promise.all(reading);
      for (const [n, log] of logs.entries()) {
        expect(results[n]).toEqual(await log.expectedAfter(2));
      }
    } finally {
      await feed.onModuleDestroy();
    }
  });
});

describe('the SSE writer over a real socket (§10.6 "closing one stream must not affect others")', () => {
  let feed: TaskEventFeed;
  let server: Server;
  let baseUrl: string;
  let log: TaskLog;
  const finished: Promise<void>[] = [];

  beforeAll(async () => {
    feed = await startFeed();
    log = await startedLog();
    // The way the JSON-RPC controller serves a stream: read the body first, then write the events.
    server = createServer((req, res) => {
      finished.push(
        (async () => {
          await readBody(req as unknown as Request, 65_536);
          const subscription = feed.subscribe(log.task, 2);
          const response = Object.assign(res, {
            status(code: number) {
              res.statusCode = code;
              return response;
            },
          });
          const stream = await writeSse(
            response as unknown as Response,
            { data: (item) => item.response, error: (reason) => ({ error: reason }) },
            null,
            subscription,
          );
          await stream.ended;
        })(),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    await feed?.onModuleDestroy();
  });

  it('§10.6 closing one stream must not affect others: a client that disconnects mid-stream releases its subscription; the writer ends once the task does, and another client is unaffected', async () => {
    const open = async (): Promise<{
      controller: AbortController;
      reader: ReadableStreamDefaultReader<Uint8Array>;
    }> => {
      const controller = new AbortController();
      const response = await fetch(baseUrl, {
        method: 'POST',
        body: '{}',
        signal: controller.signal,
      });
      expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
      return { controller, reader: response.body!.getReader() };
    };
    const leaving = await open();
    const staying = await open();
    await eventually(() => feed.size === 2, 10_000, 'two subscriptions');
    await log.append([status('TASK_STATE_WORKING', 'step 1')]);
    let received = '';
    while (!received.includes('\n\n')) {
      const { done, value } = await leaving.reader.read();
      expect(done).toBe(false);
      received += new TextDecoder().decode(value);
    }
    expect(received).toMatch(/^id: 3\n/);
    leaving.controller.abort();
    leaving.reader.cancel().catch(() => undefined);

    // The server notices the client is gone before any further event: its subscription is released.
    const released = await eventually(() => feed.size === 1, 10_000, 'the release').then(
      () => true,
      () => false,
    );
    // Let the task end; the other client still gets everything, and every writer returns.
    await log.append([status('TASK_STATE_WORKING', 'step 2')]);
    await log.append([status('TASK_STATE_COMPLETED')]);
    let text = '';
    for (;;) {
      const { done, value } = await staying.reader.read();
      if (done) {
        break;
      }
      text += new TextDecoder().decode(value);
    }
    expect([...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]))).toStrictEqual([3, 4, 5]);
    const allReturned = await Promise.race([
      Promise.all(finished).then(() => true),
      sleep(10_000).then(() => false),
    ]);
    // released: the subscription of the client that left is closed with no further event to write.
    // allReturned: every stream's writer ended once the task did.
    expect({ released, allReturned }).toStrictEqual({ released: true, allReturned: true });
    expect(feed.size).toBe(0);
  });
});

describe('the SSE writer under backpressure (§7.3 STREAM_MAX_PENDING_EVENTS = 5, STREAM_STALL_MS = 2000)', () => {
  let feed: TaskEventFeed;
  let server: Server;
  let port: number;
  let log: TaskLog;
  const ended: Promise<void>[] = [];
  const endings: (string | null)[] = [];

  beforeAll(async () => {
    feed = await startFeed(5);
    log = await startedLog();
    server = createServer((req, res) => {
      ended.push(
        (async () => {
          await readBody(req as unknown as Request, 65_536);
          const response = Object.assign(res, {
            status(code: number) {
              res.statusCode = code;
              return response;
            },
          });
          const subscription = feed.subscribe(log.task, 2);
          const stream = await writeSse(
            response as unknown as Response,
            { data: (item) => item.response, error: (reason) => ({ error: reason }) },
            null,
            subscription,
          );
          await stream.ended;
          endings.push(subscription.ended);
        })(),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    await feed?.onModuleDestroy();
  });

  it('a client that stops reading fills its socket, is cut off and disconnected; a client of the same task that reads gets every event to the end', async () => {
    /** A raw HTTP client: `reading` false never reads after the headers, so the server's writes pile up. */
    const open = (reading: boolean) => {
      let text = '';
      let closed = false;
      let paused = false;
      const socket = connect(port, '127.0.0.1');
      socket.setEncoding('utf8');
      socket.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}');
      socket.on('data', (chunk: string) => {
        text += chunk;
        if (!reading && !paused && text.includes('\r\n\r\n')) {
          paused = true;
          socket.pause();
        }
      });
      socket.on('close', () => (closed = true));
      socket.on('error', () => undefined);
      return {
        socket,
        text: () => text,
        closed: () => closed,
        // The last chunk of the chunked body: the stream is over (the connection may be kept alive).
        ended: () => text.endsWith('\r\n0\r\n\r\n'),
      };
    };
    const stuck = open(false);
    const reader = open(true);
    await eventually(() => feed.size === 2, 10_000, 'two subscriptions');
    // Large events (256 KiB of text each): a few megabytes fill both socket buffers of the stuck client.
    const big = 'x'.repeat(256 * 1024);
    for (let i = 0; i < 40; i++) {
      await log.append([chunk(`${i}:${big}`, i > 0)]);
    }
    await eventually(() => feed.size === 1, 10_000, 'the stuck client cut off');
    expect(endings).toStrictEqual(['overflow']);
    // Its connection was destroyed: reading again, the client finds it closed.
    stuck.socket.resume();
    await eventually(() => stuck.closed(), 10_000, 'the stuck client disconnected');
    await log.append([status('TASK_STATE_COMPLETED')]);
    await eventually(() => reader.ended(), 10_000, 'the reading client’s stream ended');
    const ids = [...reader.text().matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
    expect(ids).toStrictEqual((await log.expectedAfter(2)).map((i) => i.id));
    expect(ids).toHaveLength(41);
    await Promise.all(ended);
    expect(endings).toStrictEqual(['overflow', 'final']);
    expect(feed.size).toBe(0);
    stuck.socket.destroy();
  });
});

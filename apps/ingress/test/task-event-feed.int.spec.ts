/**
 * TaskEventFeed against real Postgres (spec digest §10.6; DESIGN.md "Live updates across replicas"): events
 * are appended to task streams the way the task-service does (appendToStream in a transaction, then
 * `pg_notify` on the platform channel) and read back through subscriptions. A subscription must carry exactly
 * the log's client-visible events after its cursor, in generation order, with no gap and no duplicate,
 * whether woken by a notice or by the fallback poll; its memory is bounded; it ends after a terminal or
 * interrupted status. The last block drives the SSE writer over a real socket: a client that goes away must
 * release its subscription.
 */
import type { Message, TaskStateName, TaskStatus } from '@lib/a2a-protocol';
import { ingressSchema, loadConfig, postgresSchema } from '@lib/config';
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
import { createTestDatabase, type TestDatabase } from '@lib/testing';
import type { Request, Response } from 'express';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readBody } from '../src/http/read-body';
import { writeSse } from '../src/streaming/sse-writer';
import {
  TaskEventFeed,
  type StreamItem,
  type TaskSubscription,
} from '../src/streaming/task-event-feed';

const TENANT = 'feed-tenant';
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
  readonly ref: TaskRef = { taskId: randomUUID(), contextId: randomUUID() };

  get streamId(): string {
    return taskStreamId(TENANT, this.ref.taskId);
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
            [TENANT, this.streamId],
          );
          const expected = current.rows[0]?.version ?? 0;
          const stored = await appendToStream(
            client,
            TENANT,
            this.streamId,
            expected,
            events.map((event) => ({ event, schemaVersion: TASK_EVENT_SCHEMA_VERSION })),
            META,
          );
          const version = stored[stored.length - 1]?.streamVersion ?? expected;
          if (notify) {
            const notice = { k: 'task', t: TENANT, id: this.ref.taskId, v: version };
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
    const events = await readStream<TaskEvent>(db.pool, TENANT, this.streamId, after);
    return events.flatMap((stored) => {
      const response = toStreamResponse(stored.event, this.ref);
      return response ? [{ id: stored.streamVersion, response }] : [];
    });
  }
}

/** A log with a submitted task and its lease: generations 1 (visible) and 2 (hidden). */
async function startedLog(): Promise<TaskLog> {
  const log = new TaskLog();
  await log.append([submitted(log.ref)]);
  await log.append([lease(1)]);
  return log;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function feedConfig(maxPending: number) {
  return loadConfig(postgresSchema.merge(ingressSchema), {
    POSTGRES_URL: db.url,
    STREAM_MAX_PENDING_EVENTS: String(maxPending),
    // A subscriber that leaves its full buffer alone this long is cut off.
    STREAM_STALL_MS: '500',
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

/** Takes until the subscription ends; fails after `timeoutMs`. */
async function drain(subscription: TaskSubscription, timeoutMs = 10_000): Promise<StreamItem[]> {
  const deadline = Date.now() + timeoutMs;
  const items: StreamItem[] = [];
  for (;;) {
    const batch = await takeWithin(subscription, Math.max(1, deadline - Date.now()));
    if (batch.length === 0) {
      return items;
    }
    items.push(...batch);
  }
}

/** Takes until at least `count` items arrived; fails after `timeoutMs`. */
async function takeAtLeast(
  subscription: TaskSubscription,
  count: number,
  timeoutMs = 5_000,
): Promise<StreamItem[]> {
  const deadline = Date.now() + timeoutMs;
  const items: StreamItem[] = [];
  while (items.length < count) {
    const batch = await takeWithin(subscription, Math.max(1, deadline - Date.now()));
    if (batch.length === 0) {
      throw new Error(`subscription ended (${subscription.ended}) after ${items.length} items`);
    }
    items.push(...batch);
  }
  return items;
}

async function eventually(probe: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) {
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
    const subscription = feed.subscribe(TENANT, log.ref, 3);
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
    const items = await drain(feed.subscribe(TENANT, log.ref, 0));
    expect(items).toEqual(await log.expectedAfter(0));
    expect(items.map((i) => i.id)).toStrictEqual([1, 3, 4]);
    expect('task' in items[0]!.response).toBe(true);
  });

  it('§10.6 a subscription ends with "final" after a terminal status and after an interrupted one, and leaves the feed', async () => {
    const before = feed.size;
    for (const end of ['TASK_STATE_CANCELED', 'TASK_STATE_INPUT_REQUIRED'] as const) {
      const log = await startedLog();
      const subscription = feed.subscribe(TENANT, log.ref, 2);
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

  it('§10.6 two subscribers on one task each get every event, in the same order', async () => {
    const log = await startedLog();
    const a = feed.subscribe(TENANT, log.ref, 2);
    const b = feed.subscribe(TENANT, log.ref, 2);
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
    const c = feed.subscribe(TENANT, log.ref, 0);
    const d = feed.subscribe(TENANT, log.ref, 0);
    c.close('closed');
    expect(await drain(d)).toEqual(await log.expectedAfter(0));
  });

  it('ARCHITECTURE "Notices are hints": events appended WITHOUT a notice are still delivered, by the fallback poll, within 1.5 s', async () => {
    const log = await startedLog();
    const subscription = feed.subscribe(TENANT, log.ref, 2);
    await sleep(100);
    for (let i = 0; i < 2; i++) {
      const appendedAt = Date.now();
      await log.append([status('TASK_STATE_WORKING', `silent ${i}`)], false);
      const items = await takeAtLeast(subscription, 1, 2_000);
      expect(Date.now() - appendedAt).toBeLessThan(1_500);
      expect(items.map((x) => x.id)).toStrictEqual([3 + i]);
    }
    subscription.close('closed');
  });

  it('DESIGN "woken by NOTIFY": a notified append reaches a waiting subscriber well before the 1 s poll would', async () => {
    const log = await startedLog();
    const subscription = feed.subscribe(TENANT, log.ref, 2);
    await sleep(100);
    const latencies: number[] = [];
    for (let i = 0; i < 5; i++) {
      // Random offsets against the poll's phase: only notices make every delivery fast.
      await sleep(50 + Math.floor(Math.random() * 400));
      const appendedAt = Date.now();
      await log.append([status('TASK_STATE_WORKING', `loud ${i}`)]);
      await takeAtLeast(subscription, 1, 2_000);
      latencies.push(Date.now() - appendedAt);
    }
    subscription.close('closed');
    expect(Math.max(...latencies), `latencies ${latencies.join(', ')} ms`).toBeLessThan(250);
  });

  it('§10.6 streams end when the server shuts down: every subscription ends with "shutdown"', async () => {
    const other = await startFeed();
    const log = await startedLog();
    const subscription = other.subscribe(TENANT, log.ref, 2);
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
      const subscription = small.subscribe(TENANT, log.ref, 2);
      expect(small.size).toBe(1);
      let most = 0;
      for (let i = 1; i <= BOUND + 3 && !subscription.ended; i++) {
        await log.append([status('TASK_STATE_WORKING', `step ${i}`)]);
        // Give the subscription time to read what was appended.
        const seen = Date.now();
        while (
          Date.now() - seen < 200 &&
          held(subscription) < Math.min(i, BOUND) &&
          !subscription.ended
        ) {
          await sleep(5);
        }
        most = Math.max(most, held(subscription));
      }
      await eventually(() => subscription.ended !== null, 3_000, 'the overflow');
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
      const subscription = small.subscribe(TENANT, log.ref, 2);
      const items: StreamItem[] = [];
      for (let i = 1; i <= BOUND * 4; i++) {
        await log.append([status('TASK_STATE_WORKING', `step ${i}`)]);
        items.push(...(await takeAtLeast(subscription, 1, 3_000)));
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
      const subscription = small.subscribe(TENANT, log.ref, 2);
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
      watches.push({ log, after, reading: drain(feed.subscribe(TENANT, log.ref, after), 30_000) });
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
          const subscription = feed.subscribe(TENANT, log.ref, 2);
          const response = Object.assign(res, {
            status(code: number) {
              res.statusCode = code;
              return response;
            },
          });
          await writeSse(
            response as unknown as Response,
            { data: (item) => item.response, error: (reason) => ({ error: reason }) },
            null,
            subscription,
          );
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
    await eventually(() => feed.size === 2, 2_000, 'two subscriptions');
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
    const released = await eventually(() => feed.size === 1, 2_000, 'the release').then(
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
      sleep(3_000).then(() => false),
    ]);
    // released: the subscription of the client that left is closed within 2 s of its leaving.
    // allReturned: every writeSse call returned within 3 s of the task's end.
    expect({ released, allReturned }).toStrictEqual({ released: true, allReturned: true });
    expect(feed.size).toBe(0);
  });
});

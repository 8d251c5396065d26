import { tenantIdOf } from '@lib/ids';
/**
 * `TaskLog`, the one reader of `events.messages`, on a real Postgres: each reader's query shape, the tenant
 * in every stream read, the relay's commit-safe order, and the schema-version check on every read that makes
 * events.
 */
import { createTestDatabase, type TestDatabase } from '@lib/testing';
import { randomUUID } from 'node:crypto';
import type { PoolClient } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendToStream, type EventMetadata } from './event-store';
import { withTransaction } from './postgres';
import { TaskLog, UnreadableTaskEvent, type StreamRef } from './task-log';

const META: EventMetadata = { actor: { kind: 'system', id: 'test' }, binding: 'test' };

interface Appended {
  type: string;
  data: Record<string, unknown>;
  schemaVersion?: number;
}

let db: TestDatabase;
let log: TaskLog;

beforeAll(async () => {
  db = await createTestDatabase('task_log');
  log = new TaskLog(db.pool);
});

afterAll(async () => {
  await db?.drop();
});

const GLOBEX = tenantIdOf('globex');

/** A new task stream of `tenantId`. */
function aStream(tenantId = 'acme'): StreamRef {
  return { tenantId: tenantIdOf(tenantId), streamId: `task:${tenantId}:${randomUUID()}` };
}

const submitted = (contextId = 'ctx-1'): Appended => ({
  type: 'TaskSubmitted',
  data: { taskId: 't', contextId, agentId: 'echo' },
});
const status = (state: string): Appended => ({
  type: 'TaskStatusUpdated',
  data: { status: { state } },
});

/** Appends `events` at the stream's current version, in `client`'s transaction or one of their own. */
async function append(
  stream: StreamRef,
  events: readonly Appended[],
  metadata: EventMetadata = META,
  client?: PoolClient,
): Promise<void> {
  const write = async (c: PoolClient): Promise<void> => {
    const current = await c.query<{ version: number }>(
      'SELECT version FROM events.streams WHERE tenant_id = $1 AND stream_id = $2',
      [stream.tenantId, stream.streamId],
    );
    await appendToStream(
      c,
      stream.tenantId,
      stream.streamId,
      current.rows[0]?.version ?? 0,
      events.map((e) => ({
        event: { type: e.type, data: e.data },
        schemaVersion: e.schemaVersion ?? 1,
      })),
      metadata,
    );
  };
  await (client ? write(client) : withTransaction(db.pool, write));
}

describe('the task log', () => {
  it('reads the histories of several streams of several tenants in one query, with idempotency keys', async () => {
    const a = aStream('acme');
    const b = aStream('globex');
    await append(a, [submitted(), status('TASK_STATE_WORKING')]);
    await append(b, [submitted('ctx-b')], { ...META, idempotencyKey: 'k-1' });
    const absent = aStream('acme');
    const histories = await log.histories([a, b, absent]);
    expect(histories.get(a.streamId)).toEqual({
      events: [
        { type: 'TaskSubmitted', data: submitted().data },
        { type: 'TaskStatusUpdated', data: { status: { state: 'TASK_STATE_WORKING' } } },
      ],
      idempotencyKeys: [],
    });
    expect(histories.get(b.streamId)?.idempotencyKeys).toEqual(['k-1']);
    expect(histories.has(absent.streamId)).toBe(false);
  });

  it("reads a stream after a generation, at most `limit` events, never another tenant's (cross-tenant)", async () => {
    const stream = aStream('acme');
    await append(stream, [
      submitted(),
      status('TASK_STATE_WORKING'),
      status('TASK_STATE_COMPLETED'),
    ]);
    const read = await log.eventsAfter(stream, 1, 1);
    expect(read).toEqual([
      { version: 2, event: { type: 'TaskStatusUpdated', data: status('TASK_STATE_WORKING').data } },
    ]);
    expect((await log.eventsAfter(stream, 0, 10)).map((e) => e.version)).toEqual([1, 2, 3]);
    expect(await log.eventsAfter({ ...stream, tenantId: GLOBEX }, 0, 10)).toEqual([]);
    expect(await log.histories([{ ...stream, tenantId: GLOBEX }])).toEqual(new Map());
  });

  it('names the followed streams that moved past their position, with their version', async () => {
    const moved = aStream();
    const still = aStream();
    await append(moved, [submitted(), status('TASK_STATE_WORKING')]);
    await append(still, [submitted()]);
    expect(
      await log.moved([
        { ...still, position: 1 },
        { ...moved, position: 1 },
        { ...aStream(), position: 0 },
      ]),
    ).toEqual(new Map([[1, 2]]));
  });

  it("finds the trace context of the stream's latest message", async () => {
    const stream = aStream();
    const traced = (n: number): EventMetadata => ({
      ...META,
      traceparent: `00-${String(n).padStart(32, '0')}-${'1'.repeat(16)}-01`,
    });
    await append(stream, [submitted()], traced(1));
    await append(stream, [{ type: 'UserMessageAppended', data: {} }], traced(2));
    await append(stream, [status('TASK_STATE_WORKING')], traced(3));
    expect(await log.requestTrace(stream)).toBe(traced(2).traceparent);
    expect(await log.requestTrace(aStream())).toBeUndefined();
  });

  it('lists the streams of a category', async () => {
    const task = aStream('globex');
    const other = { tenantId: GLOBEX, streamId: `other:globex:${randomUUID()}` };
    await append(task, [submitted()]);
    await append(other, [submitted()]);
    const streams = await log.streamsOf('task');
    expect(streams).toContainEqual(task);
    expect(streams).not.toContainEqual(other);
  });

  it("gives an operator's timeline: null for no stream, the events after a generation otherwise", async () => {
    const stream = aStream();
    await append(stream, [submitted(), status('TASK_STATE_WORKING')]);
    expect(await log.timeline(aStream(), 0, 10)).toBeNull();
    expect(await log.timeline(stream, 2, 10)).toEqual([]);
    const [first, ...rest] = (await log.timeline(stream, 0, 1)) ?? [];
    expect(rest).toEqual([]);
    expect(first).toMatchObject({
      generation: 1,
      event: { type: 'TaskSubmitted' },
      schemaVersion: 1,
      metadata: META,
    });
    const recorded = await log.recordedAt(stream.tenantId, [
      { streamId: stream.streamId, version: 1 },
    ]);
    expect(recorded).toEqual(new Map([[stream.streamId, first?.recordedAt]]));
    expect(await log.recordedAt(GLOBEX, [{ streamId: stream.streamId, version: 1 }])).toEqual(
      new Map(),
    );
  });

  it('reads in commit-safe order: nothing of a transaction still running, nor of any after it', async () => {
    const from = await log.horizon();
    const early = aStream();
    const late = aStream();
    const ours = (events: readonly StreamRef[]): string[] =>
      events.map((e) => e.streamId).filter((id) => id === early.streamId || id === late.streamId);
    const open = await db.pool.connect();
    try {
      await open.query('BEGIN');
      await append(early, [submitted('ctx-early')], META, open);
      await append(late, [submitted('ctx-late'), status('TASK_STATE_WORKING')]);
      expect(ours(await log.committedAfter(from, 1_000))).toEqual([]);
      expect(ours(await log.changedAfter(from, 1_000))).toEqual([]);
      await open.query('COMMIT');
      await expect
        .poll(async () => ours(await log.committedAfter(from, 1_000)))
        .toEqual([early.streamId, late.streamId, late.streamId]);
    } finally {
      open.release();
    }
    const read = (await log.committedAfter(from, 1_000)).filter(
      (e) => e.streamId === late.streamId,
    );
    expect(read.map((e) => [e.streamVersion, e.event.type, e.contextId, e.agentId])).toEqual([
      [1, 'TaskSubmitted', 'ctx-late', 'echo'],
      [2, 'TaskStatusUpdated', 'ctx-late', 'echo'],
    ]);
    const changed = await log.changedAfter(from, 1_000);
    const last = changed.at(-1);
    expect(last?.streamId).toBe(late.streamId);
    expect(last?.cursor).toEqual({
      transactionId: read[1]?.transactionId,
      position: read[1]?.globalPosition,
    });
    expect(ours(await log.changedAfter(last!.cursor, 1_000))).toEqual([]);
  });

  // Last: the log keeps the unreadable event, and reads in commit order from before it refuse it from then on.
  it('refuses a registered event at a schema version it cannot read on every read that makes events, and passes on a type it does not know', async () => {
    const from = await log.horizon();
    const newer = aStream();
    await append(newer, [
      submitted(),
      { type: 'TaskSomethingNew', data: { x: 1 }, schemaVersion: 4 },
    ]);
    expect((await log.eventsAfter(newer, 1, 10)).map((e) => e.event)).toEqual([
      { type: 'TaskSomethingNew', data: { x: 1 } },
    ]);
    const unreadable = aStream();
    await append(unreadable, [{ ...status('TASK_STATE_WORKING'), schemaVersion: 2 }]);
    await expect(log.histories([unreadable])).rejects.toThrow(UnreadableTaskEvent);
    await expect(log.eventsAfter(unreadable, 0, 10)).rejects.toThrow(UnreadableTaskEvent);
    await expect(log.timeline(unreadable, 0, 10)).rejects.toThrow(
      'TaskStatusUpdated at schema version 2 cannot be read',
    );
    await expect
      .poll(() =>
        log.committedAfter(from, 1_000).then(
          () => 'read',
          (error: Error) => error.name,
        ),
      )
      .toBe('UnreadableTaskEvent');
  });
});

import { NOTICE_CHANNEL } from '@lib/event-store';
import { TASK_EVENT_SCHEMA_VERSION } from '@lib/task-domain';
import { agentIdOf, tenantIdOf } from '@lib/tenancy';
import { createTestDatabase, type TestDatabase } from '@lib/testing';
import { randomUUID } from 'node:crypto';
import type { PoolClient } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskBatch } from '../src/write/task-batch';

/**
 * events.append_task_batch against real Postgres with many streams that were never analyzed (a new deployment
 * a few minutes into its load) and a long work queue: a batch must reach the rows it writes by key, whatever
 * the tables' sizes (migration 20261208000000). The planner's defaults chose a sequential scan of every
 * stream, twice per batch; the work row of a finished task was looked for among all of its tenant's queued
 * and leased rows.
 */

const TENANT = tenantIdOf('plans');
const STREAMS = 5_000;
const QUEUED = 5_000;

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase('batch-plans');
  await db.pool.query(
    `INSERT INTO events.streams (tenant_id, stream_id, version)
     SELECT $1, 'task-' || n, 2 FROM generate_series(1, $2) AS n`,
    [TENANT, STREAMS],
  );
  await db.pool.query(
    `INSERT INTO ops.task_work (tenant_id, task_id, agent_id, status, queued_at, attempt)
     SELECT $1, 'queued-' || n, 'echo', 'queued', now(), 1 FROM generate_series(1, $2) AS n`,
    [TENANT, QUEUED],
  );
});

afterAll(async () => {
  await db?.drop();
});

/**
 * A batch that moves two existing streams from version 2 to 3 (the first one's task ends: its work row goes)
 * and creates one.
 */
function batch(): TaskBatch {
  const moved = [1 + Math.floor(Math.random() * (STREAMS / 2)), STREAMS / 2 + 1];
  const streams = [
    ...moved.map((n, i) => ({
      stream_index: i,
      tenant_id: TENANT,
      stream_id: `task-${n}`,
      expected_version: 2,
      version: 3,
    })),
    {
      stream_index: 2,
      tenant_id: TENANT,
      stream_id: `task-new-${randomUUID()}`,
      expected_version: 0,
      version: 1,
    },
  ];
  const timestamp = new Date().toISOString();
  return {
    channel: NOTICE_CHANNEL,
    claims: [],
    streams,
    events: streams.map((stream) => ({
      stream_index: stream.stream_index,
      tenant_id: stream.tenant_id,
      stream_id: stream.stream_id,
      event_id: randomUUID(),
      stream_version: stream.version,
      event_type: 'TaskStatusUpdated',
      schema_version: TASK_EVENT_SCHEMA_VERSION,
      data: { status: { state: 'TASK_STATE_WORKING', timestamp } },
      metadata: { actor: { kind: 'system', id: 'plans' } },
    })),
    views: [],
    work: [
      {
        stream_index: 0,
        tenant_id: TENANT,
        task_id: `queued-${1 + Math.floor(Math.random() * QUEUED)}`,
        agent_id: agentIdOf('echo'),
        status: 'idle',
        attempt: 1,
        lease_epoch: null,
        worker_id: null,
        lease_expires_at: null,
        cancel_deadline: null,
      },
    ],
    notices: [],
    audit: [],
  };
}

/** What one table saw of the transaction (pg_stat_xact_user_tables). */
interface TableScans {
  seqScans: number;
  indexScans: number;
  /** Rows fetched through an index. */
  indexRowsFetched: number;
  deleted: number;
}

interface EventRow {
  tenant_id: string;
  stream_id: string;
  stream_version: number;
}

interface Appended {
  outcomes: { stream_index: number; outcome: string }[];
  streams: TableScans;
  work: TableScans;
  /** The batch's events as written, and as its stream list says they belong. */
  events: EventRow[];
  expectedEvents: EventRow[];
}

/**
 * What the backend counted so far for the two tables. (These counts include earlier transactions of the same
 * connection whose counts were not flushed yet: only differences mean anything.)
 */
async function counted(client: PoolClient): Promise<Record<'streams' | 'task_work', TableScans>> {
  const result = await client.query<{
    relname: 'streams' | 'task_work';
    seq_scan: string;
    idx_scan: string;
    idx_tup_fetch: string;
    n_tup_del: string;
  }>(
    `SELECT relname, seq_scan, idx_scan, idx_tup_fetch, n_tup_del FROM pg_stat_xact_user_tables
      WHERE (schemaname, relname) IN (('events', 'streams'), ('ops', 'task_work'))`,
  );
  const table = (name: 'streams' | 'task_work'): TableScans => {
    const row = result.rows.find((r) => r.relname === name);
    return {
      seqScans: Number(row?.seq_scan ?? 0),
      indexScans: Number(row?.idx_scan ?? 0),
      indexRowsFetched: Number(row?.idx_tup_fetch ?? 0),
      deleted: Number(row?.n_tup_del ?? 0),
    };
  };
  return { streams: table('streams'), task_work: table('task_work') };
}

function minus(after: TableScans, before: TableScans): TableScans {
  return {
    seqScans: after.seqScans - before.seqScans,
    indexScans: after.indexScans - before.indexScans,
    indexRowsFetched: after.indexRowsFetched - before.indexRowsFetched,
    deleted: after.deleted - before.deleted,
  };
}

/**
 * Appends one batch in a transaction that is rolled back, with the scans of the two tables it made and the
 * stream of each event it wrote.
 */
async function appendAndCount(prepare?: (client: PoolClient) => Promise<void>): Promise<Appended> {
  const client = await db.pool.connect();
  try {
    await client.query('BEGIN');
    await prepare?.(client);
    const before = await counted(client);
    const sent = batch();
    const outcomes = await client.query<{ stream_index: number; outcome: string }>(
      'SELECT stream_index, outcome FROM events.append_task_batch($1::jsonb)',
      [JSON.stringify(sent)],
    );
    const after = await counted(client);
    const written = await client.query<{
      tenant_id: string;
      stream_id: string;
      stream_version: number;
    }>(
      `SELECT m.tenant_id, m.stream_id, m.stream_version
         FROM events.messages m WHERE m.event_id = ANY ($1::uuid[])
        ORDER BY m.stream_id`,
      [sent.events.map((event) => event.event_id)],
    );
    const expected = sent.streams
      .map((s) => ({ tenant_id: s.tenant_id, stream_id: s.stream_id, stream_version: s.version }))
      .sort((a, b) => (a.stream_id < b.stream_id ? -1 : 1));
    return {
      outcomes: outcomes.rows,
      streams: minus(after.streams, before.streams),
      work: minus(after.task_work, before.task_work),
      events: written.rows,
      expectedEvents: expected,
    };
  } finally {
    await client.query('ROLLBACK');
    client.release();
  }
}

describe('events.append_task_batch plans', () => {
  it('writes every row of the batch by key, without scanning a table', async () => {
    for (let round = 0; round < 8; round++) {
      // Past the plan cache's first five custom plans: the generic plan is the one that lasts.
      const appended = await appendAndCount();
      expect(appended.outcomes).toEqual([]);
      expect(appended.streams.seqScans).toBe(0);
      expect(appended.streams.indexScans).toBeGreaterThanOrEqual(2);
      expect(appended.work.seqScans).toBe(0);
      expect(appended.work.deleted).toBe(1);
      // The finished task's own row, not its tenant's queue.
      expect(appended.work.indexRowsFetched).toBeLessThanOrEqual(2);
      expect(appended.events).toEqual(appended.expectedEvents);
    }
  });

  it('would scan every stream with the planner defaults (the control)', async () => {
    const appended = await appendAndCount(async (client) => {
      await client.query('ALTER FUNCTION events.append_task_batch(jsonb) RESET ALL');
    });
    expect(appended.outcomes).toEqual([]);
    expect(appended.streams.seqScans).toBeGreaterThan(0);
  });
});

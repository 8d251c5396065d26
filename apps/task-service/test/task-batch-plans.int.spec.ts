import { createTestDatabase, type TestDatabase } from '@lib/testing';
import { randomUUID } from 'node:crypto';
import type { PoolClient } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * events.append_task_batch against real Postgres with many streams that were never analyzed (a new deployment
 * a few minutes into its load): a batch must reach the streams it writes by key, whatever the table's size
 * (migration 20261208000000). The planner's defaults chose a sequential scan of every stream, twice per batch.
 */

const TENANT = 'plans';
const STREAMS = 5_000;

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase('batch-plans');
  await db.pool.query(
    `INSERT INTO events.streams (tenant_id, stream_id, version)
     SELECT $1, 'task-' || n, 2 FROM generate_series(1, $2) AS n`,
    [TENANT, STREAMS],
  );
});

afterAll(async () => {
  await db?.drop();
});

/** A batch that moves two existing streams from version 2 to 3 and creates one. */
function batch(): string {
  const moved = [1 + Math.floor(Math.random() * (STREAMS / 2)), STREAMS / 2 + 1];
  const streams = [
    ...moved.map((n, i) => ({ i, t: TENANT, s: `task-${n}`, e: 2, n: 3 })),
    { i: 2, t: TENANT, s: `task-new-${randomUUID()}`, e: 0, n: 1 },
  ];
  const events = streams.map((stream) => ({
    i: stream.i,
    id: randomUUID(),
    v: stream.n,
    y: 'TaskStatusUpdated',
    sv: 1,
    d: {},
    m: {},
  }));
  return JSON.stringify({
    channel: 'a2a_platform',
    claims: [],
    streams,
    events,
    views: [],
    work: [],
    notices: [],
    audit: [],
  });
}

interface Appended {
  outcomes: { stream_index: number; outcome: string }[];
  seqScans: number;
  indexScans: number;
}

/** Appends one batch in a transaction that is rolled back, with the scans of events.streams it made. */
async function appendAndCount(prepare?: (client: PoolClient) => Promise<void>): Promise<Appended> {
  const client = await db.pool.connect();
  try {
    await client.query('BEGIN');
    await prepare?.(client);
    const outcomes = await client.query<{ stream_index: number; outcome: string }>(
      'SELECT stream_index, outcome FROM events.append_task_batch($1::jsonb)',
      [batch()],
    );
    const scans = await client.query<{ seq_scan: string; idx_scan: string }>(
      `SELECT seq_scan, idx_scan FROM pg_stat_xact_user_tables
        WHERE schemaname = 'events' AND relname = 'streams'`,
    );
    const row = scans.rows[0];
    return {
      outcomes: outcomes.rows,
      seqScans: Number(row?.seq_scan ?? Number.NaN),
      indexScans: Number(row?.idx_scan ?? Number.NaN),
    };
  } finally {
    await client.query('ROLLBACK');
    client.release();
  }
}

describe('events.append_task_batch plans', () => {
  it('writes every stream of the batch by key, without scanning the table', async () => {
    for (let round = 0; round < 8; round++) {
      // Past the plan cache's first five custom plans: the generic plan is the one that lasts.
      const appended = await appendAndCount();
      expect(appended.outcomes).toEqual([]);
      expect(appended.seqScans).toBe(0);
      expect(appended.indexScans).toBeGreaterThanOrEqual(2);
    }
  });

  it('would scan every stream with the planner defaults (the control)', async () => {
    const appended = await appendAndCount(async (client) => {
      await client.query('ALTER FUNCTION events.append_task_batch(jsonb) RESET ALL');
    });
    expect(appended.outcomes).toEqual([]);
    expect(appended.seqScans).toBeGreaterThan(0);
  });
});

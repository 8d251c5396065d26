import { createTestDatabase, type TestDatabase } from '@lib/testing';
import type { Pool, PoolClient } from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

/**
 * read.task_counts (migration 20261201000000) against real Postgres: what the statement triggers on
 * read.task_view keep must equal counting the view, whatever writes it and however concurrently.
 */

const STATES = ['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING', 'TASK_STATE_COMPLETED'] as const;

interface ViewRow {
  tenant: string;
  task: string;
  agent?: string;
  owner?: string;
  state: string;
  version: number;
}

/** The inline projection's statement shape: a multi-row upsert that only ever moves a row forward. */
async function upsert(client: Pool | PoolClient, rows: ViewRow[]): Promise<void> {
  await client.query(
    `INSERT INTO read.task_view
       (tenant_id, task_id, agent_id, owner_id, context_id, state, status_timestamp, version, task)
     SELECT r.tenant, r.task, coalesce(r.agent, 'echo'), coalesce(r.owner, 'alice'), 'ctx', r.state,
            now(), r.version, '{}'::jsonb
       FROM jsonb_to_recordset($1::jsonb)
         AS r(tenant text, task text, agent text, owner text, state text, version integer)
      ORDER BY r.tenant, r.task
     ON CONFLICT (tenant_id, task_id) DO UPDATE SET
       state = EXCLUDED.state, version = EXCLUDED.version
     WHERE task_view.version < EXCLUDED.version`,
    [JSON.stringify(rows)],
  );
}

type Counts = Record<string, number>;

/** Counts as ListTasks reads them (sum of the deltas), keyed `tenant/agent/owner/state`. */
async function keptCounts(pool: Pool): Promise<Counts> {
  const result = await pool.query<{ key: string; n: string }>(
    `SELECT concat_ws('/', tenant_id, agent_id, owner_id, state) AS key, sum(tasks) AS n
       FROM read.task_counts GROUP BY 1 HAVING sum(tasks) <> 0`,
  );
  return Object.fromEntries(result.rows.map((r) => [r.key, Number(r.n)]));
}

async function viewCounts(pool: Pool): Promise<Counts> {
  const result = await pool.query<{ key: string; n: string }>(
    `SELECT concat_ws('/', tenant_id, agent_id, owner_id, state) AS key, count(*) AS n
       FROM read.task_view GROUP BY 1`,
  );
  return Object.fromEntries(result.rows.map((r) => [r.key, Number(r.n)]));
}

async function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  } finally {
    client.release();
  }
}

function shuffled<T>(items: T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy;
}

describe('read.task_counts, kept by statement triggers on read.task_view', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase('task_counts');
  });

  afterAll(async () => {
    await db.drop();
  });

  beforeEach(async () => {
    await db.pool.query('TRUNCATE read.task_view');
  });

  it('follows inserts, state changes, same-state updates, stale upserts and deletes', async () => {
    await upsert(db.pool, [
      { tenant: 'acme', task: 't1', state: 'TASK_STATE_SUBMITTED', version: 1 },
      { tenant: 'acme', task: 't2', state: 'TASK_STATE_SUBMITTED', version: 1 },
      { tenant: 'acme', task: 't3', state: 'TASK_STATE_SUBMITTED', version: 1, owner: 'bob' },
      { tenant: 'evil', task: 't1', state: 'TASK_STATE_SUBMITTED', version: 1 },
    ]);
    // One statement that inserts some rows and updates others (the batch append's shape).
    await upsert(db.pool, [
      { tenant: 'acme', task: 't1', state: 'TASK_STATE_WORKING', version: 2 },
      { tenant: 'acme', task: 't4', state: 'TASK_STATE_WORKING', version: 1 },
    ]);
    // Same state, newer version: counts do not move. Older version: nothing changes.
    await upsert(db.pool, [
      { tenant: 'acme', task: 't1', state: 'TASK_STATE_WORKING', version: 3 },
    ]);
    await upsert(db.pool, [
      { tenant: 'acme', task: 't2', state: 'TASK_STATE_COMPLETED', version: 1 },
    ]);
    expect(await keptCounts(db.pool)).toEqual({
      'acme/echo/alice/TASK_STATE_SUBMITTED': 1,
      'acme/echo/alice/TASK_STATE_WORKING': 2,
      'acme/echo/bob/TASK_STATE_SUBMITTED': 1,
      'evil/echo/alice/TASK_STATE_SUBMITTED': 1,
    });
    await db.pool.query(`UPDATE read.task_view SET state = 'TASK_STATE_COMPLETED'`);
    await db.pool.query(`DELETE FROM read.task_view WHERE tenant_id = 'evil'`);
    expect(await keptCounts(db.pool)).toEqual(await viewCounts(db.pool));
    expect(await keptCounts(db.pool)).toEqual({
      'acme/echo/alice/TASK_STATE_COMPLETED': 3,
      'acme/echo/bob/TASK_STATE_COMPLETED': 1,
    });
  });

  it('changes nothing for a rolled-back transaction, and TRUNCATE clears the counts', async () => {
    await upsert(db.pool, [
      { tenant: 'acme', task: 't1', state: 'TASK_STATE_SUBMITTED', version: 1 },
    ]);
    await expect(
      inTransaction(db.pool, async (client) => {
        await upsert(client, [
          { tenant: 'acme', task: 't1', state: 'TASK_STATE_WORKING', version: 2 },
          { tenant: 'acme', task: 't2', state: 'TASK_STATE_WORKING', version: 1 },
        ]);
        await client.query('SELECT read.compact_task_counts($1, $2, $3, $4)', [
          'acme',
          'echo',
          'alice',
          'TASK_STATE_WORKING',
        ]);
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect(await keptCounts(db.pool)).toEqual({ 'acme/echo/alice/TASK_STATE_SUBMITTED': 1 });
    await db.pool.query('TRUNCATE read.task_view');
    expect(await keptCounts(db.pool)).toEqual({});
  });

  it('does not make a writer wait for the counts of another transaction in flight, nor for its fold', async () => {
    await upsert(db.pool, [
      { tenant: 'acme', task: 't0', state: 'TASK_STATE_SUBMITTED', version: 1 },
    ]);
    const first = await db.pool.connect();
    const second = await db.pool.connect();
    try {
      await first.query('BEGIN');
      await upsert(first, [
        { tenant: 'acme', task: 't1', state: 'TASK_STATE_SUBMITTED', version: 1 },
      ]);
      await first.query(
        `SELECT read.compact_task_counts('acme', 'echo', 'alice', 'TASK_STATE_SUBMITTED')`,
      );
      // The same caller's key, while the first transaction holds its rows: a counter row would block here.
      await second.query('BEGIN');
      await second.query(`SET LOCAL lock_timeout = '200ms'`);
      await upsert(second, [
        { tenant: 'acme', task: 't2', state: 'TASK_STATE_SUBMITTED', version: 1 },
      ]);
      await second.query(
        `SELECT read.compact_task_counts('acme', 'echo', 'alice', 'TASK_STATE_SUBMITTED')`,
      );
      await second.query('COMMIT');
      await first.query('COMMIT');
    } finally {
      first.release();
      second.release();
    }
    expect(await keptCounts(db.pool)).toEqual({ 'acme/echo/alice/TASK_STATE_SUBMITTED': 3 });
  });

  it('stays exact under concurrent writers that each write several tasks per transaction in any order, without a deadlock', async () => {
    const writers = 8;
    const transactions = 40;
    const tasksPerWriter = 20;
    const versions = new Map<string, number>();
    const errors: unknown[] = [];
    // Group commit shape: a transaction writes a few tasks, one statement each, in random order, sometimes
    // several in one statement; tasks move between states; some transactions roll back. Each writer has tasks
    // of its own (two writers of one task wait for each other on its view row anyway) but every writer
    // changes the counts of the same keys.
    const writer = async (w: number): Promise<void> => {
      for (let t = 0; t < transactions; t++) {
        const chosen = shuffled(
          Array.from({ length: tasksPerWriter }, (_, i) => `w${w}-t${i}`),
        ).slice(0, 4);
        try {
          await inTransaction(db.pool, async (client) => {
            const rows = chosen.map((task) => {
              const version = (versions.get(task) ?? 0) + 1;
              versions.set(task, version);
              const owner = task.endsWith('0') ? 'bob' : 'alice';
              const state = STATES[(w + t + version) % STATES.length] ?? 'TASK_STATE_WORKING';
              return { tenant: 'acme', task, owner, state, version };
            });
            if (t % 5 === 0) {
              await upsert(client, rows);
            } else {
              for (const row of rows) {
                await upsert(client, [row]);
              }
            }
            if (t % 7 === 3) {
              throw new Error('rolled back on purpose');
            }
          });
        } catch (error) {
          if (!(error instanceof Error && error.message === 'rolled back on purpose')) {
            errors.push(error);
          }
        }
      }
    };
    await Promise.all(Array.from({ length: writers }, (_, w) => writer(w)));
    expect(errors).toEqual([]);
    expect(await keptCounts(db.pool)).toEqual(await viewCounts(db.pool));
  });

  it('keeps a few rows per key, however many statements changed it', async () => {
    for (let i = 0; i < 1_000; i++) {
      await upsert(db.pool, [
        { tenant: 'acme', task: `t${i}`, state: 'TASK_STATE_SUBMITTED', version: 1 },
      ]);
    }
    const rows = await db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM read.task_counts
        WHERE (tenant_id, agent_id, owner_id, state) = ('acme', 'echo', 'alice', 'TASK_STATE_SUBMITTED')`,
    );
    // One fold per 16 statements on average: far fewer than the 1,000 deltas written.
    expect(rows.rows[0]?.n).toBeLessThan(200);
    expect(await keptCounts(db.pool)).toEqual({ 'acme/echo/alice/TASK_STATE_SUBMITTED': 1_000 });
  });

  it('folds at commit what a transaction of many statements wrote (a live rebuild of the view)', async () => {
    await upsert(
      db.pool,
      Array.from({ length: 50 }, (_, i) => ({
        tenant: 'acme',
        task: `t${i}`,
        state: 'TASK_STATE_WORKING',
        version: 1,
      })),
    );
    await inTransaction(db.pool, async (client) => {
      await client.query('DELETE FROM read.task_view');
      for (let i = 0; i < 500; i++) {
        await upsert(client, [
          {
            tenant: 'acme',
            task: `t${i}`,
            state: STATES[i % 3] ?? 'TASK_STATE_WORKING',
            version: 2,
          },
        ]);
      }
      // Inside the transaction nothing is folded past its first statements: one row per statement.
      const rows = await client.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM read.task_counts',
      );
      expect(rows.rows[0]?.n).toBeGreaterThan(400);
    });
    const rows = await db.pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM read.task_counts',
    );
    expect(rows.rows[0]?.n).toBeLessThanOrEqual(3 * 16);
    expect(await keptCounts(db.pool)).toEqual(await viewCounts(db.pool));
    const pending = await db.pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM read.task_count_folds',
    );
    expect(pending.rows[0]?.n).toBe(0);
  });

  it('recount_tasks() repairs tampered counts from the view', async () => {
    await upsert(db.pool, [
      { tenant: 'acme', task: 't1', state: 'TASK_STATE_SUBMITTED', version: 1 },
      { tenant: 'acme', task: 't2', state: 'TASK_STATE_COMPLETED', version: 1 },
    ]);
    await db.pool.query(
      `INSERT INTO read.task_counts VALUES ('acme', 'echo', 'alice', 'TASK_STATE_SUBMITTED', 41)`,
    );
    await inTransaction(db.pool, (client) => client.query('SELECT read.recount_tasks()'));
    expect(await keptCounts(db.pool)).toEqual({
      'acme/echo/alice/TASK_STATE_SUBMITTED': 1,
      'acme/echo/alice/TASK_STATE_COMPLETED': 1,
    });
    const rows = await db.pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM read.task_counts',
    );
    expect(rows.rows[0]?.n).toBe(2);
  });
});

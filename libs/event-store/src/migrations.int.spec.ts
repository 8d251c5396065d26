import { createTestDatabase, reserveTestDatabase, type TestDatabase } from '@lib/testing';
import type { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, migrateUpTo } from './migrate';
import { createPool } from './postgres';

/**
 * The schema as Postgres sees it: tables, columns, indexes, constraints, triggers and functions (a digest of
 * each one's whole definition: body, settings, signature), in a stable order.
 */
async function describeSchema(pool: Pool): Promise<unknown> {
  const schemas = ['events', 'read', 'ops', 'audit'];
  const columns = await pool.query(
    `SELECT table_schema, table_name, column_name, data_type, is_nullable, column_default, is_identity
       FROM information_schema.columns WHERE table_schema = ANY($1)
      ORDER BY table_schema, table_name, ordinal_position`,
    [schemas],
  );
  const indexes = await pool.query(
    `SELECT schemaname, indexname, indexdef FROM pg_indexes WHERE schemaname = ANY($1)
      ORDER BY schemaname, indexname`,
    [schemas],
  );
  const constraints = await pool.query(
    `SELECT n.nspname AS schema, c.conname AS name, pg_get_constraintdef(c.oid) AS definition
       FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
      WHERE n.nspname = ANY($1) ORDER BY n.nspname, c.conname`,
    [schemas],
  );
  const triggers = await pool.query(
    `SELECT event_object_schema, event_object_table, trigger_name, action_timing, event_manipulation
       FROM information_schema.triggers WHERE event_object_schema = ANY($1)
      ORDER BY event_object_schema, event_object_table, trigger_name, event_manipulation`,
    [schemas],
  );
  const functions = await pool.query(
    `SELECT n.nspname AS schema, p.proname AS name, pg_get_function_identity_arguments(p.oid) AS arguments,
            md5(pg_get_functiondef(p.oid)) AS definition
       FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname = ANY($1) AND p.prokind IN ('f', 'p')
      ORDER BY n.nspname, p.proname, arguments`,
    [schemas],
  );
  return {
    columns: columns.rows,
    indexes: indexes.rows,
    constraints: constraints.rows,
    triggers: triggers.rows,
    functions: functions.rows,
  };
}

describe('migrations', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase('migrations');
  });

  afterAll(async () => {
    await db.drop();
  });

  it('build the schema in the checked-in snapshot from an empty database', async () => {
    await expect(JSON.stringify(await describeSchema(db.pool), null, 2)).toMatchFileSnapshot(
      './__snapshots__/schema.snapshot.json',
    );
  });

  it('are idempotent: running them again changes nothing', async () => {
    const before = await describeSchema(db.pool);
    await migrate(db.url);
    expect(await describeSchema(db.pool)).toEqual(before);
  });

  it('bring a database of the last release before function files to the schema of a new one', async () => {
    const upgraded = reserveTestDatabase('migrations_upgraded');
    try {
      await migrateUpTo(upgraded.url, '20261210000000_agent-upstreams');
      await migrate(upgraded.url);
      const pool = createPool(upgraded.url, { max: 1, applicationName: 'a2a-test' });
      try {
        expect(await describeSchema(pool)).toEqual(await describeSchema(db.pool));
      } finally {
        await pool.end();
      }
    } finally {
      await upgraded.drop();
    }
  });

  it('run by replicas that start together: each waits for the lock instead of failing', async () => {
    // Every app migrates at start; a rollout or a scale-up starts several at once (issue 13's drill).
    const runs = await Promise.allSettled(Array.from({ length: 6 }, () => migrate(db.url)));
    expect(runs.filter((run) => run.status === 'rejected')).toEqual([]);
  });
});

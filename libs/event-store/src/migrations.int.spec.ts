import { createTestDatabase, type TestDatabase } from '@lib/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from './migrate';

/** The schema as Postgres sees it: tables, columns, indexes, constraints and triggers, in a stable order. */
async function describeSchema(db: TestDatabase): Promise<unknown> {
  const schemas = ['events', 'read', 'ops', 'audit'];
  const columns = await db.pool.query(
    `SELECT table_schema, table_name, column_name, data_type, is_nullable, column_default, is_identity
       FROM information_schema.columns WHERE table_schema = ANY($1)
      ORDER BY table_schema, table_name, ordinal_position`,
    [schemas],
  );
  const indexes = await db.pool.query(
    `SELECT schemaname, indexname, indexdef FROM pg_indexes WHERE schemaname = ANY($1)
      ORDER BY schemaname, indexname`,
    [schemas],
  );
  const constraints = await db.pool.query(
    `SELECT n.nspname AS schema, c.conname AS name, pg_get_constraintdef(c.oid) AS definition
       FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
      WHERE n.nspname = ANY($1) ORDER BY n.nspname, c.conname`,
    [schemas],
  );
  const triggers = await db.pool.query(
    `SELECT event_object_schema, event_object_table, trigger_name, action_timing, event_manipulation
       FROM information_schema.triggers WHERE event_object_schema = ANY($1)
      ORDER BY event_object_schema, event_object_table, trigger_name, event_manipulation`,
    [schemas],
  );
  return {
    columns: columns.rows,
    indexes: indexes.rows,
    constraints: constraints.rows,
    triggers: triggers.rows,
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
    await expect(JSON.stringify(await describeSchema(db), null, 2)).toMatchFileSnapshot(
      './__snapshots__/schema.snapshot.json',
    );
  });

  it('are idempotent: running them again changes nothing', async () => {
    const before = await describeSchema(db);
    await migrate(db.url);
    expect(await describeSchema(db)).toEqual(before);
  });

  it('run by replicas that start together: each waits for the lock instead of failing', async () => {
    // Every app migrates at start; a rollout or a scale-up starts several at once (issue 13's drill).
    const runs = await Promise.allSettled(Array.from({ length: 6 }, () => migrate(db.url)));
    expect(runs.filter((run) => run.status === 'rejected')).toEqual([]);
  });
});

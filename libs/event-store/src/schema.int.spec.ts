import { loadConfig, testSchema } from '@lib/config';
import { reserveTestDatabase } from '@lib/testing';
import { randomBytes } from 'node:crypto';
import { Pool } from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { readMigrationHistory } from './function-files';
import { migrate, migrateUpTo, migrationsDir } from './migrate';
import { createPool, ensureDatabase } from './postgres';
import { grantRuntimeRole, missingSchema, whenSchemaReady } from './schema';

const WAIT = 60_000;

/** The same database as `url`, as `user` (the test server trusts local connections). */
function asUser(url: string, user: string): string {
  const address = new URL(url);
  address.username = user;
  address.password = '';
  return address.toString();
}

describe('the schema a release needs', () => {
  const drops: (() => Promise<void>)[] = [];
  const roles: string[] = [];

  afterEach(async () => {
    await Promise.all(drops.splice(0).map((drop) => drop()));
  });

  afterAll(async () => {
    // Roles belong to the server: dropped once the databases holding their grants are gone.
    const admin = new Pool({ connectionString: loadConfig(testSchema).TEST_POSTGRES_URL, max: 1 });
    try {
      for (const role of roles) {
        await admin.query(`DROP ROLE IF EXISTS "${role}"`);
      }
    } finally {
      await admin.end();
    }
  });

  function database(prefix: string): string {
    const reserved = reserveTestDatabase(prefix);
    drops.push(reserved.drop);
    return reserved.url;
  }

  it('lacks every migration on an empty database, the later ones on an older schema, nothing once migrated', async () => {
    const url = database('schema_missing');
    const { migrations } = await readMigrationHistory(migrationsDir());
    await ensureDatabase(url);
    expect(await missingSchema(url)).toStrictEqual([
      ...migrations,
      'function file audit.chain_records.sql',
      'function file events.append_task_batch.sql',
      'function file read.count_task_view_changes.sql',
    ]);

    const older = migrations.indexOf('20261210000000_agent-upstreams');
    await migrateUpTo(url, '20261210000000_agent-upstreams');
    const missing = await missingSchema(url);
    expect(missing.slice(0, migrations.length - older - 1)).toStrictEqual(
      migrations.slice(older + 1),
    );
    expect(missing).toContain('function file events.append_task_batch.sql');

    await migrate(url);
    expect(await missingSchema(url)).toStrictEqual([]);
  });

  it('lacks nothing on a database a newer release migrated (migrations only add)', async () => {
    const url = database('schema_newer');
    await migrate(url);
    const pool = createPool(url, { max: 1, applicationName: 'a2a-test' });
    try {
      // What a later release leaves: a migration this one does not know, and a function file it redefined.
      await pool.query(
        `INSERT INTO public.schema_migrations (name, run_on) VALUES ('29991231000000_from-the-future', now())`,
      );
      await pool.query(
        `UPDATE public.schema_function_files
            SET migration = '29991231000000_from-the-future', sha256 = repeat('0', 64)
          WHERE file = 'events.append_task_batch.sql'`,
      );
    } finally {
      await pool.end();
    }
    expect(await missingSchema(url)).toStrictEqual([]);
  });

  it('waits, saying why, while the database is not created, not migrated or not granted to it, then resolves', async () => {
    const url = database('schema_wait');
    const reasons: (string | null)[] = [];
    const logged: string[] = [];
    const report = {
      waiting: (reason: string | null) => reasons.push(reason),
      warn: (message: string) => logged.push(message),
    };
    const ready = whenSchemaReady(url, report);
    await expect.poll(() => reasons.length, { timeout: WAIT }).toBeGreaterThan(0);
    expect(reasons[0]).toMatch(/^schema: the database does not exist yet/);
    expect(logged[0]).toMatch(/^waiting for the schema: the database does not exist yet/);
    await ensureDatabase(url);
    await expect
      .poll(() => reasons.at(-1), { timeout: WAIT })
      .toMatch(/^schema: \d+ migration\(s\) of this release not applied yet/);
    await migrate(url);
    await ready;
    expect(reasons.at(-1)).toBeNull();
    expect(logged.at(-1)).toBe('the schema of this release is in place; starting');

    // A role the Job has not granted anything yet waits too (a first install: role first, grants after).
    const role = `a2a_runtime_${randomBytes(4).toString('hex')}`;
    roles.push(role);
    const admin = createPool(url, { max: 1, applicationName: 'a2a-test' });
    await admin.query(`CREATE ROLE "${role}" LOGIN`).finally(() => admin.end());
    reasons.length = 0;
    const granted = whenSchemaReady(asUser(url, role), report);
    await expect
      .poll(() => reasons[0], { timeout: WAIT })
      .toMatch(/^schema: this role is not granted the schema yet/);
    await grantRuntimeRole(url, role);
    await granted;
    expect(reasons.at(-1)).toBeNull();
  });

  it('grants the runtime role rows, sequences and functions of the platform, and no way to change the schema', async () => {
    const url = database('schema_grant');
    await migrate(url);
    const role = `a2a_runtime_${randomBytes(4).toString('hex')}`;
    roles.push(role);
    const admin = createPool(url, { max: 1, applicationName: 'a2a-test' });
    try {
      await expect(grantRuntimeRole(url, role)).rejects.toThrow(
        `the role "${role}", which does not exist`,
      );
      await admin.query(`CREATE ROLE "${role}" LOGIN`);
      await grantRuntimeRole(url, role);

      const tables = await admin.query<{ name: string; dml: boolean; truncate: boolean }>(
        `SELECT format('%I.%I', schemaname, tablename) AS name,
                has_table_privilege($1, format('%I.%I', schemaname, tablename), 'SELECT,INSERT,UPDATE,DELETE') AS dml,
                has_table_privilege($1, format('%I.%I', schemaname, tablename), 'TRUNCATE') AS truncate
           FROM pg_tables WHERE schemaname IN ('events', 'read', 'ops', 'audit')`,
        [role],
      );
      expect(tables.rows.length).toBeGreaterThan(10);
      expect(tables.rows.filter((t) => !t.dml || t.truncate)).toStrictEqual([]);
      const functions = await admin.query<{ name: string }>(
        `SELECT p.oid::regprocedure::text AS name FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
          WHERE n.nspname IN ('events', 'read', 'ops', 'audit') AND NOT has_function_privilege($1, p.oid, 'EXECUTE')`,
        [role],
      );
      expect(functions.rows).toStrictEqual([]);
      const creatable = await admin.query<{ nspname: string }>(
        `SELECT nspname FROM pg_namespace
          WHERE nspname IN ('events', 'read', 'ops', 'audit', 'public') AND has_schema_privilege($1, nspname, 'CREATE')`,
        [role],
      );
      // PUBLIC's CREATE on `public` is gone since Postgres 15; anything listed here could change the schema.
      expect(creatable.rows).toStrictEqual([]);
    } finally {
      await admin.end();
    }

    // As the role: the schema check passes, rows can be written, the schema cannot be changed.
    const runtimeUrl = asUser(url, role);
    expect(await missingSchema(runtimeUrl)).toStrictEqual([]);
    const runtime = createPool(runtimeUrl, { max: 1, applicationName: 'a2a-test' });
    try {
      await runtime.query(
        `INSERT INTO ops.tenants (tenant_id, display_name) VALUES ('grant-check', 'Grant check')`,
      );
      await expect(runtime.query('CREATE TABLE ops.sneaky (id int)')).rejects.toMatchObject({
        code: '42501',
      });
      await expect(runtime.query('DROP TABLE ops.tenants')).rejects.toMatchObject({
        code: '42501',
      });
    } finally {
      await runtime.end();
    }
  });
});

import { join } from 'node:path';
import { escapeIdentifier } from 'pg';
import { isTransientDatabaseError } from './database-errors';
import {
  planFunctionFiles,
  readFunctionFiles,
  readMigrationHistory,
  type AppliedFunctionFile,
} from './function-files';
import { migrate, migrationsDir } from './migrate';
import { createPool, whenDatabaseReachable, withTransaction } from './postgres';

/** The schemas the migrations create, which the apps read and write. */
const PLATFORM_SCHEMAS = ['events', 'read', 'ops', 'audit'] as const;
/** How often a process that waits for its schema looks again. */
const SCHEMA_POLL_MS = 2_000;
/** How often it says so in its log while it waits. */
const SCHEMA_LOG_EVERY_MS = 30_000;

/** `undefined_table`: the bookkeeping table of a database no migration ever ran on. */
const UNDEFINED_TABLE = '42P01';

/**
 * What the database at `connectionString` lacks of this release's schema: the versioned migrations it has
 * not recorded, and the function files it runs at another content than this release's, unless a newer
 * release gave them (docs/adr/0014-function-files.md). Empty when this release can run on it: a database a
 * newer release migrated is fine too (docs/deploy.md "Upgrades": migrations only add).
 */
export async function missingSchema(connectionString: string): Promise<string[]> {
  const dir = migrationsDir();
  const [history, files] = await Promise.all([
    readMigrationHistory(dir),
    readFunctionFiles(join(dir, 'functions')),
  ]);
  const pool = createPool(connectionString, { max: 1, applicationName: 'a2a:schema-check' });
  try {
    const applied = await pool
      .query<{ name: string }>('SELECT name FROM public.schema_migrations')
      .then((result) => new Set(result.rows.map((row) => row.name)))
      .catch(orEmptyWhenUndefined(new Set<string>()));
    const functionFiles = await pool
      .query<AppliedFunctionFile>(
        'SELECT file, migration, sha256 FROM public.schema_function_files',
      )
      .then((result) => result.rows)
      .catch(orEmptyWhenUndefined<AppliedFunctionFile[]>([]));
    return [
      ...history.migrations.filter((migration) => !applied.has(migration)),
      ...planFunctionFiles(files, history, functionFiles).flatMap((step) =>
        step.action === 'apply' ? [`function file ${step.file.name}`] : [],
      ),
    ];
  } finally {
    await pool.end();
  }
}

function orEmptyWhenUndefined<T>(empty: T): (error: unknown) => T {
  return (error) => {
    if ((error as { code?: unknown }).code === UNDEFINED_TABLE) {
      return empty;
    }
    throw error;
  };
}

/** `invalid_catalog_name` (the database is not created yet) and `insufficient_privilege` (not granted yet). */
const NOT_CREATED = '3D000';
const NOT_GRANTED = '42501';

/**
 * Why the schema cannot be read yet, when that is something the migrations Job or the database's start will
 * end; rethrows anything else. A first install starts the apps before the Job has created the database or
 * granted their role anything.
 */
function notThereYet(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  if (code === NOT_CREATED) {
    return `the database does not exist yet (${String(error)})`;
  }
  if (code === NOT_GRANTED) {
    return `this role is not granted the schema yet (${String(error)})`;
  }
  if (isTransientDatabaseError(error)) {
    return `Postgres does not answer (${String(error)})`;
  }
  throw error;
}

/** How a process tells what it waits for: its readiness body and its log. */
export interface SchemaWaitReport {
  /** Called with what it waits for each time that changes, and with null when it no longer waits. */
  waiting: (reason: string | null) => void;
  /** A line for the log, now and then while it waits. */
  warn: (message: string) => void;
}

/**
 * Resolves once the database holds this release's schema ({@link missingSchema} is empty), looking again
 * every two seconds while it lacks something or does not answer; never migrates. For processes that run with
 * `SCHEMA_MIGRATION=wait`: in a cluster, the migrations Job changes the schema and the apps wait for it.
 */
export async function whenSchemaReady(
  connectionString: string,
  report: SchemaWaitReport,
): Promise<void> {
  let said = '';
  let saidAt = 0;
  for (;;) {
    let reason: string;
    try {
      const missing = await missingSchema(connectionString);
      if (missing.length === 0) {
        report.waiting(null);
        if (said !== '') {
          report.warn('the schema of this release is in place; starting');
        }
        return;
      }
      reason = `schema: ${missing.length} migration(s) of this release not applied yet (first: ${missing[0] ?? ''}); the migrations Job applies them`;
    } catch (error) {
      reason = `schema: ${notThereYet(error)}`;
    }
    report.waiting(reason);
    if (reason !== said || Date.now() - saidAt >= SCHEMA_LOG_EVERY_MS) {
      report.warn(`waiting for the ${reason}`);
      said = reason;
      saidAt = Date.now();
    }
    await new Promise((resolve) => setTimeout(resolve, SCHEMA_POLL_MS));
  }
}

/**
 * The schema step of a process's start, as `SCHEMA_MIGRATION` says: `apply` migrates (waiting for the
 * database to answer), `wait` waits for the migrations Job ({@link whenSchemaReady}).
 */
export async function prepareSchema(
  connectionString: string,
  mode: 'apply' | 'wait',
  report: SchemaWaitReport,
): Promise<void> {
  if (mode === 'wait') {
    await whenSchemaReady(connectionString, report);
    return;
  }
  report.waiting('schema: applying the migrations');
  await whenDatabaseReachable(() => migrate(connectionString), report.warn);
  report.waiting(null);
}

/**
 * Grants `role` what the apps need and nothing more: use of the platform's schemas, reading and writing
 * the rows of their tables, their sequences, calling their functions, and reading the migration bookkeeping
 * (to know the schema is there). No CREATE, ALTER, DROP, TRUNCATE or ownership: only the migrations change
 * the schema. Run by `migrate` after every migration, so tables a release adds are granted too.
 */
export async function grantRuntimeRole(connectionString: string, role: string): Promise<void> {
  const pool = createPool(connectionString, { max: 1, applicationName: 'a2a:migrate' });
  try {
    const found = await pool.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [role]);
    if (found.rowCount === 0) {
      throw new Error(
        `SCHEMA_RUNTIME_ROLE names the role "${role}", which does not exist (create it first: docs/deploy.md)`,
      );
    }
    const grantee = escapeIdentifier(role);
    const schemas = PLATFORM_SCHEMAS.map(escapeIdentifier).join(', ');
    await withTransaction(pool, async (client) => {
      await client.query(`GRANT USAGE ON SCHEMA ${schemas} TO ${grantee}`);
      await client.query(
        `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${schemas} TO ${grantee}`,
      );
      await client.query(
        `GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA ${schemas} TO ${grantee}`,
      );
      await client.query(`GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA ${schemas} TO ${grantee}`);
      await client.query(
        `GRANT SELECT ON public.schema_migrations, public.schema_function_files TO ${grantee}`,
      );
    });
  } finally {
    await pool.end();
  }
}

import type * as PgMigrate from 'node-pg-migrate';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import {
  planFunctionFiles,
  readFunctionFiles,
  readMigrationHistory,
  type AppliedFunctionFile,
} from './function-files';
import { createPool, ensureDatabase, withTransaction } from './postgres';
import { retryDelayMs } from './retry-delay';

/** The repository's `migrations/` folder, found from this file whether it runs from source or from dist. */
export function migrationsDir(): string {
  let dir = __dirname;
  while (dir !== dirname(dir)) {
    const candidate = join(dir, 'migrations');
    if (existsSync(candidate) && existsSync(join(dir, 'package.json'))) {
      return candidate;
    }
    dir = dirname(dir);
  }
  throw new Error('migrations folder not found');
}

/**
 * node-pg-migrate's runner, loaded by a process the first time it migrates: every platform process imports
 * this library, and in a cluster none of them migrates (the migrations Job does; SCHEMA_MIGRATION=wait), so
 * they never load its 133 modules (ADR 0017).
 */
function runner(options: PgMigrate.RunnerOption): ReturnType<typeof PgMigrate.runner> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use, see above
  return (require('node-pg-migrate') as typeof PgMigrate).runner(options);
}

/** What node-pg-migrate throws, without waiting, while another process holds its advisory lock. */
const LOCK_HELD = 'Another migration is already running';
/** How long a process waits for another one's migrations (the migrations Job's own deadline). */
const LOCK_WAIT_MS = 600_000;

/** Where node-pg-migrate finds the migrations and records the applied ones, as every run of it here uses. */
function runnerOptions(connectionString: string, log: (msg: string) => void) {
  return {
    databaseUrl: connectionString,
    dir: migrationsDir(),
    migrationsTable: 'schema_migrations',
    migrationsSchema: 'public',
    singleTransaction: true,
    log,
    logger: { debug: () => undefined, info: log, warn: log, error: log },
  };
}

/**
 * Creates the database if needed, applies every pending forward migration, then the function files that
 * changed (docs/adr/0014-function-files.md). Replicas that start together all run this: each waits for the one
 * holding the lock, then finds nothing left to apply.
 */
export async function migrate(
  connectionString: string,
  log: (msg: string) => void = () => undefined,
): Promise<void> {
  await ensureDatabase(connectionString);
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (let attempt = 0; ; attempt++) {
    try {
      await runner({ ...runnerOptions(connectionString, log), direction: 'up', checkOrder: true });
      break;
    } catch (error) {
      if (!(error instanceof Error && error.message === LOCK_HELD) || Date.now() > deadline) {
        throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, retryDelayMs(attempt)));
    }
  }
  await applyFunctionFiles(connectionString, log);
}

/**
 * Runs the function files whose content the database has not got yet, in one transaction after the versioned
 * migrations' (so each file sees the schema they leave), and records what it ran. A process that stops between
 * the two transactions leaves the files for the next run: every app migrates before it serves.
 */
async function applyFunctionFiles(
  connectionString: string,
  log: (msg: string) => void,
): Promise<void> {
  const dir = migrationsDir();
  const [files, history] = await Promise.all([
    readFunctionFiles(join(dir, 'functions')),
    readMigrationHistory(dir),
  ]);
  const pool = createPool(connectionString, { max: 1, applicationName: 'a2a:migrate' });
  try {
    await withTransaction(pool, async (client) => {
      // Two processes replacing one function at once would fail ("tuple concurrently updated"): one at a time.
      await client.query(`SELECT pg_advisory_xact_lock(hashtextextended('function-files', 0))`);
      await client.query(
        `CREATE TABLE IF NOT EXISTS public.schema_function_files (
           file text PRIMARY KEY,
           migration text NOT NULL,
           sha256 text NOT NULL,
           applied_at timestamptz NOT NULL DEFAULT now())`,
      );
      const applied = await client.query<AppliedFunctionFile>(
        'SELECT file, migration, sha256 FROM public.schema_function_files',
      );
      for (const step of planFunctionFiles(files, history, applied.rows)) {
        if (step.action === 'leave') {
          log(`> function file ${step.file.name}: left as a newer release made it (${step.newer})`);
          continue;
        }
        log(`> function file ${step.file.name}`);
        await client.query(step.file.sql);
        await client.query(
          `INSERT INTO public.schema_function_files (file, migration, sha256) VALUES ($1, $2, $3)
           ON CONFLICT (file) DO UPDATE SET
             migration = EXCLUDED.migration, sha256 = EXCLUDED.sha256, applied_at = EXCLUDED.applied_at`,
          [step.file.name, step.migration, step.file.sha256],
        );
      }
    });
  } finally {
    await pool.end();
  }
}

/**
 * Applies the versioned migrations up to `lastMigration` (its name without `.sql`) and no function file: a
 * database as a release from before function files left it. For tests of upgrades; operators never run it.
 */
export async function migrateUpTo(connectionString: string, lastMigration: string): Promise<void> {
  await ensureDatabase(connectionString);
  const count = (await readMigrationHistory(migrationsDir())).migrations.indexOf(lastMigration) + 1;
  if (count === 0) {
    throw new Error(`no migration ${lastMigration}`);
  }
  await runner({
    ...runnerOptions(connectionString, () => undefined),
    direction: 'up',
    count,
    checkOrder: true,
  });
}

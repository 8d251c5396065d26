import { runner } from 'node-pg-migrate';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ensureDatabase } from './postgres';
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
 * Creates the database if needed and applies every pending forward migration. Replicas that start together
 * all run this: each waits for the one holding the lock, then finds nothing left to apply.
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
      return;
    } catch (error) {
      if (!(error instanceof Error && error.message === LOCK_HELD) || Date.now() > deadline) {
        throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, retryDelayMs(attempt)));
    }
  }
}

/**
 * Undoes the newest `count` applied migrations (their Down sections): for benchmarks that compare a change of
 * the schema with the one before it. Operators never run it.
 */
export async function undoMigrations(
  connectionString: string,
  count: number,
  log: (msg: string) => void = () => undefined,
): Promise<void> {
  await runner({ ...runnerOptions(connectionString, log), direction: 'down', count });
}

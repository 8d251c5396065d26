import { runner } from 'node-pg-migrate';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ensureDatabase } from './postgres';

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

/** Creates the database if needed and applies every pending forward migration. */
export async function migrate(
  connectionString: string,
  log: (msg: string) => void = () => undefined,
): Promise<void> {
  await ensureDatabase(connectionString);
  await runner({
    databaseUrl: connectionString,
    dir: migrationsDir(),
    migrationsTable: 'schema_migrations',
    migrationsSchema: 'public',
    direction: 'up',
    checkOrder: true,
    singleTransaction: true,
    log,
    logger: { debug: () => undefined, info: log, warn: log, error: log },
  });
}

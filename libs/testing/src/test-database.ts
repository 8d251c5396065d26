import { loadConfig, testSchema } from '@lib/config';
import { createPool, migrate } from '@lib/event-store';
import { randomBytes } from 'node:crypto';
import { Pool } from 'pg';

export interface TestDatabase {
  url: string;
  pool: Pool;
  /** Closes the pool and drops the database. */
  drop(): Promise<void>;
}

/**
 * A fresh database name and address for `prefix`, on the test server; nothing is created (a standalone of
 * another checkout migrates it). Its `drop` drops the database if it was created.
 */
export function reserveTestDatabase(prefix: string): Pick<TestDatabase, 'url' | 'drop'> {
  const admin = new URL(loadConfig(testSchema).TEST_POSTGRES_URL);
  const name = `a2a_test_${prefix.replace(/[^a-z0-9]/gi, '_').toLowerCase()}_${randomBytes(4).toString('hex')}`;
  const url = new URL(admin.toString());
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const adminPool = new Pool({ connectionString: admin.toString(), max: 1 });
      try {
        await adminPool.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await adminPool.end();
      }
    },
  };
}

/** A fresh, migrated database of its own for one spec file (isolation per file). */
export async function createTestDatabase(prefix: string): Promise<TestDatabase> {
  const reserved = reserveTestDatabase(prefix);
  await migrate(reserved.url);
  const pool = createPool(reserved.url, { max: 10, applicationName: 'a2a-test' });
  return {
    url: reserved.url,
    pool,
    async drop() {
      await pool.end();
      await reserved.drop();
    },
  };
}

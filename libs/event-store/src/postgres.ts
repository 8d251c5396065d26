import { Pool, type PoolClient } from 'pg';

export function createPool(connectionString: string, max = 10): Pool {
  const pool = new Pool({ connectionString, max });
  // An idle client that loses its connection must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  return pool;
}

/** Runs `fn` in one transaction; commits on success, rolls back and rethrows on failure. */
export async function withTransaction<T>(
  pool: Pool,
  fn: (client: PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/** Creates the database named in `connectionString` if it does not exist yet. */
export async function ensureDatabase(connectionString: string): Promise<void> {
  const url = new URL(connectionString);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!/^[A-Za-z0-9_-]+$/.test(name)) {
    throw new Error(`refusing to create a database with name "${name}"`);
  }
  url.pathname = '/postgres';
  const admin = new Pool({ connectionString: url.toString(), max: 1 });
  try {
    const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) {
      await admin.query(`CREATE DATABASE "${name}"`).catch((error: unknown) => {
        // Another process created it concurrently.
        if ((error as { code?: string }).code !== '42P04') {
          throw error;
        }
      });
    }
  } finally {
    await admin.end();
  }
}

import { Pool, type PoolClient } from 'pg';
import { isTransientDatabaseError } from './database-errors';
import { retryDelayMs } from './retry-delay';

export interface PoolOptions {
  /** Most connections the pool opens. Default: 10. */
  max?: number;
  /**
   * `application_name` of every connection: which process and role it serves (`<app>:<role>`), as
   * `pg_stat_activity` shows it to operators (and to the fault tests that terminate one kind at a time).
   */
  applicationName: string;
  /** Longest wait for a new connection before the query fails (transient). Default: 5 000 ms. */
  connectTimeoutMs?: number;
  /** Told about each connection that broke (the pool replaces it on the next checkout). */
  warn?: (message: string) => void;
}

/**
 * A pool that survives its server: a connection that breaks (a restart, `pg_terminate_backend`, a network
 * fault) fails its own query, if any, and is dropped from the pool; it never emits an unhandled `error`.
 * Connecting has a deadline and TCP keepalive, so a dead server turns into fast, transient errors rather than
 * calls that hang.
 */
export function createPool(connectionString: string, options: PoolOptions): Pool {
  const pool = new Pool({
    connectionString,
    max: options.max ?? 10,
    application_name: options.applicationName,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
    keepAlive: true,
  });
  const warn = options.warn ?? (() => undefined);
  const report = (error: Error): void => warn(`database connection lost: ${error.message}`);
  // pg-pool listens for errors only on idle clients; a checked-out client between two queries (inside a
  // transaction, say) would otherwise emit its error with nobody listening, which ends the process.
  pool.on('connect', (client) => client.on('error', report));
  // Idle clients' errors reach the pool too; the client listener above has already reported them.
  pool.on('error', () => undefined);
  return pool;
}

/** A readiness check: the pool hands out a connection that answers (rejects with the reason otherwise). */
export async function pingPostgres(pool: Pool): Promise<void> {
  await pool.query('SELECT 1');
}

/** Runs `fn` in one transaction; commits on success, rolls back and rethrows on failure. */
export async function withTransaction<T>(
  pool: Pool,
  fn: (client: PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let broken: unknown = undefined;
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch((rollbackError: unknown) => {
      broken = rollbackError;
    });
    throw error;
  } finally {
    // A connection that could not even roll back is not handed to the next caller.
    client.release(broken === undefined ? undefined : asError(broken));
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
  const admin = createPool(url.toString(), { max: 1, applicationName: 'a2a:ensure-database' });
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

/**
 * Runs `work` until it succeeds or fails for a reason other than an unreachable database, waiting a capped,
 * jittered backoff between attempts and saying so through `warn` now and then. For start-up steps: a process
 * that starts before its database (a machine booting, a restart in progress) waits for it instead of failing.
 */
export async function whenDatabaseReachable<T>(
  work: () => Promise<T>,
  warn: (message: string) => void,
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (!isTransientDatabaseError(error)) {
        throw error;
      }
      const delayMs = retryDelayMs(attempt);
      if (attempt === 0 || attempt % 20 === 19) {
        warn(
          `waiting for Postgres (attempt ${attempt + 1}, next in ${delayMs} ms): ${String(error)}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }
}

function asError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}

/**
 * What the bench reads of one side's database, on one connection of its own: the transactions committed
 * there, the rows its tables took (inserted, updated or deleted), the backends connected to it, and the
 * position of the cluster's WAL.
 */
import { sleep } from '@lib/testing';
import { performance } from 'node:perf_hooks';
import { Client } from 'pg';

/**
 * Backends publish their counters (pg_stat_database, pg_stat_user_tables) at most once a second while busy
 * and within 10 s once idle (Postgres 15: PGSTAT_MIN_INTERVAL, PGSTAT_IDLE_INTERVAL), so a count is read 11 s
 * after the load.
 */
export const STATS_SETTLE_MS = 11_000;

/** A database's counters up to one moment. */
export interface DatabaseCounters {
  /** performance.now() of the read. */
  at: number;
  /** xact_commit of the database, less the transactions of the bench's own reads. */
  commits: number;
  /** Rows inserted, updated or deleted so far, by `schema.table`. */
  rowsByTable: Map<string, number>;
}

/** The rows written between two reads, by table; tables that took none are left out. */
export function rowsBetween(
  before: DatabaseCounters,
  after: DatabaseCounters,
): Map<string, number> {
  const rows = new Map<string, number>();
  for (const [table, n] of after.rowsByTable) {
    const written = n - (before.rowsByTable.get(table) ?? 0);
    if (written > 0) {
      rows.set(table, written);
    }
  }
  return rows;
}

export class DatabaseStats {
  /** Queries the bench sent on `client`: each is one transaction of its own in the counter. */
  private queries = 0;

  private constructor(private readonly client: Client) {}

  /** One connection to `url` for the whole run (a pool's reconnections would count as commits). */
  static async connect(url: string): Promise<DatabaseStats> {
    const client = new Client({ connectionString: url, application_name: 'a2a-bench' });
    await client.connect();
    return new DatabaseStats(client);
  }

  async query<R extends object>(sql: string): Promise<R[]> {
    this.queries++;
    return (await this.client.query<R>(sql)).rows;
  }

  /** The backends connected to the database, the bench's own excepted. */
  async backendPids(): Promise<number[]> {
    const rows = await this.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
    );
    return rows.map((row) => row.pid);
  }

  /**
   * The cluster's WAL position in bytes: read now, not published later like the counters. The WAL is the
   * cluster's, so the bytes between two reads are those of every database written meanwhile.
   */
  async walBytes(): Promise<number> {
    const [row] = await this.query<{ bytes: string }>(
      "SELECT pg_current_wal_lsn() - '0/0'::pg_lsn AS bytes",
    );
    return Number(row?.bytes ?? Number.NaN);
  }

  /** Commits and rows so far, read once the backends have published their counters. */
  async counters(quietSince: number): Promise<DatabaseCounters> {
    await sleep(Math.max(0, quietSince + STATS_SETTLE_MS - performance.now()));
    // Every earlier query of the bench is in the counter by now; this one is not yet.
    const ownQueries = this.queries;
    const [stats] = await this.query<{ xact_commit: string }>(
      'SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()',
    );
    const at = performance.now();
    const tables = await this.query<{ name: string; rows: string }>(
      `SELECT schemaname || '.' || relname AS name, n_tup_ins + n_tup_upd + n_tup_del AS rows
         FROM pg_stat_user_tables`,
    );
    return {
      at,
      commits: Number(stats?.xact_commit ?? Number.NaN) - ownQueries,
      rowsByTable: new Map(tables.map((row) => [row.name, Number(row.rows)])),
    };
  }

  async close(): Promise<void> {
    await this.client.end().catch(() => undefined);
  }
}

/**
 * The platform as `npm run bench` runs it: the standalone from `dist/` (ingress + task-service in one process,
 * the example workers as its child processes) on a throw-away database, with what the bench reads about it:
 * the CPU of its processes and of the database's backends, and the transactions committed in its database.
 */
import { sleep, startStandalone, type PlatformProcess, type TestDatabase } from '@lib/testing';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client } from 'pg';
import type { A2aEndpoints } from './a2a-load';
import { childPids, ticksByPid } from './proc-stats';

/**
 * Backends publish their counters to pg_stat_database at most once a second while busy and within 10 s once
 * idle (Postgres 15: PGSTAT_MIN_INTERVAL, PGSTAT_IDLE_INTERVAL), so a count is read 11 s after the load.
 */
const STATS_SETTLE_MS = 11_000;

/** The platform's commits and appended events up to one moment. */
export interface Counters {
  /** performance.now() of the read. */
  at: number;
  /** xact_commit of the bench database, less the transactions of the bench's own reads. */
  commits: number;
  /** Rows of events.messages. */
  events: number;
}

/** CPU ticks per pid of the platform's process groups at one moment. */
export interface PlatformCpu {
  /** The standalone process: ingress and task-service. */
  standalone: Map<number, number>;
  /** The echo worker child. */
  worker: Map<number, number>;
  /** The Postgres backends connected to the bench database (the bench's own excepted). */
  postgres: Map<number, number>;
}

/** Profiles the worker children, which the standalone starts without Node options (next to this file). */
const CPU_PROFILE_PRELOAD = join(__dirname, 'cpu-profile-preload.js');

export class BenchPlatform {
  /** Queries the bench sent on `client`: each is one transaction of its own in the counter. */
  private queries = 0;

  private constructor(
    readonly process: PlatformProcess,
    readonly endpoints: A2aEndpoints,
    readonly workerPid: number,
    private readonly client: Client,
  ) {}

  /**
   * Boots the standalone on `db`, with `env` beside the database's address, and connects the bench's one reading connection. With `profileDir`, the
   * standalone runs with `node --cpu-prof` and its workers with the preload, and each writes its profile
   * there when it exits. With `root`, the build of that checkout runs instead of this one's (it migrates
   * its database itself when it starts).
   */
  static async start(
    db: Pick<TestDatabase, 'url'>,
    profileDir: string | null,
    env: Record<string, string>,
    root?: string,
  ): Promise<BenchPlatform> {
    const platform = await startStandalone(
      {
        ...env,
        POSTGRES_URL: db.url,
        ...(profileDir !== null && {
          NODE_OPTIONS: `--require ${JSON.stringify(CPU_PROFILE_PRELOAD)}`,
          BENCH_CPU_PROF_DIR: profileDir,
        }),
      },
      {
        nodeArgs: profileDir === null ? [] : ['--cpu-prof', `--cpu-prof-dir=${profileDir}`],
        ...(root !== undefined && { root }),
      },
    );
    try {
      const pid = platform.process.pid ?? 0;
      const [workerPid] = childPids(pid, 'echo');
      if (workerPid === undefined) {
        throw new Error(`no echo worker child of the standalone (pid ${pid}) in /proc`);
      }
      // One connection for the whole run: a pool would reconnect after idle periods, and each new
      // backend's start-up transaction would count as a commit.
      const client = new Client({ connectionString: db.url, application_name: 'a2a-bench' });
      await client.connect();
      const base = platform.baseUrl;
      return new BenchPlatform(
        platform.process,
        {
          jsonrpcUrl: `${base}/agents/demo/echo/jsonrpc`,
          restBaseUrl: `${base}/agents/demo/echo/rest`,
          grpcTarget: platform.grpcTarget,
          grpcTenant: 'demo/echo',
        },
        workerPid,
        client,
      );
    } catch (error) {
      await platform.process.stop();
      throw error;
    }
  }

  get pid(): number {
    return this.process.pid ?? 0;
  }

  private async query<R extends object>(sql: string): Promise<R[]> {
    this.queries++;
    return (await this.client.query<R>(sql)).rows;
  }

  async postgresVersion(): Promise<string> {
    const [row] = await this.query<{ version: string }>('SELECT version()');
    return row?.version ?? '?';
  }

  async sampleCpu(): Promise<PlatformCpu> {
    const backends = await this.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
    );
    return {
      standalone: ticksByPid([this.pid]),
      worker: ticksByPid([this.workerPid]),
      postgres: ticksByPid(backends.map((row) => row.pid)),
    };
  }

  /** Commits and events so far, read once the platform's backends have published their counters. */
  async counters(quietSince: number): Promise<Counters> {
    await sleep(Math.max(0, quietSince + STATS_SETTLE_MS - performance.now()));
    // Every earlier query of the bench is in the counter by now; this one is not yet.
    const ownQueries = this.queries;
    const [stats] = await this.query<{ xact_commit: string }>(
      'SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()',
    );
    const at = performance.now();
    const [events] = await this.query<{ n: string }>('SELECT count(*) AS n FROM events.messages');
    return {
      at,
      commits: Number(stats?.xact_commit ?? Number.NaN) - ownQueries,
      events: Number(events?.n ?? Number.NaN),
    };
  }

  /** Stops the standalone (its workers with it), which writes its CPU profiles if it was given the option. */
  async stop(): Promise<void> {
    await this.client.end().catch(() => undefined);
    await this.process.stop();
  }
}

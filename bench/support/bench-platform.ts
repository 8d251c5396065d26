/**
 * The platform as `npm run bench` runs it: the standalone from `dist/` (ingress + task-service in one process,
 * the example workers as its child processes) on a throw-away database, with what the bench reads about it:
 * the CPU of its processes and of the database's backends, and the transactions committed in its database.
 */
import { startStandalone, type PlatformProcess, type TestDatabase } from '@lib/testing';
import { join } from 'node:path';
import type { A2aEndpoints } from './a2a-load';
import { DatabaseStats, type DatabaseCounters } from './database-stats';
import { childPids, ticksByPid } from './proc-stats';

/** The platform's commits, rows and appended events up to one moment. */
export interface Counters extends DatabaseCounters {
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
  private constructor(
    readonly process: PlatformProcess,
    readonly endpoints: A2aEndpoints,
    readonly workerPid: number,
    readonly stats: DatabaseStats,
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
      const stats = await DatabaseStats.connect(db.url);
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
        stats,
      );
    } catch (error) {
      await platform.process.stop();
      throw error;
    }
  }

  get pid(): number {
    return this.process.pid ?? 0;
  }

  /** The standalone and every child it started (the example workers). */
  get allPids(): number[] {
    return [this.pid, ...childPids(this.pid, '')];
  }

  async postgresVersion(): Promise<string> {
    const [row] = await this.stats.query<{ version: string }>('SELECT version()');
    return row?.version ?? '?';
  }

  /** The Postgres data directory, as the server says. */
  async dataDirectory(): Promise<string> {
    const [row] = await this.stats.query<{ data_directory: string }>('SHOW data_directory');
    return row?.data_directory ?? '';
  }

  async sampleCpu(): Promise<PlatformCpu> {
    return {
      standalone: ticksByPid([this.pid]),
      worker: ticksByPid([this.workerPid]),
      postgres: ticksByPid(await this.stats.backendPids()),
    };
  }

  /** Commits, rows and events so far, read once the platform's backends have published their counters. */
  async counters(quietSince: number): Promise<Counters> {
    const counters = await this.stats.counters(quietSince);
    const [events] = await this.stats.query<{ n: string }>(
      'SELECT count(*) AS n FROM events.messages',
    );
    return { ...counters, events: Number(events?.n ?? Number.NaN) };
  }

  /** Stops the standalone (its workers with it), which writes its CPU profiles if it was given the option. */
  async stop(): Promise<void> {
    await this.stats.close();
    await this.process.stop();
  }
}

import { processEnv } from '@lib/config';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chown, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { commandOutcome } from './command-outcome';
import { freePort, sleep } from './platform-processes';

const execFileAsync = promisify(execFile);

/** How Postgres shuts down: `fast` ends sessions cleanly, `immediate` kills them (a crash; recovery on start). */
export type PostgresShutdownMode = 'fast' | 'immediate';

/** Options of {@link PostgresServer.start}. */
export interface PostgresServerOptions {
  /** Shown in the temp dir's name and in the server's process titles (`cluster_name`); default `test`. */
  name?: string;
}

/** One application_name and how many client connections carry it. */
export interface PostgresBackendGroup {
  applicationName: string;
  count: number;
}

/** Seconds `pg_ctl` may wait for a start or a stop. */
const PG_CTL_WAIT_SECONDS = 60;
/** The start is retried on a fresh port this often when another process took the free port first. */
const PORT_ATTEMPTS = 3;
/** The application_name of this class's own short-lived connections, so that they are easy to tell apart. */
const CONTROL_APPLICATION_NAME = 'a2a-postgres-server';

interface ClusterOwner {
  uid: number;
  gid: number;
}

let binDir: Promise<string> | undefined;

/**
 * A throw-away Postgres cluster of its own (initdb in a temp dir, a free port on 127.0.0.1, trust auth, user
 * `postgres`) for tests that stop, restart or crash the database: the shared server on 5432 stays untouched.
 * Callers own its life: `start()` in beforeAll, `destroy()` in afterAll. As root, every Postgres binary runs as
 * the `postgres` OS user, because Postgres refuses to run as root.
 */
export class PostgresServer {
  private port = 0;
  private isRunning = false;
  private destroying: Promise<void> | undefined;

  private constructor(
    private readonly bin: string,
    /** The temp dir holding the data dir, the server log and the Unix socket. */
    readonly dir: string,
    private readonly owner: ClusterOwner | null,
    private readonly name: string,
  ) {}

  /** Creates the cluster and starts it; resolves once it accepts connections. */
  static async start(options: PostgresServerOptions = {}): Promise<PostgresServer> {
    const name = slug(options.name ?? 'test');
    const bin = await postgresBinDir();
    const owner = process.getuid?.() === 0 ? await postgresUser() : null;
    const dir = await mkdtemp(join(tmpdir(), `a2a-pg-${name}-`));
    const server = new PostgresServer(bin, dir, owner, name);
    try {
      if (owner) {
        await chown(dir, owner.uid, owner.gid);
      }
      await server.pg('initdb', [
        '-D',
        server.dataDir,
        '-U',
        'postgres',
        '--auth=trust',
        '--no-sync',
        '-E',
        'UTF8',
        '--locale=C',
      ]);
      for (let attempt = 1; ; attempt++) {
        server.port = await freePort();
        await server.writeSettings();
        // A fresh log, so that the check below sees this attempt's failure only.
        await rm(server.logFile, { force: true });
        try {
          await server.startAgain();
          break;
        } catch (err) {
          // freePort() only guarantees the port was free a moment ago: another process may have bound it.
          if (attempt >= PORT_ATTEMPTS || !/could not bind/i.test(await server.logTail())) {
            throw err;
          }
        }
      }
      return server;
    } catch (err) {
      await server.destroy();
      throw err;
    }
  }

  /** `postgres://postgres@127.0.0.1:<port>/<database>`. */
  url(database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${encodeURIComponent(database)}`;
  }

  /** Whether the server was started and has not been stopped since (as far as this object knows). */
  get running(): boolean {
    return this.isRunning;
  }

  /** Stops the server with `mode` and starts it again on the same port with the same data. */
  async restart(mode: PostgresShutdownMode): Promise<void> {
    await this.stop(mode);
    await this.startAgain();
  }

  /** Stops the server (a no-op when it is not running); connecting then fails with ECONNREFUSED. */
  async stop(mode: PostgresShutdownMode = 'fast'): Promise<void> {
    if (!this.isRunning) {
      return;
    }
    this.isRunning = false;
    await this.pgCtl(['stop', '-m', mode]);
  }

  /**
   * Starts the stopped server again (same port, same data; a no-op when it runs); resolves once it accepts
   * connections.
   */
  async startAgain(): Promise<void> {
    if (this.isRunning) {
      return;
    }
    if (this.destroying) {
      throw new Error(`PostgresServer ${this.name} is destroyed`);
    }
    await this.pgCtl(['start', '-l', this.logFile]);
    this.isRunning = true;
    await this.waitUntilAccepting();
  }

  /**
   * Terminates the client connections whose application_name is LIKE `applicationName` (`%` and `_` are
   * wildcards), except the one asking, and resolves with how many ended. Each termination is awaited (up to
   * 5 s), so the connections are gone when this resolves.
   */
  async terminateBackends(applicationName: string): Promise<number> {
    const result = await this.query<{ terminated: number }>(
      `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid, 5000))::int AS terminated
         FROM pg_stat_activity
        WHERE backend_type = 'client backend' AND application_name LIKE $1 AND pid <> pg_backend_pid()`,
      [applicationName],
    );
    return result[0]?.terminated ?? 0;
  }

  /** The client connections by application_name (this call's own connection excluded), sorted by name. */
  async backends(): Promise<PostgresBackendGroup[]> {
    return this.query<PostgresBackendGroup>(
      `SELECT application_name AS "applicationName", count(*)::int AS count
         FROM pg_stat_activity
        WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()
        GROUP BY application_name ORDER BY application_name`,
    );
  }

  /** Stops the server at once (errors ignored: it may be down already) and removes the temp dir. Idempotent. */
  destroy(): Promise<void> {
    this.destroying ??= (async () => {
      this.isRunning = false;
      if (existsSync(join(this.dataDir, 'postmaster.pid'))) {
        await this.pgCtl(['stop', '-m', 'immediate']).catch(() => undefined);
      }
      await rm(this.dir, { recursive: true, force: true });
    })();
    return this.destroying;
  }

  private get dataDir(): string {
    return join(this.dir, 'data');
  }

  private get logFile(): string {
    return join(this.dir, 'server.log');
  }

  private async writeSettings(): Promise<void> {
    // fsync and full_page_writes protect against an OS crash, which no test causes. synchronous_commit stays
    // on: an immediate shutdown is a Postgres crash, and an acknowledged commit must survive it.
    const settings = [
      `listen_addresses = '127.0.0.1'`,
      `port = ${this.port}`,
      `unix_socket_directories = '${this.dir}'`,
      `cluster_name = 'a2a-${this.name}'`,
      'max_connections = 200',
      'shared_buffers = 32MB',
      'fsync = off',
      'full_page_writes = off',
      '',
    ].join('\n');
    const file = join(this.dataDir, 'postgresql.a2a.conf');
    await writeFile(file, settings, { mode: 0o600 });
    if (this.owner) {
      await chown(file, this.owner.uid, this.owner.gid);
    }
    const main = join(this.dataDir, 'postgresql.conf');
    const conf = await readFile(main, 'utf8');
    const include = `include 'postgresql.a2a.conf'\n`;
    if (!conf.includes(include)) {
      await writeFile(main, `${conf}\n${include}`);
    }
  }

  private pgCtl(args: string[]): Promise<void> {
    return this.pg('pg_ctl', [
      ...args,
      '-D',
      this.dataDir,
      '-w',
      '-t',
      String(PG_CTL_WAIT_SECONDS),
    ]);
  }

  /** Runs a Postgres binary, as the `postgres` OS user when this process is root. */
  private async pg(program: string, args: string[]): Promise<void> {
    const path = join(this.bin, program);
    const [file, argv] = this.owner
      ? ['runuser', ['-u', 'postgres', '--', path, ...args]]
      : [path, args];
    try {
      // The cwd must be readable by the postgres user, which the caller's cwd may not be.
      await execFileAsync(file, argv, {
        cwd: this.dir,
        timeout: (PG_CTL_WAIT_SECONDS + 30) * 1_000,
        maxBuffer: 4 * 1024 * 1024,
      });
    } catch (err) {
      throw new Error(
        `${program} ${args.join(' ')} failed for PostgresServer ${this.name} (${this.dir}): ` +
          `${commandOutcome(err)}--- end of ${this.logFile}:\n${await this.logTail()}`,
        { cause: err },
      );
    }
  }

  private async waitUntilAccepting(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        await this.query('SELECT 1');
        return;
      } catch (err) {
        if (Date.now() > deadline) {
          throw new Error(
            `PostgresServer ${this.name} does not accept connections on port ${this.port}: ${String(err)}\n` +
              `--- end of ${this.logFile}:\n${await this.logTail()}`,
            { cause: err },
          );
        }
        await sleep(100);
      }
    }
  }

  /** One statement over a connection of its own, closed right after. */
  private async query<Row extends object>(sql: string, params: unknown[] = []): Promise<Row[]> {
    const client = new Client({
      connectionString: this.url(),
      application_name: CONTROL_APPLICATION_NAME,
      connectionTimeoutMillis: 5_000,
      query_timeout: 15_000,
    });
    // A connection that the server ends (a restart, a terminate) emits 'error'; the query reports it already.
    client.on('error', () => undefined);
    try {
      await client.connect();
      return (await client.query(sql, params)).rows as Row[];
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  private async logTail(lines = 40): Promise<string> {
    try {
      return (await readFile(this.logFile, 'utf8')).split('\n').slice(-lines).join('\n');
    } catch {
      return '(no server log)';
    }
  }
}

/** Lower-case letters, digits and dashes only: the name goes into a path and a config string. */
function slug(name: string): string {
  return (
    name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 24) || 'test'
  );
}

/** The uid and gid of the `postgres` OS user. */
async function postgresUser(): Promise<ClusterOwner> {
  try {
    const [uid, gid] = await Promise.all([
      execFileAsync('id', ['-u', 'postgres']),
      execFileAsync('id', ['-g', 'postgres']),
    ]);
    return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
  } catch (err) {
    throw new Error(
      'PostgresServer runs as root, and Postgres refuses to: it needs a `postgres` OS user to run as',
      { cause: err },
    );
  }
}

/**
 * The directory with initdb and pg_ctl: `pg_config --bindir`, else the newest /usr/lib/postgresql/<version>/bin
 * (Debian and Ubuntu keep the server binaries off PATH), else PATH.
 */
function postgresBinDir(): Promise<string> {
  binDir ??= findBinDir().catch((err: unknown) => {
    binDir = undefined;
    throw err;
  });
  return binDir;
}

async function findBinDir(): Promise<string> {
  const candidates: string[] = [];
  try {
    candidates.push((await execFileAsync('pg_config', ['--bindir'])).stdout.trim());
  } catch {
    // pg_config comes with the client or dev package, which may be missing: the other places follow.
  }
  const debian = '/usr/lib/postgresql';
  const versions = await readdir(debian).catch(() => [] as string[]);
  versions.sort((a, b) => Number(b) - Number(a));
  candidates.push(...versions.map((version) => join(debian, version, 'bin')));
  candidates.push(...(processEnv()['PATH'] ?? '').split(delimiter).filter((dir) => dir !== ''));
  const found = candidates.find(
    (dir) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl')),
  );
  if (!found) {
    throw new Error(
      `PostgresServer needs the Postgres server binaries (initdb, pg_ctl); looked in ${candidates.join(', ')}`,
    );
  }
  return found;
}

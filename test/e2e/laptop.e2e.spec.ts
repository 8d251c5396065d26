/**
 * The bare-laptop path of `npm start` (issue 13, README "Running on a laptop"): a machine with Node.js only,
 * no Postgres server, no Java, no Redis. The test runs the real `npm start` (`-- --no-build`: `npm run
 * test:e2e` has built) with a PATH that holds node, npm and the few tools the start scripts use, nothing else,
 * and without POSTGRES_URL. This machine's own servers are made absent by address: PGPORT is a free port
 * where nothing listens (so the local server libpq would use does not answer), KAFKA_BROKERS and REDIS_URL
 * name free ports too. The platform must come up on the embedded Postgres, serve a SendMessage, stop on
 * SIGTERM, come up again on the same data, return the task, and leave no Postgres behind.
 */
import type { AgentCard, Task } from '@lib/a2a-protocol';
import { processEnv } from '@lib/config';
import { freePort, processesNaming, repoRoot, sleep } from '@lib/testing';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectRpcError, rawRpc, request, sentTask, taskResult } from './support/json-rpc';
import { A2A_DOMAIN } from './support/wire';

/** What the start scripts run besides node and npm (scripts/start.sh, scripts/kafka/broker.sh up to its skip). */
const TOOLS = ['bash', 'sh', 'dirname', 'sed', 'head'];
/** What a bare laptop does not have. */
const ABSENT = ['java', 'mvn', 'psql', 'pg_ctl', 'postgres', 'initdb', 'redis-server'];

/** `npm start -- --no-build` in its own process group, its output kept (colours removed). */
class NpmStart {
  private child: ChildProcess | null = null;
  private exit: Promise<number | null> = Promise.resolve(null);
  /** Every start's process group, for the clean-up after a failed test. */
  private readonly groups: number[] = [];
  output = '';

  constructor(private readonly env: Record<string, string>) {}

  get pid(): number {
    const pid = this.child?.pid;
    if (pid === undefined) {
      throw new Error('npm start is not running');
    }
    return pid;
  }

  get running(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  start(): void {
    this.output = '';
    const child = spawn('npm', ['start', '--', '--no-build'], {
      cwd: repoRoot(),
      env: this.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const keep = (chunk: Buffer): void => {
      // eslint-disable-next-line no-control-regex
      this.output += chunk.toString('utf8').replace(/\x1b\[[0-9;]*m/g, '');
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    this.exit = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    this.child = child;
    if (child.pid !== undefined) {
      this.groups.push(child.pid);
    }
  }

  /** Waits until the platform serves, with every example worker connected. */
  async ready(timeoutMs = 90_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const serving = (): boolean =>
      /A2A platform ready/.test(this.output) &&
      ['echo', 'interview', 'countdown', 'tck', 'units'].every((agent) =>
        new RegExp(`serves ${agent}\\b`).test(this.output),
      );
    while (!serving()) {
      if (!this.running || Date.now() > deadline) {
        throw new Error(`npm start is not serving:\n${this.output.slice(-6_000)}`);
      }
      await sleep(100);
    }
  }

  /** Waits until npm start printed `pattern`. */
  async waitFor(pattern: RegExp, timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!pattern.test(this.output)) {
      if (!this.running || Date.now() > deadline) {
        throw new Error(
          `npm start did not print ${String(pattern)}:\n${this.output.slice(-6_000)}`,
        );
      }
      await sleep(100);
    }
  }

  /** Sends `signal` to npm (or, with `group`, to its whole process group, as Ctrl-C does) and waits. */
  async stop(signal: NodeJS.Signals, group = false): Promise<number | null> {
    process.kill(group ? -this.pid : this.pid, signal);
    return this.exit;
  }

  /** Ends whatever is left of the process groups (after a failed test). */
  async kill(): Promise<void> {
    for (const group of this.groups) {
      try {
        process.kill(-group, 'SIGKILL');
      } catch {
        // The group is gone already.
      }
    }
    await this.exit;
  }
}

/** Where `program` is on this test's PATH. */
function which(program: string): string {
  for (const dir of (processEnv()['PATH'] ?? '').split(delimiter)) {
    const candidate = join(dir, program);
    if (dir && existsSync(candidate)) {
      return realpathSync(candidate);
    }
  }
  throw new Error(`${program} is not on PATH`);
}

describe('npm start on a bare laptop (no Postgres server, no Java, no Redis)', () => {
  let root: string;
  let bin: string;
  let dataDir: string;
  let ports: Record<
    | 'pg'
    | 'kafka'
    | 'redis'
    | 'embedded'
    | 'http'
    | 'grpc'
    | 'worker'
    | 'command'
    | 'upstream'
    | 'upstreamGrpc',
    number
  >;
  let npm: NpmStart;
  let taskId: string;
  const endpoint = (): string => `http://127.0.0.1:${ports.http}/agents/demo/echo/jsonrpc`;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'a2a-laptop-'));
    // As root, the embedded Postgres runs as the postgres account, which must reach its folder.
    await chmod(root, 0o755);
    bin = join(root, 'bin');
    await mkdir(bin);
    await mkdir(join(root, 'home'));
    for (const tool of [...TOOLS, 'node', 'npm']) {
      await symlink(tool === 'node' ? process.execPath : which(tool), join(bin, tool));
    }
    dataDir = join(root, 'postgres');
    const [pg, kafka, redis, embedded, http, grpc, worker, command, upstream, upstreamGrpc] =
      await Promise.all(Array.from({ length: 10 }, () => freePort()));
    ports = {
      pg: pg!,
      kafka: kafka!,
      redis: redis!,
      embedded: embedded!,
      http: http!,
      grpc: grpc!,
      worker: worker!,
      command: command!,
      upstream: upstream!,
      upstreamGrpc: upstreamGrpc!,
    };
    npm = new NpmStart({
      PATH: bin,
      HOME: join(root, 'home'),
      npm_config_update_notifier: 'false',
      PGPORT: String(ports.pg),
      KAFKA_BROKERS: `127.0.0.1:${ports.kafka}`,
      REDIS_URL: `redis://127.0.0.1:${ports.redis}`,
      EMBEDDED_POSTGRES_DIR: dataDir,
      EMBEDDED_POSTGRES_PORT: String(ports.embedded),
      INGRESS_PORT: String(ports.http),
      A2A_GRPC_PORT: String(ports.grpc),
      WORKER_GRPC_PORT: String(ports.worker),
      TASK_SERVICE_GRPC_PORT: String(ports.command),
      UPSTREAM_EXAMPLE_PORT: String(ports.upstream),
      UPSTREAM_EXAMPLE_GRPC_PORT: String(ports.upstreamGrpc),
    });
  });

  afterAll(async () => {
    await npm?.kill();
    // A Postgres left behind would be a failure of the test above; this only keeps the machine clean.
    for (const pid of processesNaming(dataDir)) {
      process.kill(pid, 'SIGINT');
    }
    await rm(root, { recursive: true, force: true });
  });

  it('the PATH has none of the servers’ programs', () => {
    for (const program of ABSENT) {
      const found = spawnSync(join(bin, 'bash'), ['-c', `command -v ${program}`], {
        env: { PATH: bin },
      });
      expect(found.status, `${program} found: ${String(found.stdout)}`).not.toBe(0);
    }
  });

  it('starts on the embedded Postgres and says in one line each what it chose and what is off', async () => {
    npm.start();
    await npm.ready();
    const lines = npm.output;
    expect(lines).toContain(
      'kafka: not started: java not found; the platform runs without Kafka unless a broker answers at ' +
        'KAFKA_BROKERS',
    );
    expect(lines).toContain(
      `Postgres: the embedded one on 127.0.0.1:${ports.embedded}: POSTGRES_URL is unset and no server ` +
        `answers at 127.0.0.1:${ports.pg} (PGHOST/PGPORT)`,
    );
    expect(lines).toContain(
      `Kafka not reachable at 127.0.0.1:${ports.kafka}: the Kafka feed and push notifications are off`,
    );
    expect(lines).toContain(
      `Redis not reachable at redis://127.0.0.1:${ports.redis}: push notifications and per-tenant ` +
        'request-rate quotas are off',
    );
    expect(lines).toMatch(/initialising a new PostgreSQL 17\.\d+ cluster in .*\(first start\)/);
    expect(processesNaming(join(dataDir, 'data')).length).toBeGreaterThan(0);
  });

  it('its cards declare no push notifications; push configs, inline ones too, are refused (§3.3.4)', async () => {
    const response = await fetch(
      `http://127.0.0.1:${ports.http}/agents/demo/echo/.well-known/agent-card.json`,
    );
    const card = (await response.json()) as AgentCard;
    expect(card.capabilities).toMatchObject({ streaming: true, pushNotifications: false });
    const reply = await rawRpc(
      endpoint(),
      request(
        'CreateTaskPushNotificationConfig',
        { taskId: 'any', url: 'https://hooks.example.com/a2a' },
        7,
      ),
    );
    expectRpcError(reply, {
      code: -32003,
      id: 7,
      reason: 'PUSH_NOTIFICATION_NOT_SUPPORTED',
      domain: A2A_DOMAIN,
    });
    const inline = await rawRpc(
      endpoint(),
      request(
        'SendMessage',
        {
          message: { messageId: 'laptop-hook', role: 'ROLE_USER', parts: [{ text: 'hi' }] },
          configuration: { taskPushNotificationConfig: { url: 'https://hooks.example.com/a2a' } },
        },
        8,
      ),
    );
    expectRpcError(inline, {
      code: -32003,
      id: 8,
      reason: 'PUSH_NOTIFICATION_NOT_SUPPORTED',
      domain: A2A_DOMAIN,
    });
  });

  it('serves a SendMessage to the demo echo agent', async () => {
    const task = sentTask(
      await rawRpc(
        endpoint(),
        request('SendMessage', {
          message: {
            messageId: 'laptop-1',
            role: 'ROLE_USER',
            parts: [{ text: 'hello from a laptop' }],
          },
        }),
      ),
    );
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(task.artifacts?.[0]?.parts).toStrictEqual([{ text: 'hello from a laptop' }]);
    taskId = task.id;
  });

  it('hosts the example A2A server it runs beside it, imported as demo/upstream-example', async () => {
    await npm.waitFor(/is hosted as demo\/upstream-example/);
    await npm.waitFor(/serves upstream-example/);
    const reply = await rawRpc(
      `http://127.0.0.1:${ports.http}/agents/demo/upstream-example/jsonrpc`,
      request('SendMessage', {
        message: { messageId: 'laptop-up', role: 'ROLE_USER', parts: [{ text: 'echo hi' }] },
      }),
    );
    const task = sentTask(reply);
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(task.artifacts?.flatMap((a) => a.parts.map((p) => p.text))).toContain('echo: hi');
  });

  it('serves the web console, whose operator signs in with the token npm start kept in .data/admin-token', async () => {
    expect(npm.output).toContain(
      'web console: operators sign in with the token in .data/admin-token; the playground takes a tenant API key (demo-key)',
    );
    const page = await fetch(`http://127.0.0.1:${ports.http}/console/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<a2a-operator-app>');
    const token = (await readFile(join(repoRoot(), '.data', 'admin-token'), 'utf8')).trim();
    const whoami = await fetch(`http://127.0.0.1:${ports.http}/admin/v1/whoami`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(whoami.status).toBe(200);
    expect(await whoami.json()).toMatchObject({ role: 'platform-admin' });
  });

  it('stops on SIGTERM, with its Postgres', async () => {
    expect(await npm.stop('SIGTERM')).toBe(0);
    expect(processesNaming(dataDir)).toStrictEqual([]);
    expect(existsSync(join(dataDir, 'data', 'postmaster.pid'))).toBe(false);
  });

  it('starts again on the same data and reads the task back', async () => {
    npm.start();
    await npm.ready();
    expect(npm.output).not.toContain('initialising');
    const task: Task = taskResult(await rawRpc(endpoint(), request('GetTask', { id: taskId })));
    expect(task.id).toBe(taskId);
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(task.history?.[0]?.parts).toStrictEqual([{ text: 'hello from a laptop' }]);
    expect(task.artifacts?.[0]?.parts).toStrictEqual([{ text: 'hello from a laptop' }]);
  });

  it('stops on Ctrl-C (SIGINT to the whole process group) and leaves no Postgres behind', async () => {
    expect(await npm.stop('SIGINT', true)).toBe(0);
    // The platform's children (workers, Postgres) may end just after npm.
    const deadline = Date.now() + 30_000;
    while (processesNaming(dataDir).length > 0 && Date.now() < deadline) {
      await sleep(100);
    }
    expect(processesNaming(dataDir)).toStrictEqual([]);
    expect(existsSync(join(dataDir, 'data', 'postmaster.pid'))).toBe(false);
  });
});

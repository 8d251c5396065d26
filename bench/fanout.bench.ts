import { tenantIdOf } from '@lib/ids';
/**
 * Live fan-out, two scenarios (docs/benchmarks-history.md "Live fan-out").
 *
 * `node dist/bench/fanout.bench.js subscribers [options]` (ADR 0008): many SSE subscribers on one ingress
 * replica, sharing one log read per task. A throw-away database with the demo tenant, one task-service and
 * one ingress process from `dist/`; `--tasks` tasks wait (no worker yet); the ingress's RSS (as it is, and
 * after a full GC the bench asks for), the database's commits/s and tuples returned/s and the CPU of the
 * ingress and its Postgres backends with no subscriber, then with `--subscribers` SubscribeToTask streams
 * (JSON-RPC SSE, one raw `http.request` per stream, keep-alive off) open and idle. Then the bench becomes the
 * agent's worker (RawWorker of @lib/testing), takes every lease and publishes WORKING status updates through
 * the task-service at each of `--rates` per second for `--level-seconds`, then COMPLETED for every task; for
 * every event every stream receives: receive time − `events.messages.recorded_at` (the insert, just before
 * the commit), − the moment the PublishUpdate that wrote it returned (commit acknowledged), and − the task
 * notice at the bench's own LISTEN connection. Every stream is checked against the log (exactly the
 * client-visible generations after its snapshot, in order, ending with the task's last status). Raises its
 * own `ulimit -n` (re-running itself under `sh -c ulimit`) when the hard limit allows. Options:
 * `--subscribers N` (10000), `--tasks N` (100), `--opening N` (200 waiting for a snapshot at once),
 * `--idle-seconds N` (10), `--rates 10,20,50`, `--level-seconds N` (15), `--complete-rate N` (10 tasks
 * completed per second at the end, each closing its streams), `--logs`. Needs only Postgres.
 *
 * Default (no scenario): the NOTIFY wake-up of the ingress replicas when a task's stream moves (ADR 0005;
 * `npm run build && node dist/bench/fanout.bench.js`). One publisher (this process) and `--listeners` (4)
 * `LISTEN a2a_platform` connections, each in a process of its own, as 4 ingress replicas hold them; the
 * publisher's appends notify inside their transaction, as apps/task-service/src/write/task-decisions.ts does.
 * The comparison with Redis pub/sub and Kafka that ADR 0005 decided was removed from this file (the ADR keeps
 * its figures and says where the code is in the history).
 *
 * Measured:
 * 1. delivery latency at a steady `--rate` for `--seconds`, then at `--low-rate` for `--low-seconds`: each
 *    append is a small real transaction on a throw-away database (`appendToStream` of one event to a new task
 *    stream, plus the NOTIFY); latency is from "COMMIT acknowledged to the publisher" (and from "COMMIT sent")
 *    to "a listener process got the notice", per listener, on the machine's monotonic clock (process.hrtime,
 *    the same in every process); with the CPU time of the listener processes and of their LISTEN backends per
 *    1000 notices;
 * 2. the notices/s delivered to all listeners when the publisher sends as fast as it can with
 *    `--concurrency` transactions in flight for `--throughput-seconds` (at most `--throughput-max` notices):
 *    one notice per transaction, then `--batch` per transaction;
 * 3. the write path: a small append transaction alone and with the NOTIFY inside (one connection,
 *    `--write-samples` rounds, interleaved), then `--concurrency` appenders for `--write-seconds` per variant
 *    (in 1 s turns), with the wait events of their backends (sampled from pg_stat_activity: NOTIFY's commit
 *    lock shows as `Lock:object`, ADR 0005 "Consequences");
 * 4. listener 1's connection closed for `--drop-ms` while the publisher keeps `--rate`: notices missed,
 *    received late, duplicated (the listener reconnects and LISTENs again).
 *
 * Only loopback: Postgres (TEST_POSTGRES_URL). Every wait is bounded. The database is removed at the end, also
 * on SIGINT/SIGTERM.
 */
import {
  appendToStream,
  createPool,
  NOTICE_CHANNEL,
  NoticeListener,
  parseNotice,
  type Notice,
} from '@lib/event-store';
import { TASK_EVENT_SCHEMA_VERSION, taskStreamId, type TaskEvent } from '@lib/task-domain';
import { seedTenant } from '@lib/tenancy';
import {
  createTestDatabase,
  RawWorker,
  sleep,
  startIngress,
  startTaskService,
  type PlatformProcess,
  type TestDatabase,
} from '@lib/testing';
import { AGENT_PROFILES } from '@lib/worker-sdk';
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { Client, Pool } from 'pg';
import { ascending, fmt, percentile, printMachine, table } from './support/figures';
import { postRpc, rpcBody, rpcRequest, type RpcEndpoint } from './support/json-rpc-http';
import {
  CLOCK_TICKS,
  machineBusyTicks,
  processTicks,
  rssMiB,
  ticksByPid,
} from './support/proc-stats';
import { readSseBlocks } from './support/sse-blocks';
import { readTaskLogs, type LogEntry } from './support/task-log';
import { calibrateWallClock, wallMs } from './support/wall-clock';

interface Options {
  rate: number;
  seconds: number;
  lowRate: number;
  lowSeconds: number;
  listeners: number;
  throughputSeconds: number;
  throughputMax: number;
  concurrency: number;
  batch: number;
  writeSamples: number;
  writeSeconds: number;
  dropMs: number;
}

const TENANT = tenantIdOf('bench');
const LISTENER_FLAG = '--fanout-listener';
const METADATA = { actor: { kind: 'system' as const, id: 'fanout-bench' } };
/** Signals during the drop test: this long before listener 1 drops, and this long after it is back. */
const DROP_LEAD_MS = 2_000;
const DROP_TAIL_MS = 4_000;
/** A drain ends when every listener has every signal, or nothing new arrived for this long. */
const QUIET_MS = 2_000;
const DRAIN_TIMEOUT_MS = 30_000;
/** Concurrent write-path variants take turns in slices this long. */
const WRITE_SLICE_MS = 1_000;

function parseOptions(argv: string[]): Options {
  const options: Options = {
    rate: 200,
    seconds: 10,
    lowRate: 10,
    lowSeconds: 10,
    listeners: 4,
    throughputSeconds: 5,
    throughputMax: 100_000,
    concurrency: 8,
    batch: 50,
    writeSamples: 500,
    writeSeconds: 5,
    dropMs: 2_000,
  };
  const known =
    '--rate N, --seconds N, --low-rate N, --low-seconds N, --listeners N, --throughput-seconds N, ' +
    '--throughput-max N, --concurrency N, --batch N, --write-samples N, --write-seconds N, --drop-ms N';
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i] ?? '';
    const value = argv[i + 1];
    const positive = (max: number): number => {
      const n = Number(value);
      if (!Number.isInteger(n) || n <= 0 || n > max) {
        throw new Error(`${flag} needs an integer in 1..${max}, got ${String(value)}`);
      }
      i++;
      return n;
    };
    switch (flag) {
      case '--rate':
        options.rate = positive(5_000);
        break;
      case '--seconds':
        options.seconds = positive(120);
        break;
      case '--low-rate':
        options.lowRate = positive(1_000);
        break;
      case '--low-seconds':
        options.lowSeconds = positive(120);
        break;
      case '--listeners':
        options.listeners = positive(16);
        break;
      case '--throughput-seconds':
        options.throughputSeconds = positive(60);
        break;
      case '--throughput-max':
        options.throughputMax = positive(1_000_000);
        break;
      case '--concurrency':
        options.concurrency = positive(64);
        break;
      case '--batch':
        options.batch = positive(1_000);
        break;
      case '--write-samples':
        options.writeSamples = positive(20_000);
        break;
      case '--write-seconds':
        options.writeSeconds = positive(60);
        break;
      case '--drop-ms':
        options.dropMs = positive(60_000);
        break;
      default:
        throw new Error(`unknown argument ${flag} (known: ${known})`);
    }
  }
  return options;
}

/** Milliseconds on the monotonic clock (CLOCK_MONOTONIC), the same in every process of the machine. */
function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/** CPU time (user + system) of this process so far, in ms. */
function ownCpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1_000;
}

/** CPU time of another process of this machine so far, in ms (Linux /proc); null if unknown. */
function processCpuMs(pid: number): number | null {
  const ticks = processTicks(pid);
  return ticks === null ? null : (ticks * 1_000) / CLOCK_TICKS;
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

// ---------------------------------------------------------------------------------------------------------
// The listener processes (this file, forked with LISTENER_FLAG).

/** Where a listener process connects: the bench's throw-away database. */
interface ListenerSpec {
  url: string;
}

type ToListener = { type: 'drop'; ms: number } | { type: 'collect' } | { type: 'stop' };

type FromListener =
  | { type: 'ready' }
  /** Started closing at `downAt`, started to reconnect at `reconnectAt`, listening again at `upAt`. */
  | { type: 'dropped'; downAt: number; reconnectAt: number; upAt: number }
  /** `cpuMs`: the process's CPU time (user + system) so far. */
  | { type: 'receipts'; ids: string[]; at: number[]; cpuMs: number }
  | { type: 'failed'; message: string };

type DropWindow = Omit<Extract<FromListener, { type: 'dropped' }>, 'type'>;

type OnSignal = (id: string, at: number) => void;

/** The signal id of a task notice: `<task id>/<version>`. */
function noticeId(notice: Notice | null): string | null {
  return notice?.k === 'task' ? `${notice.id}/${notice.v}` : null;
}

/** Opens one listening connection; resolves, once it listens, to a function that closes it. */
async function openConnection(
  spec: ListenerSpec,
  onSignal: OnSignal,
): Promise<() => Promise<void>> {
  const client = new Client({
    connectionString: spec.url,
    application_name: 'fanout-bench-listener',
  });
  client.on('error', () => undefined);
  client.on('notification', (message) => {
    const at = nowMs();
    const id = noticeId(message.payload ? parseNotice(message.payload) : null);
    if (id) {
      onSignal(id, at);
    }
  });
  await client.connect();
  await client.query(`LISTEN ${NOTICE_CHANNEL}`);
  return () => client.end();
}

async function runListener(spec: ListenerSpec): Promise<void> {
  const send = (message: FromListener): void => {
    process.send?.(message);
  };
  let ids: string[] = [];
  let at: number[] = [];
  const onSignal: OnSignal = (id, time) => {
    ids.push(id);
    at.push(time);
  };
  let close = await openConnection(spec, onSignal);
  let stopping = false;
  // The publisher is gone (finished, killed): nothing left to report to.
  process.on('disconnect', () => process.exit(0));
  process.on('message', (raw) => {
    const message = raw as ToListener;
    switch (message.type) {
      case 'collect':
        send({ type: 'receipts', ids, at, cpuMs: ownCpuMs() });
        ids = [];
        at = [];
        break;
      case 'drop': {
        const dropping = async (): Promise<void> => {
          const downAt = nowMs();
          await close();
          await sleep(message.ms);
          const reconnectAt = nowMs();
          close = await openConnection(spec, onSignal);
          send({ type: 'dropped', downAt, reconnectAt, upAt: nowMs() });
        };
        dropping().catch((error: unknown) => send({ type: 'failed', message: String(error) }));
        break;
      }
      case 'stop':
        if (!stopping) {
          stopping = true;
          close()
            .catch(() => undefined)
            .finally(() => process.exit(0));
        }
        break;
    }
  });
  send({ type: 'ready' });
}

/** The publisher's handle on one listener process, with the receipts collected so far. */
class ListenerProcess {
  private readonly child: ChildProcess;
  private readonly waiters = new Map<FromListener['type'], (message: FromListener) => void>();
  private failure: string | null = null;
  /** First receipt time of each signal id since the last reset. */
  readonly firstAt = new Map<string, number>();
  duplicates = 0;
  /** CPU time of the process at the last collect. */
  cpuMs = 0;

  constructor(
    readonly index: number,
    spec: ListenerSpec,
  ) {
    this.child = fork(__filename, [LISTENER_FLAG, JSON.stringify(spec)], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    this.child.on('message', (raw) => {
      const message = raw as FromListener;
      if (message.type === 'failed') {
        this.failure = message.message;
      }
      const waiter = this.waiters.get(message.type);
      if (waiter) {
        this.waiters.delete(message.type);
        waiter(message);
      }
    });
    this.child.on('error', (error) => this.fail(`listener ${index}: ${error.message}`));
    this.child.on('exit', (code) => this.fail(`listener ${index} exited (${String(code)})`));
  }

  /** Marks the process unusable and fails every pending request. */
  private fail(reason: string): void {
    this.failure ??= reason;
    for (const waiter of this.waiters.values()) {
      waiter({ type: 'failed', message: this.failure });
    }
    this.waiters.clear();
  }

  private expect<T extends FromListener['type']>(
    type: T,
    timeoutMs: number,
  ): Promise<Extract<FromListener, { type: T }>> {
    if (this.failure) {
      return Promise.reject(new Error(this.failure));
    }
    const answer = new Promise<Extract<FromListener, { type: T }>>((resolve, reject) => {
      this.waiters.set(type, (message) => {
        if (message.type === type) {
          resolve(message as Extract<FromListener, { type: T }>);
        } else {
          reject(new Error(message.type === 'failed' ? message.message : message.type));
        }
      });
    });
    return withTimeout(answer, timeoutMs, `listener ${this.index} ${type}`);
  }

  private send(message: ToListener): void {
    if (!this.child.connected) {
      this.fail(`listener ${this.index}: IPC channel closed`);
      return;
    }
    this.child.send(message, (error) => {
      if (error) {
        this.fail(`listener ${this.index}: ${error.message}`);
      }
    });
  }

  async ready(): Promise<void> {
    await this.expect('ready', 90_000);
  }

  /** Fetches the receipts since the last call; returns how many arrived. */
  async collect(): Promise<number> {
    const answer = this.expect('receipts', 30_000);
    this.send({ type: 'collect' });
    const { ids, at, cpuMs } = await answer;
    this.cpuMs = cpuMs;
    ids.forEach((id, i) => {
      if (this.firstAt.has(id)) {
        this.duplicates++;
      } else {
        this.firstAt.set(id, at[i] ?? Number.NaN);
      }
    });
    return ids.length;
  }

  reset(): void {
    this.firstAt.clear();
    this.duplicates = 0;
  }

  /** Closes the connection for `ms`, then reconnects; resolves when it listens again. */
  drop(ms: number): Promise<DropWindow> {
    const answer = this.expect('dropped', ms + 90_000);
    this.send({ type: 'drop', ms });
    return answer;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) {
      return;
    }
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.send({ type: 'stop' });
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  }
}

async function startListeners(count: number, spec: ListenerSpec): Promise<ListenerProcess[]> {
  const listeners = Array.from({ length: count }, (_, i) => new ListenerProcess(i + 1, spec));
  try {
    await Promise.all(listeners.map((l) => l.ready()));
  } catch (error) {
    await Promise.all(listeners.map((l) => l.stop()));
    throw error;
  }
  return listeners;
}

async function collectAll(listeners: ListenerProcess[]): Promise<number> {
  const counts = await Promise.all(listeners.map((l) => l.collect()));
  return counts.reduce((a, b) => a + b, 0);
}

/** Collects until every listener has every id, or nothing new arrived for QUIET_MS (bounded). */
async function drain(listeners: ListenerProcess[], ids: Iterable<string>): Promise<void> {
  const wanted = [...ids];
  const deadline = nowMs() + DRAIN_TIMEOUT_MS;
  let lastNew = nowMs();
  while (nowMs() < deadline) {
    if ((await collectAll(listeners)) > 0) {
      lastNew = nowMs();
    }
    if (listeners.every((l) => wanted.every((id) => l.firstAt.has(id)))) {
      return;
    }
    if (nowMs() - lastNew > QUIET_MS) {
      return;
    }
    await sleep(100);
  }
}

// ---------------------------------------------------------------------------------------------------------
// Publishing side.

/** Notices on their own (no append): one autocommit transaction for all of them. */
async function notifyAll(pool: Pool, payloads: string[]): Promise<void> {
  await pool.query('SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p', [
    NOTICE_CHANNEL,
    payloads,
  ]);
}

function notice(taskId: string, version: number): string {
  const value: Notice = { k: 'task', t: TENANT, id: taskId, v: version };
  return JSON.stringify(value);
}

interface Append {
  id: string;
  startAt: number;
  /** COMMIT sent (the signal cannot be out before this). */
  commitSentAt: number;
  /** COMMIT acknowledged. */
  commitAt: number;
}

/**
 * One small append transaction like the task-service's: BEGIN; the stream row and one event
 * (`appendToStream`); its notice, unless `notify` is false; COMMIT.
 */
async function appendOnce(pool: Pool, notify: boolean): Promise<Append> {
  const startAt = nowMs();
  const taskId = randomUUID();
  const event: TaskEvent = {
    type: 'TaskStatusUpdated',
    data: { status: { state: 'TASK_STATE_WORKING', timestamp: new Date().toISOString() } },
  };
  let commitSentAt = Number.NaN;
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await appendToStream(
      client,
      TENANT,
      taskStreamId(TENANT, taskId),
      0,
      [{ event, schemaVersion: TASK_EVENT_SCHEMA_VERSION }],
      METADATA,
    );
    if (notify) {
      await client.query('SELECT pg_notify($1, $2)', [NOTICE_CHANNEL, notice(taskId, 1)]);
    }
    commitSentAt = nowMs();
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
  return { id: `${taskId}/1`, startAt, commitSentAt, commitAt: nowMs() };
}

/** Starts `op` every 1000/rate ms (open loop: a slow one does not delay the next) for `ms`. */
async function atRate(
  rate: number,
  ms: number,
  op: (index: number) => Promise<Append>,
  onTick?: (elapsedMs: number) => void,
): Promise<{ results: Append[]; errors: number }> {
  const count = Math.round((rate * ms) / 1_000);
  const start = nowMs();
  const pending: Promise<Append | null>[] = [];
  let errors = 0;
  for (let i = 0; i < count; i++) {
    const wait = start + (i * 1_000) / rate - nowMs();
    if (wait > 1) {
      await sleep(wait);
    }
    onTick?.(nowMs() - start);
    pending.push(
      op(i).catch(() => {
        errors++;
        return null;
      }),
    );
  }
  const settled = await Promise.all(pending);
  return { results: settled.filter((r): r is Append => r !== null), errors };
}

/** Sends notices until the listeners have received a few of them (connections warm). */
async function warmUp(listeners: ListenerProcess[], send: () => Promise<string>): Promise<void> {
  const deadline = nowMs() + 90_000;
  const sent: string[] = [];
  while (nowMs() < deadline) {
    sent.push(await send());
    await sleep(100);
    await collectAll(listeners);
    if (sent.length >= 10 && listeners.every((l) => l.firstAt.has(sent[sent.length - 5] ?? ''))) {
      await sleep(500);
      await collectAll(listeners);
      listeners.forEach((l) => l.reset());
      return;
    }
  }
  throw new Error('the listeners got no warm-up notice within 90 s');
}

// ---------------------------------------------------------------------------------------------------------
// Figures.

interface Delivery {
  signals: number;
  deliveries: number;
  missed: number;
  duplicates: number;
  latencies: number[];
  /** Signals every listener got. */
  toAll: number;
  lastAt: number;
}

/** Matches the receipts of `listeners` with the signals sent (id → reference time). */
function delivery(listeners: ListenerProcess[], sent: Map<string, number>): Delivery {
  const latencies: number[] = [];
  let missed = 0;
  let toAll = 0;
  let lastAt = Number.NEGATIVE_INFINITY;
  for (const [id, t0] of sent) {
    let everyone = true;
    for (const listener of listeners) {
      const at = listener.firstAt.get(id);
      if (at === undefined) {
        missed++;
        everyone = false;
      } else {
        latencies.push(at - t0);
        lastAt = Math.max(lastAt, at);
      }
    }
    if (everyone) {
      toAll++;
    }
  }
  latencies.sort((a, b) => a - b);
  return {
    signals: sent.size,
    deliveries: latencies.length,
    missed,
    duplicates: listeners.reduce((sum, l) => sum + l.duplicates, 0),
    latencies,
    toAll,
    lastAt,
  };
}

/** CPU time spent by the listener processes and by their LISTEN backends during a run. */
interface CpuMeter {
  stop(): Promise<{ listenersMs: number; serverMs: number | null }>;
}

async function startCpuMeter(
  listeners: ListenerProcess[],
  serverPids: () => Promise<number[]>,
): Promise<CpuMeter> {
  const serverMs = async (): Promise<number | null> => {
    const values = (await serverPids()).map(processCpuMs);
    return values.length === 0 || values.some((v) => v === null)
      ? null
      : values.reduce<number>((sum, v) => sum + (v ?? 0), 0);
  };
  await collectAll(listeners);
  const listenersBefore = listeners.reduce((sum, l) => sum + l.cpuMs, 0);
  const serverBefore = await serverMs();
  return {
    async stop() {
      await collectAll(listeners);
      const serverAfter = await serverMs();
      return {
        listenersMs: listeners.reduce((sum, l) => sum + l.cpuMs, 0) - listenersBefore,
        serverMs: serverAfter === null || serverBefore === null ? null : serverAfter - serverBefore,
      };
    },
  };
}

/** One row of the latency table: both reference points, the commit, CPU per 1000 notices. */
function latencyRow(
  rate: number,
  listeners: ListenerProcess[],
  run: { results: Append[]; errors: number },
  cpu: { listenersMs: number; serverMs: number | null },
): string[] {
  const fromAck = delivery(listeners, new Map(run.results.map((a) => [a.id, a.commitAt])));
  const fromSent = delivery(listeners, new Map(run.results.map((a) => [a.id, a.commitSentAt])));
  const commit = ascending(run.results.map((a) => a.commitAt - a.commitSentAt));
  const thousands = Math.max(1, run.results.length) / 1_000;
  return [
    String(rate),
    String(fromAck.signals),
    String(run.errors),
    String(fromAck.deliveries),
    String(fromAck.missed),
    String(fromAck.duplicates),
    fmt(percentile(fromAck.latencies, 50), 2),
    fmt(percentile(fromAck.latencies, 99), 2),
    fmt(fromAck.latencies[fromAck.latencies.length - 1] ?? Number.NaN, 2),
    fmt(percentile(fromSent.latencies, 50), 2),
    fmt(percentile(fromSent.latencies, 99), 2),
    fmt(percentile(commit, 50), 2),
    fmt(cpu.listenersMs / listeners.length / thousands, 0),
    cpu.serverMs === null ? '-' : fmt(cpu.serverMs / thousands, 0),
  ];
}

// ---------------------------------------------------------------------------------------------------------
// The phases.

interface Setup {
  options: Options;
  db: TestDatabase;
  pool: Pool;
}

interface NotifyFigures {
  latency: string[][];
  throughput: string[][];
  drop: string[];
}

/** The Postgres backends of the LISTEN connections: what delivers the notices on the server side. */
async function listenBackends(setup: Setup): Promise<number[]> {
  const rows = await setup.db.pool.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity
      WHERE datname = current_database() AND application_name = 'fanout-bench-listener'`,
  );
  return rows.rows.map((r) => r.pid);
}

/** Latency, throughput and drop, with `--listeners` listener processes. */
async function measureNotify(setup: Setup): Promise<NotifyFigures> {
  const { options, db } = setup;
  console.error(`[notify] starting ${options.listeners} listener processes`);
  const listeners = await startListeners(options.listeners, { url: db.url });
  const stopListeners = async (): Promise<void> => {
    await Promise.all(listeners.map((l) => l.stop()));
  };
  cleanups.add(stopListeners);
  try {
    await warmUp(listeners, async () => (await appendOnce(setup.pool, true)).id);

    // 1. Latency at a steady rate, then at a low one (idle between signals, like a few live tasks).
    const latency: string[][] = [];
    for (const [rate, seconds] of [
      [options.rate, options.seconds],
      [options.lowRate, options.lowSeconds],
    ] as const) {
      console.error(`[notify] latency: ${rate}/s for ${seconds} s`);
      const meter = await startCpuMeter(listeners, () => listenBackends(setup));
      const steady = await atRate(rate, seconds * 1_000, () => appendOnce(setup.pool, true));
      await drain(
        listeners,
        steady.results.map((a) => a.id),
      );
      latency.push(latencyRow(rate, listeners, steady, await meter.stop()));
      listeners.forEach((l) => l.reset());
    }

    // 2. Throughput, one notice per transaction and `batch` per transaction.
    const throughput: string[][] = [];
    for (const batch of [1, options.batch]) {
      console.error(`[notify] throughput: batch ${batch}, ${options.concurrency} in flight`);
      /** Signal id → when its request was sent (only signals whose request was acknowledged). */
      const acked = new Map<string, number>();
      const prefix = randomBytes(4).toString('hex');
      let issued = 0;
      let errors = 0;
      const start = nowMs();
      const end = start + options.throughputSeconds * 1_000;
      let lastAck = start;
      const worker = async (): Promise<void> => {
        while (nowMs() < end && issued < options.throughputMax) {
          const ids = Array.from({ length: batch }, () => `${prefix}-${issued++}`);
          try {
            const sentAt = nowMs();
            await notifyAll(
              setup.pool,
              ids.map((id) => notice(id, 0)),
            );
            lastAck = Math.max(lastAck, nowMs());
            ids.forEach((id) => acked.set(`${id}/0`, sentAt));
          } catch {
            errors += ids.length;
          }
        }
      };
      await Promise.all(Array.from({ length: options.concurrency }, worker));
      await drain(listeners, acked.keys());
      const d = delivery(listeners, acked);
      const seconds = (d.lastAt - start) / 1_000;
      throughput.push([
        String(batch),
        String(acked.size),
        String(errors),
        fmt(acked.size / ((lastAck - start) / 1_000), 0),
        String(d.toAll),
        fmt(d.toAll / seconds, 0),
        String(d.missed),
        fmt(percentile(d.latencies, 50), 1),
        fmt(percentile(d.latencies, 99), 1),
      ]);
      listeners.forEach((l) => l.reset());
    }

    // 4. Listener 1 loses its connection for dropMs while signals keep coming.
    console.error(`[notify] drop: listener 1 down for ${options.dropMs} ms`);
    const first = listeners[0];
    if (!first) {
      throw new Error('no listener');
    }
    const dropping: { window?: Promise<DropWindow> } = {};
    const run = await atRate(
      options.rate,
      DROP_LEAD_MS + options.dropMs + DROP_TAIL_MS,
      () => appendOnce(setup.pool, true),
      (elapsed) => {
        if (!dropping.window && elapsed >= DROP_LEAD_MS) {
          dropping.window = first.drop(options.dropMs);
        }
      },
    );
    if (!dropping.window) {
      throw new Error('listener 1 was never dropped');
    }
    const window = await dropping.window;
    const sent = new Map(run.results.map((a) => [a.id, a.commitAt]));
    await drain(listeners, sent.keys());
    const d1 = delivery([first], sent);
    const others = delivery(listeners.slice(1), sent);
    let whileDown = 0;
    let missedWhileDown = 0;
    let missedOutside = 0;
    let late = 0;
    let lateMax = 0;
    for (const [id, commitAt] of sent) {
      const at = first.firstAt.get(id);
      const down = commitAt >= window.downAt && commitAt < window.upAt;
      if (down) {
        whileDown++;
      }
      if (at === undefined) {
        if (down) {
          missedWhileDown++;
        } else {
          missedOutside++;
        }
      } else if (commitAt < window.upAt && at >= window.downAt) {
        late++;
        lateMax = Math.max(lateMax, at - commitAt);
      }
    }
    const drop = [
      String(sent.size),
      fmt(window.upAt - window.downAt, 0),
      fmt(window.upAt - window.reconnectAt, 0),
      String(whileDown),
      String(d1.deliveries),
      String(missedWhileDown),
      String(missedOutside),
      String(late),
      late > 0 ? fmt(lateMax, 0) : '-',
      String(d1.duplicates),
      String(others.missed),
    ];
    return { latency, throughput, drop };
  } finally {
    await stopListeners();
    cleanups.delete(stopListeners);
  }
}

interface WriteVariant {
  label: string;
  notify: boolean;
}

/** 3. What the NOTIFY inside the append costs on the write path. */
async function measureWritePath(
  setup: Setup,
): Promise<{ sequential: string[][]; concurrent: string[][] }> {
  const { options } = setup;
  const variants: WriteVariant[] = [
    { label: 'append alone', notify: false },
    { label: 'append + NOTIFY inside', notify: true },
  ];
  console.error(`[write path] ${options.writeSamples} rounds of ${variants.length} variants`);
  const samples = new Map<string, number[]>(variants.map((v) => [v.label, []]));
  for (let i = 0; i < 20; i++) {
    for (const variant of variants) {
      await appendOnce(setup.pool, variant.notify);
    }
  }
  for (let i = 0; i < options.writeSamples; i++) {
    // Rotate the order so that no variant always runs right after another.
    for (let k = 0; k < variants.length; k++) {
      const variant = variants[(i + k) % variants.length];
      if (variant) {
        const a = await appendOnce(setup.pool, variant.notify);
        samples.get(variant.label)?.push(a.commitAt - a.startAt);
      }
    }
  }
  const base = ascending(samples.get(variants[0]?.label ?? '') ?? []);
  const baseP50 = percentile(base, 50);
  const baseMean = base.reduce((s, n) => s + n, 0) / base.length;
  const sequential = variants.map((v) => {
    const sorted = ascending(samples.get(v.label) ?? []);
    const mean = sorted.reduce((s, n) => s + n, 0) / sorted.length;
    return [
      v.label,
      String(sorted.length),
      fmt(percentile(sorted, 50), 2),
      fmt(percentile(sorted, 99), 2),
      fmt(mean, 2),
      fmt(percentile(sorted, 50) - baseP50, 2),
      fmt(mean - baseMean, 2),
    ];
  });

  // Concurrent appenders: the variants take turns in slices of WRITE_SLICE_MS (order rotated every round), so
  // that a change of the machine's load during the run hits all of them alike.
  interface Totals {
    times: number[];
    errors: number;
    ms: number;
    waits: Map<string, number>;
    samples: number;
  }
  const totals = new Map<string, Totals>(
    variants.map((v) => [v.label, { times: [], errors: 0, ms: 0, waits: new Map(), samples: 0 }]),
  );
  const pool = new Pool({
    connectionString: setup.db.url,
    max: options.concurrency + 2,
    application_name: 'fanout-bench-appender',
  });
  pool.on('error', () => undefined);
  const rounds = Math.max(1, Math.round((options.writeSeconds * 1_000) / WRITE_SLICE_MS));
  console.error(
    `[write path] ${options.concurrency} appenders, ${rounds} rounds of ${variants.length} variants`,
  );
  try {
    for (let round = 0; round < rounds; round++) {
      for (let k = 0; k < variants.length; k++) {
        const variant = variants[(round + k) % variants.length];
        const total = variant ? totals.get(variant.label) : undefined;
        if (!variant || !total) {
          continue;
        }
        const start = nowMs();
        const end = start + WRITE_SLICE_MS;
        const worker = async (): Promise<void> => {
          while (nowMs() < end) {
            try {
              const a = await appendOnce(pool, variant.notify);
              total.times.push(a.commitAt - a.startAt);
            } catch {
              total.errors++;
            }
          }
        };
        const sampling = sampleWaits(setup.db.pool, end, total);
        await Promise.all(Array.from({ length: options.concurrency }, worker));
        total.ms += nowMs() - start;
        await sampling;
      }
    }
  } finally {
    await pool.end();
  }
  const concurrent = variants.map((variant) => {
    const total = totals.get(variant.label);
    if (!total) {
      return [variant.label];
    }
    const times = ascending(total.times);
    const mean = (name: string): number =>
      (total.waits.get(name) ?? 0) / Math.max(1, total.samples);
    return [
      variant.label,
      String(times.length),
      String(total.errors),
      fmt(times.length / (total.ms / 1_000), 0),
      fmt(percentile(times, 50), 2),
      fmt(percentile(times, 99), 2),
      fmt(mean('Lock:object'), 2),
      [...total.waits.keys()]
        .filter((name) => name !== 'Lock:object')
        .sort((a, b) => mean(b) - mean(a))
        .slice(0, 2)
        .map((name) => `${name} ${fmt(mean(name), 2)}`)
        .join(', ') || '-',
    ];
  });
  return { sequential, concurrent };
}

/**
 * Samples pg_stat_activity every 20 ms until `end`, adding up for each wait event how many of the appenders'
 * backends were waiting on it (divided by `samples`: the mean). `Lock:object` is the heavyweight lock that
 * Postgres's NOTIFY takes at commit ("database 0", cluster-wide) and holds until the commit is done.
 */
async function sampleWaits(
  pool: Pool,
  end: number,
  into: { waits: Map<string, number>; samples: number },
): Promise<void> {
  while (nowMs() < end) {
    const rows = await pool.query<{ wait: string; n: number }>(
      `SELECT wait_event_type || ':' || wait_event AS wait, count(*)::int AS n
         FROM pg_stat_activity
        WHERE application_name = 'fanout-bench-appender' AND state = 'active'
          AND wait_event IS NOT NULL
        GROUP BY 1`,
    );
    into.samples++;
    for (const row of rows.rows) {
      into.waits.set(row.wait, (into.waits.get(row.wait) ?? 0) + row.n);
    }
    await sleep(20);
  }
}

// ---------------------------------------------------------------------------------------------------------

/**
 * What to undo if the bench is interrupted (SIGINT/SIGTERM): listener or platform processes, the database.
 * Run in reverse order of registration, each bounded.
 */
const cleanups = new Set<() => Promise<void>>();

function onTerminate(signal: NodeJS.Signals): void {
  console.error(`${signal}: cleaning up`);
  const steps = [...cleanups].reverse();
  cleanups.clear();
  const run = async (): Promise<void> => {
    for (const step of steps) {
      await withTimeout(step(), 20_000, 'clean-up step').catch((error: unknown) =>
        console.error(String(error)),
      );
    }
  };
  void run().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  console.log('# Live fan-out: the Postgres NOTIFY wake-up (loopback)');
  console.log(
    `1 publisher, ${options.listeners} listener processes; latency at ${options.rate}/s for ${options.seconds} s and ` +
      `${options.lowRate}/s for ${options.lowSeconds} s; ` +
      `throughput ${options.concurrency} in flight for ${options.throughputSeconds} s (≤ ${options.throughputMax}), ` +
      `batches 1 and ${options.batch}; write path ${options.writeSamples} rounds + ${options.concurrency} appenders ` +
      `for ${options.writeSeconds} s; drop ${options.dropMs} ms`,
  );
  process.once('SIGINT', onTerminate);
  process.once('SIGTERM', onTerminate);

  let db: TestDatabase | null = null;
  let dropped: Promise<void> | null = null;
  const dropDatabase = (): Promise<void> => {
    const target = db;
    dropped ??= target
      ? target
          .drop()
          .catch((error: unknown) => console.error(`could not drop the database: ${String(error)}`))
      : null;
    return dropped ?? Promise.resolve();
  };
  cleanups.add(dropDatabase);
  try {
    db = await createTestDatabase('bench_fanout');
    const settings = await db.pool.query<{ name: string; setting: string }>(
      `SELECT name, setting FROM pg_settings
        WHERE name IN ('fsync', 'synchronous_commit', 'wal_sync_method', 'shared_buffers', 'max_connections')
        ORDER BY name`,
    );
    const pgVersion =
      (await db.pool.query<{ version: string }>('SELECT version()')).rows[0]?.version ?? '?';
    printMachine(pgVersion);
    console.log(
      `  ${settings.rows.map((r) => `${r.name}=${r.setting}`).join(', ')} (shared_buffers in 8 kB pages)`,
    );
    console.log(
      `load average at start: ${loadavg()
        .map((n) => n.toFixed(2))
        .join(' ')}`,
    );
    const pool = createPool(db.url, { max: 10, applicationName: 'a2a-bench' });
    const setup: Setup = { options, db, pool };
    try {
      const figures = await measureNotify(setup);
      const write = await measureWritePath(setup);

      console.log('');
      console.log(
        `## 1. Delivery latency: ${options.rate} appends/s for ${options.seconds} s, then ${options.lowRate}/s for ${options.lowSeconds} s; COMMIT → each of ${options.listeners} listeners (ms)`,
      );
      console.log(
        table(
          [
            'notices/s',
            'notices',
            'errors',
            'deliveries',
            'missed',
            'dup',
            'p50',
            'p99',
            'max',
            'from COMMIT sent p50',
            'p99',
            'COMMIT p50',
            'CPU ms/1000, each listener',
            'CPU ms/1000, LISTEN backends',
          ],
          figures.latency,
        ),
      );
      console.log(
        'deliveries = notices × listeners that received them. p50/p99/max: from COMMIT acknowledged to the publisher\n' +
          '(negative when the listener had the notice before the publisher had processed the COMMIT reply); "from\n' +
          'COMMIT sent": from the moment the publisher sent COMMIT (includes the commit itself). "COMMIT": COMMIT\n' +
          'sent → acknowledged. CPU: user + system ms per 1000 notices, of each listener process (mean of the\n' +
          'listeners) and of their LISTEN backends together, over the run and its drain.',
      );
      console.log('');
      console.log(
        `## 2. Throughput: ${options.concurrency} transactions in flight for ${options.throughputSeconds} s, notices only (no append)`,
      );
      console.log(
        table(
          [
            'notices/transaction',
            'sent',
            'errors',
            'sent/s',
            'to all listeners',
            'delivered to all/s',
            'missed',
            'p50 ms',
            'p99 ms',
          ],
          figures.throughput,
        ),
      );
      console.log(
        'One transaction: SELECT pg_notify(...) FROM unnest(...), autocommit. "delivered to all/s" = notices every\n' +
          'listener got / (last delivery − first send). Latency from the transaction sent to receipt.',
      );
      console.log('');
      console.log('## 3. Write path: one small append transaction, without and with its NOTIFY');
      console.log(
        table(
          ['variant', 'appends', 'p50 ms', 'p99 ms', 'mean ms', 'added p50 ms', 'added mean ms'],
          write.sequential,
        ),
      );
      console.log(
        `${options.concurrency} appenders in parallel, ${options.writeSeconds} s per variant, in ${WRITE_SLICE_MS} ms turns:`,
      );
      console.log(
        table(
          [
            'variant',
            'appends',
            'errors',
            'appends/s',
            'p50 ms',
            'p99 ms',
            'waiting on Lock:object',
            'other waits (mean backends)',
          ],
          write.concurrent,
        ),
      );
      console.log(
        'Waits: mean number of appender backends waiting on each event (pg_stat_activity sampled every 20 ms).\n' +
          '"Lock:object" is the lock NOTIFY takes at commit on "database 0" (cluster-wide) and holds until the\n' +
          'commit is flushed, so notifying commits queue one behind another; anything else on the Postgres server\n' +
          'that notifies takes the same lock.',
      );
      console.log('');
      console.log(
        `## 4. Listener 1 disconnected for ${options.dropMs} ms while ${options.rate} appends/s go on`,
      );
      console.log(
        table(
          [
            'notices',
            'down ms',
            'reconnect ms',
            'committed while down',
            'listener 1 got',
            'missed (while down)',
            'missed (other)',
            'late',
            'late max ms',
            'dup',
            'listeners 2-4 missed',
          ],
          [figures.drop],
        ),
      );
      console.log(
        '"down": from closing the connection to listening again (LISTEN done); "reconnect": the part of it spent\n' +
          'reconnecting after the pause. "late": committed while listener 1 was down and received after it came\n' +
          'back (max: commit → receipt). "missed (other)": committed outside that window.',
      );
      console.log('');
      console.log(
        `load average at end: ${loadavg()
          .map((n) => n.toFixed(2))
          .join(' ')}`,
      );
    } finally {
      await pool.end();
    }
    return 0;
  } finally {
    cleanups.delete(dropDatabase);
    await dropDatabase();
  }
}

// ---------------------------------------------------------------------------------------------------------
// Scenario `subscribers`: many SSE subscribers on one ingress replica (ADR 0008, the shared per-task reads).

interface SubscriberOptions {
  subscribers: number;
  tasks: number;
  opening: number;
  idleSeconds: number;
  /** Status updates per second over all tasks, one load level each. */
  rates: number[];
  levelSeconds: number;
  /** Tasks completed per second at the end (each closes its streams). */
  completeRate: number;
  logs: boolean;
}

const SUBSCRIBERS_SCENARIO = 'subscribers';
/** Set by the bench itself when it re-ran itself under a raised `ulimit -n` (never re-run twice). */
const RAISED_LIMIT_FLAG = '--raised-file-limit';
const SSE_TENANT = 'demo';
const SSE_API_KEY = 'demo-key';
const SSE_AGENT = 'countdown';
const SSE_WORKER_SECRET = 'bench-fanout-worker-secret';
/** Application names of the platform processes' connections, to tell their backends apart. */
const SSE_INGRESS_APP = 'bench-ingress';
const SSE_TASK_SERVICE_APP = 'bench-task-service';
/** File descriptors the bench needs besides one per subscriber (the ingress needs as many: it inherits). */
const SPARE_FILES = 1_000;
/** How long one stream may wait for its snapshot before it counts as failed to open. */
const SSE_OPEN_TIMEOUT_MS = 60_000;
/**
 * Wait before an idle window's first sample: Postgres 15 backends report their transaction counts to
 * pg_stat_database up to ~10 s late when they go idle (PGSTAT_IDLE_INTERVAL), so the commits of the opening
 * would otherwise show up as idle ones.
 */
const PG_STATS_LAG_MS = 12_000;

function parseSubscriberOptions(argv: string[]): SubscriberOptions {
  const options: SubscriberOptions = {
    subscribers: 10_000,
    tasks: 100,
    opening: 200,
    idleSeconds: 10,
    rates: [10, 20, 50],
    levelSeconds: 15,
    completeRate: 10,
    logs: false,
  };
  const known =
    '--subscribers N, --tasks N, --opening N, --idle-seconds N, --rates 10,20,50, --level-seconds N, --complete-rate N, --logs';
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i] ?? '';
    const value = argv[i + 1];
    const integer = (min: number, max: number): number => {
      const n = Number(value);
      if (!Number.isInteger(n) || n < min || n > max) {
        throw new Error(`${flag} needs an integer in ${min}..${max}, got ${String(value)}`);
      }
      i++;
      return n;
    };
    switch (flag) {
      case '--subscribers':
        options.subscribers = integer(1, 50_000);
        break;
      case '--tasks':
        options.tasks = integer(1, 1_000);
        break;
      case '--opening':
        options.opening = integer(1, 2_000);
        break;
      case '--idle-seconds':
        options.idleSeconds = integer(1, 300);
        break;
      case '--rates':
        options.rates = String(value)
          .split(',')
          .map((rate) => Number(rate));
        if (options.rates.some((rate) => !Number.isInteger(rate) || rate < 1 || rate > 2_000)) {
          throw new Error(`--rates needs integers in 1..2000, got ${String(value)}`);
        }
        i++;
        break;
      case '--level-seconds':
        options.levelSeconds = integer(1, 300);
        break;
      case '--complete-rate':
        options.completeRate = integer(1, 2_000);
        break;
      case '--logs':
        options.logs = true;
        break;
      case RAISED_LIMIT_FLAG:
        break;
      default:
        throw new Error(`unknown argument ${flag} (known: ${known})`);
    }
  }
  if (options.tasks > options.subscribers) {
    throw new Error(`--tasks (${options.tasks}) must not exceed --subscribers`);
  }
  return options;
}

/** The soft and hard limits on open files of this process (Linux /proc); null off Linux. */
function openFileLimits(): { soft: number; hard: number } | null {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const [soft, hard] = (line ?? '').replace('Max open files', '').trim().split(/\s+/);
    const parse = (v: string | undefined): number =>
      v === 'unlimited' ? Number.MAX_SAFE_INTEGER : Number(v);
    return line ? { soft: parse(soft), hard: parse(hard) } : null;
  } catch {
    return null;
  }
}

/**
 * Loaded into the ingress (`NODE_OPTIONS=--require`): on SIGWINCH (which Nest does not handle and whose
 * default is to be ignored) it runs a full garbage collection through an in-process inspector session and
 * prints the process's memory, so that "memory per idle subscriber" counts what the subscribers hold, not
 * garbage the opening left behind.
 */
const GC_PRELOAD = `
const { Session } = require('node:inspector');
const session = new Session();
session.connect();
session.post('HeapProfiler.enable');
process.on('SIGWINCH', () => {
  session.post('HeapProfiler.collectGarbage', () => {
    console.log('bench-memory ' + JSON.stringify(process.memoryUsage()));
  });
});
`;

interface MemoryAfterGc {
  rssMiB: number;
  heapUsedMiB: number;
  heapTotalMiB: number;
  externalMiB: number;
}

/** Asks the ingress (started with GC_PRELOAD) for a full GC, then reads its memory; null if it does not answer. */
async function memoryAfterGc(proc: PlatformProcess): Promise<MemoryAfterGc | null> {
  const lines = (): string[] => proc.log.split('\n').filter((l) => l.startsWith('bench-memory '));
  const before = lines().length;
  process.kill(proc.pid ?? 0, 'SIGWINCH');
  const deadline = performance.now() + 20_000;
  while (lines().length === before && performance.now() < deadline) {
    await sleep(100);
  }
  const line = lines().at(-1);
  if (lines().length === before || line === undefined) {
    return null;
  }
  // RSS right after the collection: V8 gives the freed pages back (or not) on its own schedule.
  await sleep(500);
  const usage = JSON.parse(line.slice('bench-memory '.length)) as NodeJS.MemoryUsage;
  const mib = (bytes: number): number => bytes / 1024 / 1024;
  return {
    rssMiB: rssMiB(proc.pid ?? 0) ?? mib(usage.rss),
    heapUsedMiB: mib(usage.heapUsed),
    heapTotalMiB: mib(usage.heapTotal),
    externalMiB: mib(usage.external),
  };
}

/**
 * Node cannot raise its own `ulimit -n`: when the soft limit is too low for the subscribers (this process
 * holds one socket per subscriber, and so does the ingress, which inherits the limit) and the hard limit
 * allows it, the bench runs itself again under `sh -c 'ulimit -n N; exec …'` and returns that run's exit
 * code; null when the limit is high enough (run here).
 */
async function rerunWithFileLimit(argv: string[], subscribers: number): Promise<number | null> {
  const needed = subscribers + SPARE_FILES;
  const limits = openFileLimits();
  if (limits === null || limits.soft >= needed) {
    return null;
  }
  if (argv.includes(RAISED_LIMIT_FLAG) || limits.hard < needed) {
    throw new Error(
      `${subscribers} subscribers need ${needed} open files; ulimit -n is ${limits.soft} (hard ${limits.hard}). ` +
        'Raise it (e.g. `ulimit -n 65536` as root, or LimitNOFILE) or pass fewer --subscribers.',
    );
  }
  console.error(`raising ulimit -n from ${limits.soft} to ${needed} and running again`);
  const child = spawn(
    '/bin/sh',
    [
      '-c',
      `ulimit -n ${needed} && exec "$0" "$@"`,
      process.execPath,
      ...process.execArgv,
      process.argv[1] ?? '',
      SUBSCRIBERS_SCENARIO,
      ...argv,
      RAISED_LIMIT_FLAG,
    ],
    { stdio: 'inherit' },
  );
  const forward = (signal: NodeJS.Signals): void => {
    child.kill(signal);
  };
  process.on('SIGINT', forward);
  process.on('SIGTERM', forward);
  return new Promise((resolve) => child.on('exit', (code) => resolve(code ?? 1)));
}

/**
 * One SubscribeToTask stream as the client sees it. Kept small (10,000 of them live in this process): the
 * `id:` of every frame and the wall-clock ms its chunk was read; the payload is not parsed (the stream is
 * checked against the log by generation, and the server closes it after the terminal status).
 */
interface Subscriber {
  task: number;
  openedAt: number;
  /** Generation of the snapshot (the first frame). */
  snapshot: number | null;
  snapshotAt: number | null;
  ids: number[];
  at: number[];
  endedAt: number | null;
  problem: string | null;
}

interface OpenSubscriber {
  record: Subscriber;
  first: Promise<void>;
  done: Promise<void>;
  abort(): void;
}

function subscribe(endpoint: RpcEndpoint, task: number, taskId: string): OpenSubscriber {
  const record: Subscriber = {
    task,
    openedAt: wallMs(),
    snapshot: null,
    snapshotAt: null,
    ids: [],
    at: [],
    endedAt: null,
    problem: null,
  };
  let markFirst: () => void = () => undefined;
  const first = new Promise<void>((resolve) => (markFirst = resolve));
  let abort: () => void = () => undefined;
  const done = new Promise<void>((resolve) => {
    const finish = (problem: string | null): void => {
      if (record.endedAt !== null) {
        return;
      }
      record.endedAt = wallMs();
      record.problem ??= problem;
      markFirst();
      resolve();
    };
    const onFrame = (frame: string, at: number): void => {
      if (frame.startsWith(':')) {
        return; // keep-alive comment
      }
      if (frame.startsWith('event: error')) {
        record.problem ??= `error event: ${frame.slice(0, 160)}`;
        return;
      }
      const id = frame.startsWith('id: ') ? Number(frame.slice(4, frame.indexOf('\n'))) : NaN;
      if (!Number.isInteger(id)) {
        record.problem ??= `frame without id: ${frame.slice(0, 120)}`;
        return;
      }
      if (record.snapshot === null) {
        record.snapshot = id;
        record.snapshotAt = at;
        markFirst();
        return;
      }
      record.ids.push(id);
      record.at.push(at);
    };
    const body = rpcBody('SubscribeToTask', { id: taskId });
    const req = httpRequest(rpcRequest(endpoint, body, SSE_API_KEY), (res) =>
      readSseBlocks(res, onFrame, finish),
    );
    abort = () => {
      req.destroy();
      finish('aborted');
    };
    req.on('error', (error) => finish(`request: ${error.message}`));
    req.end(body);
  });
  return { record, first, done, abort };
}

interface SsePids {
  ingress: number;
  taskService: number;
}

interface SseSample {
  at: number;
  commits: number;
  tuplesReturned: number;
  ingressRssMiB: number | null;
  ticks: {
    ingress: number;
    pgIngress: number;
    taskService: number;
    client: number;
    machine: number | null;
  };
}

async function sseSample(pool: Pool, pids: SsePids): Promise<SseSample> {
  const stats = await pool.query<{ xact_commit: string; tup_returned: string }>(
    'SELECT xact_commit, tup_returned FROM pg_stat_database WHERE datname = current_database()',
  );
  const backends = await pool.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity
      WHERE datname = current_database() AND (application_name = $1 OR application_name LIKE 'a2a-ingress%')`,
    [SSE_INGRESS_APP],
  );
  const sum = (ticks: Map<number, number>): number =>
    [...ticks.values()].reduce((a, b) => a + b, 0);
  return {
    at: wallMs(),
    commits: Number(stats.rows[0]?.xact_commit ?? NaN),
    tuplesReturned: Number(stats.rows[0]?.tup_returned ?? NaN),
    ingressRssMiB: rssMiB(pids.ingress),
    ticks: {
      ingress: processTicks(pids.ingress) ?? NaN,
      pgIngress: sum(ticksByPid(backends.rows.map((r) => r.pid))),
      taskService: processTicks(pids.taskService) ?? NaN,
      client: processTicks(process.pid) ?? NaN,
      machine: machineBusyTicks(),
    },
  };
}

/**
 * What happened between two samples. Pg backends are sampled by pid at each end: a backend that came or
 * went in between is counted from zero or not at all (the ingress pool keeps its connections here).
 */
interface SseWindow {
  seconds: number;
  commitsPerSecond: number;
  tuplesReturnedPerSecond: number;
  cpuPercent: Record<keyof SseSample['ticks'], number>;
}

function sseWindow(from: SseSample, to: SseSample): SseWindow {
  const seconds = (to.at - from.at) / 1_000;
  const percent = (key: keyof SseSample['ticks']): number => {
    const a = from.ticks[key];
    const b = to.ticks[key];
    return a === null || b === null ? NaN : ((b - a) / CLOCK_TICKS / seconds) * 100;
  };
  return {
    seconds,
    commitsPerSecond: (to.commits - from.commits) / seconds,
    tuplesReturnedPerSecond: (to.tuplesReturned - from.tuplesReturned) / seconds,
    cpuPercent: {
      ingress: percent('ingress'),
      pgIngress: percent('pgIngress'),
      taskService: percent('taskService'),
      client: percent('client'),
      machine: percent('machine'),
    },
  };
}

/** Samples every `everyMs` for `seconds`; the window from the first to the last sample and their mean RSS. */
async function measureWindow(
  pool: Pool,
  pids: SsePids,
  seconds: number,
  everyMs = 1_000,
): Promise<{ window: SseWindow; rssMiB: number; rssMaxMiB: number }> {
  const samples: SseSample[] = [await sseSample(pool, pids)];
  const end = performance.now() + seconds * 1_000;
  while (performance.now() < end) {
    await sleep(Math.min(everyMs, Math.max(0, end - performance.now())));
    samples.push(await sseSample(pool, pids));
  }
  const rss = samples.map((s) => s.ingressRssMiB ?? NaN);
  return {
    window: sseWindow(samples[0]!, samples[samples.length - 1]!),
    rssMiB: rss.reduce((a, b) => a + b, 0) / rss.length,
    rssMaxMiB: Math.max(...rss),
  };
}

/** Event types the ingress turns into a client-visible StreamResponse (libs/task-domain toStreamResponse). */
const VISIBLE_EVENTS = new Set([
  'TaskSubmitted',
  'TaskStatusUpdated',
  'AgentMessageAppended',
  'ArtifactChunkAppended',
]);

/** How many of the tasks ended in each state (read.task_view). */
async function finalStates(pool: Pool, taskIds: string[]): Promise<Map<string, number>> {
  const result = await pool.query<{ state: string; n: string }>(
    `SELECT state, count(*) AS n FROM read.task_view
      WHERE tenant_id = $1 AND task_id = ANY($2::text[]) GROUP BY state ORDER BY state`,
    [SSE_TENANT, taskIds],
  );
  return new Map(result.rows.map((r) => [r.state, Number(r.n)]));
}

/** Whether a subscriber got exactly the client-visible generations after its snapshot, ending terminal. */
function checkSubscriber(record: Subscriber, log: LogEntry[]): string | null {
  if (record.problem !== null) {
    return record.problem;
  }
  if (record.snapshot === null) {
    return 'no snapshot';
  }
  const expected = log
    .filter((e) => e.version > (record.snapshot ?? 0) && VISIBLE_EVENTS.has(e.type))
    .map((e) => e.version);
  const missing = expected.filter((v) => !record.ids.includes(v));
  if (missing.length > 0 || record.ids.length !== expected.length) {
    return `ids ${record.ids.join(',')} but the log has ${expected.join(',')}`;
  }
  if (record.ids.some((id, i) => i > 0 && id <= (record.ids[i - 1] ?? 0))) {
    return `ids out of order: ${record.ids.join(',')}`;
  }
  const last = log.filter((e) => e.type === 'TaskStatusUpdated').at(-1);
  if (last === undefined || record.ids.at(-1) !== last.version) {
    return `the stream did not end with the task's last status (${String(last?.version)})`;
  }
  return null;
}

/** One status update the bench published as the worker: when its commit was acknowledged, and its level. */
interface Published {
  level: number;
  ackedAt: number;
}

/**
 * The bench as the agent's worker (the raw WorkerService client of @lib/testing): it takes every task's lease
 * and publishes status updates on a schedule of its own, through the task-service's real write path
 * (decide → append → NOTIFY), so that the load on the streams is exactly the rate asked for and not bursts of
 * tasks starting together. Heart-beats every second.
 */
class ScheduledWorker {
  private readonly raw: RawWorker;
  /** Task id → lease epoch. */
  readonly leases = new Map<string, number>();
  /** `<task id>/<version>` → the update that wrote that generation. */
  readonly published = new Map<string, Published>();
  failures = 0;
  private heartbeat: NodeJS.Timeout | null = null;

  constructor(target: string, secret: string) {
    this.raw = new RawWorker(target, secret);
  }

  /** Connects and waits for the lease of every task in `taskIds`. */
  async start(taskIds: string[]): Promise<void> {
    await this.raw.connect(taskIds.length + 10);
    const wanted = new Set(taskIds);
    while ([...wanted].some((id) => !this.leases.has(id))) {
      const assignment = await this.raw.nextAssignment(60_000);
      this.leases.set(assignment.taskId, Number(assignment.leaseEpoch));
    }
    this.heartbeat = setInterval(() => {
      this.raw.heartbeat([...this.leases].map(([taskId, leaseEpoch]) => ({ taskId, leaseEpoch })));
    }, 1_000);
  }

  /** Publishes one status; records when its commit was acknowledged. */
  async publish(
    taskId: string,
    state: 'TASK_STATE_WORKING' | 'TASK_STATE_COMPLETED',
    level: number,
    text: string,
  ): Promise<void> {
    try {
      const version = await this.raw.publishStatus(taskId, this.leases.get(taskId) ?? 0, {
        state,
        timestamp: new Date().toISOString(),
        message: { messageId: randomUUID(), role: 'ROLE_AGENT', parts: [{ text }] },
      });
      this.published.set(`${taskId}/${version}`, { level, ackedAt: wallMs() });
    } catch {
      this.failures++;
    }
  }

  /**
   * `rate` updates per second for `seconds`, open loop (a late update does not delay the next), the tasks
   * taken in turn; `level` tags them.
   */
  async run(taskIds: string[], rate: number, seconds: number, level: number): Promise<void> {
    const total = Math.round(rate * seconds);
    const started = performance.now();
    const inFlight = new Set<Promise<void>>();
    for (let k = 0; k < total; k++) {
      const wait = started + (k * 1_000) / rate - performance.now();
      if (wait > 0) {
        await sleep(wait);
      }
      const taskId = taskIds[k % taskIds.length] ?? '';
      const publishing = this.publish(
        taskId,
        'TASK_STATE_WORKING',
        level,
        `update ${k} at ${rate}/s`,
      );
      inFlight.add(publishing);
      void publishing.finally(() => inFlight.delete(publishing));
    }
    await Promise.all(inFlight);
  }

  /** Completes every task, `rate` per second. */
  async complete(taskIds: string[], rate: number, level: number): Promise<void> {
    const started = performance.now();
    await Promise.all(
      taskIds.map(async (taskId, k) => {
        await sleep(Math.max(0, started + (k * 1_000) / rate - performance.now()));
        await this.publish(taskId, 'TASK_STATE_COMPLETED', level, 'done');
      }),
    );
  }

  stop(): void {
    if (this.heartbeat) {
      clearInterval(this.heartbeat);
    }
    this.raw.disconnect();
  }
}

interface LevelFigures {
  label: string;
  rate: number;
  window: SseWindow;
  latency: number[];
  sinceAck: number[];
  sinceNotice: number[];
  loopDelayP99Ms: number;
}

async function runSubscribers(argv: string[]): Promise<number> {
  const options = parseSubscriberOptions(argv);
  const rerun = await rerunWithFileLimit(argv, options.subscribers);
  if (rerun !== null) {
    return rerun;
  }
  process.once('SIGINT', onTerminate);
  process.once('SIGTERM', onTerminate);
  const perTask = options.subscribers / options.tasks;
  console.log(
    `# Live fan-out: ${options.subscribers} SSE subscribers on one ingress replica (shared per-task reads, ADR 0008)`,
  );
  console.log(
    `${options.tasks} tasks, ~${perTask.toFixed(0)} SubscribeToTask streams per task over JSON-RPC SSE (at most ` +
      `${options.opening} opening at once); idle windows of ${options.idleSeconds} s; then status updates at ` +
      `${options.rates.join(', ')}/s over all tasks for ${options.levelSeconds} s each (× ${perTask.toFixed(0)} ` +
      `deliveries); open files: ${JSON.stringify(openFileLimits())}`,
  );
  calibrateWallClock();
  const db = await createTestDatabase('bench_fanout_sse');
  const processes: PlatformProcess[] = [];
  const streams: OpenSubscriber[] = [];
  let listener: NoticeListener | null = null;
  let worker: ScheduledWorker | null = null;
  const agent = new HttpAgent({ keepAlive: false, maxSockets: Infinity });
  const preload = join(tmpdir(), `fanout-bench-gc-${process.pid}.js`);
  const stopAll = async (): Promise<void> => {
    rmSync(preload, { force: true });
    streams.forEach((s) => s.abort());
    worker?.stop();
    await listener?.stop();
    for (const proc of [...processes].reverse()) {
      await proc.stop();
    }
    await db.drop();
  };
  cleanups.add(stopAll);
  try {
    const pgVersion =
      (await db.pool.query<{ version: string }>('SELECT version()')).rows[0]?.version ?? '?';
    printMachine(pgVersion);
    console.log(
      `load average at start: ${loadavg()
        .map((n) => n.toFixed(2))
        .join(' ')}`,
    );
    await seedTenant(db.pool, {
      tenantId: SSE_TENANT,
      displayName: 'Demo tenant',
      apiKeys: [{ keyId: 'demo-default', principalId: 'demo-user', secret: SSE_API_KEY }],
      agents: [
        {
          agentId: SSE_AGENT,
          profile: AGENT_PROFILES[SSE_AGENT],
          onLeaseLost: 'redispatch',
          maxAttempts: 3,
          workerSecret: SSE_WORKER_SECRET,
        },
      ],
    });
    const appUrl = (name: string): string => {
      const url = new URL(db.url);
      url.searchParams.set('application_name', name);
      return url.toString();
    };
    const taskService = await startTaskService({
      POSTGRES_URL: appUrl(SSE_TASK_SERVICE_APP),
      REPLICA_ID: 'bench-fanout',
    });
    processes.push(taskService.process);
    writeFileSync(preload, GC_PRELOAD);
    const ingress = await startIngress(
      { POSTGRES_URL: appUrl(SSE_INGRESS_APP), NODE_OPTIONS: `--require ${preload}` },
      [taskService.commandTarget],
    );
    processes.push(ingress.process);
    const base = new URL(ingress.baseUrl);
    const endpoint: RpcEndpoint = {
      host: base.hostname,
      port: Number(base.port),
      path: `/agents/${SSE_TENANT}/${SSE_AGENT}/jsonrpc`,
      agent,
    };
    const pids: SsePids = {
      ingress: ingress.process.pid ?? 0,
      taskService: taskService.process.pid ?? 0,
    };

    // The bench's own LISTEN connection: when each task notice (≈ the commit) became visible to a listener.
    const notices = new Map<string, [number, number][]>();
    listener = new NoticeListener(db.url, { applicationName: 'a2a-bench:listen' });
    listener.subscribe((notice) => {
      if (notice.k === 'task' && notice.t === SSE_TENANT) {
        const list = notices.get(notice.id) ?? [];
        list.push([notice.v, wallMs()]);
        notices.set(notice.id, list);
      }
    });
    await listener.start();

    // Tasks that wait: no worker is connected yet, so they stay SUBMITTED (queued) and idle.
    const rssEmpty = rssMiB(pids.ingress);
    const taskIds: string[] = [];
    for (let i = 0; i < options.tasks; i++) {
      const answer = await postRpc<{ result?: { task?: { id?: string } } }>(
        endpoint,
        rpcBody('SendMessage', {
          message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: `task ${i}` }] },
          configuration: { returnImmediately: true },
        }),
        SSE_API_KEY,
        30_000,
      );
      const id = answer.result?.task?.id;
      if (id === undefined) {
        throw new Error(`SendMessage failed: ${JSON.stringify(answer).slice(0, 300)}`);
      }
      taskIds.push(id);
    }
    console.error(`${options.tasks} tasks submitted; baseline for ${options.idleSeconds} s`);
    await sleep(PG_STATS_LAG_MS);
    const baseline = await measureWindow(db.pool, pids, options.idleSeconds);
    const baselineGc = await memoryAfterGc(ingress.process);

    // Open every stream: one per task in turn, at most `opening` waiting for their snapshot.
    const openStarted = wallMs();
    let opening = 0;
    let wakeOpener: (() => void) | null = null;
    for (let n = 0; n < options.subscribers; n++) {
      while (opening >= options.opening) {
        await new Promise<void>((resolve) => (wakeOpener = resolve));
      }
      opening++;
      const task = n % options.tasks;
      const stream = subscribe(endpoint, task, taskIds[task] ?? '');
      streams.push(stream);
      void Promise.race([stream.first, sleep(SSE_OPEN_TIMEOUT_MS)]).then(() => {
        opening--;
        const wake = wakeOpener;
        wakeOpener = null;
        wake?.();
      });
      if ((n + 1) % 2_000 === 0) {
        console.error(`${n + 1} streams requested`);
      }
    }
    await Promise.race([Promise.all(streams.map((s) => s.first)), sleep(SSE_OPEN_TIMEOUT_MS)]);
    const openedAll = wallMs();
    const opened = streams.filter((s) => s.record.snapshot !== null && s.record.endedAt === null);
    const openMs = ascending(
      streams.flatMap((s) =>
        s.record.snapshotAt === null ? [] : [s.record.snapshotAt - s.record.openedAt],
      ),
    );
    console.error(
      `${opened.length} of ${options.subscribers} streams open in ${((openedAll - openStarted) / 1_000).toFixed(1)} s; idle for ${options.idleSeconds} s`,
    );
    await sleep(PG_STATS_LAG_MS);
    const idle = await measureWindow(db.pool, pids, options.idleSeconds);
    const idleGc = await memoryAfterGc(ingress.process);
    const connectionsIdle = (
      await db.pool.query<{ name: string; n: string }>(
        `SELECT application_name AS name, count(*) AS n FROM pg_stat_activity
          WHERE datname = current_database() GROUP BY 1 ORDER BY 1`,
      )
    ).rows
      .map((r) => `${r.name || 'bench'} ${r.n}`)
      .join(', ');

    // Live: the bench takes every lease (hidden events only), then publishes status updates level by level.
    worker = new ScheduledWorker(taskService.workerTarget, SSE_WORKER_SECRET);
    await worker.start(taskIds);
    await sleep(2_000);
    const levels: LevelFigures[] = [];
    const liveStarted = await sseSample(db.pool, pids);
    for (const [level, rate] of options.rates.entries()) {
      console.error(`level ${rate}/s for ${options.levelSeconds} s`);
      const loop = monitorEventLoopDelay({ resolution: 10 });
      loop.enable();
      const from = await sseSample(db.pool, pids);
      await worker.run(taskIds, rate, options.levelSeconds, level);
      // Let the last deliveries of the level arrive before the next one starts.
      await sleep(1_000);
      const to = await sseSample(db.pool, pids);
      loop.disable();
      levels.push({
        label: `${rate}/s`,
        rate,
        window: sseWindow(from, to),
        latency: [],
        sinceAck: [],
        sinceNotice: [],
        loopDelayP99Ms: loop.percentile(99) / 1e6,
      });
    }
    const completion = options.rates.length;
    const completionRate = options.completeRate;
    await worker.complete(taskIds, completionRate, completion);
    const liveTimeoutMs = 60_000;
    const ended = await Promise.race([
      Promise.all(streams.map((s) => s.done)).then(() => true),
      sleep(liveTimeoutMs).then(() => false),
    ]);
    const liveEnded = await sseSample(db.pool, pids);
    if (!ended) {
      console.error(`streams still open ${liveTimeoutMs} ms after the last update: aborting them`);
      streams.forEach((s) => s.abort());
    }
    // Commits reach pg_stat_database late (PG_STATS_LAG_MS): count them later, less the idle rate meanwhile.
    await sleep(PG_STATS_LAG_MS);
    const late = await sseSample(db.pool, pids);
    const liveSeconds = (liveEnded.at - liveStarted.at) / 1_000;
    const liveCommits =
      late.commits -
      liveStarted.commits -
      (idle.window.commitsPerSecond * (late.at - liveEnded.at)) / 1_000;
    const rssAfter = rssMiB(pids.ingress);

    // ---- results: every stream against the log
    const byTask = await readTaskLogs(db.pool, SSE_TENANT, taskIds);
    const logs = taskIds.map((id) => byTask.get(id) ?? []);
    const states = await finalStates(db.pool, taskIds);
    const problems = new Map<string, number>();
    let complete = 0;
    let deliveries = 0;
    const completionLatency: number[] = [];
    for (const { record } of streams) {
      const log = logs[record.task] ?? [];
      const problem = checkSubscriber(record, log);
      if (problem === null) {
        complete++;
      } else {
        const kind = problem.replace(/[\d,]+/g, 'N').slice(0, 100);
        problems.set(kind, (problems.get(kind) ?? 0) + 1);
      }
      const taskId = taskIds[record.task] ?? '';
      const recordedAt = new Map(log.map((e) => [e.version, e.atMs]));
      const taskNotices = notices.get(taskId) ?? [];
      record.ids.forEach((id, i) => {
        deliveries++;
        const at = record.at[i] ?? NaN;
        const published = worker?.published.get(`${taskId}/${id}`);
        const figures = published === undefined ? undefined : levels[published.level];
        const latency = at - (recordedAt.get(id) ?? NaN);
        if (published?.level === completion) {
          completionLatency.push(latency);
        }
        if (figures === undefined || published === undefined) {
          return;
        }
        figures.latency.push(latency);
        figures.sinceAck.push(at - published.ackedAt);
        // The first notice naming this generation or a later one.
        const notice = taskNotices.find(([v]) => v >= id);
        if (notice) {
          figures.sinceNotice.push(at - notice[1]);
        }
      });
    }
    const leasedAgain = logs.filter(
      (log) => log.filter((e) => e.type === 'TaskLeaseGranted').length > 1,
    ).length;
    const expiries = logs.reduce(
      (n, log) => n + log.filter((e) => e.type === 'TaskLeaseExpired').length,
      0,
    );
    const logEvents = logs.reduce(
      (n, log) => n + log.filter((e) => e.atMs >= liveStarted.at).length,
      0,
    );

    const idleRssDelta = (idle.rssMiB - baseline.rssMiB) * 1024;
    console.log('');
    console.log(`## Opening ${options.subscribers} SubscribeToTask streams`);
    console.log(
      table(
        [
          'streams open',
          'opening all s',
          'open→snapshot p50 ms',
          'p99 ms',
          'max ms',
          'Postgres connections, all open',
        ],
        [
          [
            `${opened.length}/${options.subscribers}`,
            fmt((openedAll - openStarted) / 1_000),
            fmt(percentile(openMs, 50)),
            fmt(percentile(openMs, 99)),
            fmt(openMs.at(-1)),
            connectionsIdle,
          ],
        ],
      ),
    );
    console.log('');
    console.log(
      `## Idle: ${options.tasks} waiting tasks, no subscriber vs ${opened.length} subscribers`,
    );
    const idleRow = (
      label: string,
      m: { window: SseWindow; rssMiB: number; rssMaxMiB: number },
      gc: MemoryAfterGc | null,
    ): string[] => [
      label,
      fmt(m.window.seconds),
      fmt(m.rssMiB),
      fmt(gc?.rssMiB),
      fmt(gc?.heapUsedMiB),
      fmt(m.window.commitsPerSecond),
      fmt(m.window.tuplesReturnedPerSecond, 0),
      fmt(m.window.cpuPercent.ingress),
      fmt(m.window.cpuPercent.pgIngress),
      fmt(m.window.cpuPercent.machine),
    ];
    console.log(
      table(
        [
          'phase',
          'window s',
          'ingress RSS MiB (mean)',
          'RSS after full GC',
          'JS heap used after GC',
          'PG commits/s (bench DB)',
          'PG tuples returned/s',
          'ingress CPU %',
          'ingress PG backends CPU %',
          'machine CPU %',
        ],
        [
          idleRow('no subscriber', baseline, baselineGc),
          idleRow(`${opened.length} subscribers, idle`, idle, idleGc),
        ],
      ),
    );
    const perSubscriber = (mib: number): string =>
      fmt((mib * 1024) / Math.max(1, opened.length), 2);
    console.log(
      `memory per idle subscriber: ${perSubscriber(idleRssDelta / 1024)} KiB of RSS as it was (difference of ` +
        `the window means, ${fmt(idleRssDelta / 1024)} MiB / ${opened.length}, heap garbage of the opening included)`,
    );
    if (baselineGc && idleGc) {
      console.log(
        `after a full GC in the ingress: ${perSubscriber(idleGc.rssMiB - baselineGc.rssMiB)} KiB of RSS per idle ` +
          `subscriber, of which JS heap used ${perSubscriber(idleGc.heapUsedMiB - baselineGc.heapUsedMiB)} KiB ` +
          `(heap total ${fmt(baselineGc.heapTotalMiB)} → ${fmt(idleGc.heapTotalMiB)} MiB, external ` +
          `${fmt(baselineGc.externalMiB)} → ${fmt(idleGc.externalMiB)} MiB)`,
      );
    }
    console.log(
      `ingress RSS: ${fmt(rssEmpty)} MiB at start, ${fmt(rssAfter)} after all streams closed; Postgres ` +
        `commits/s added by ${opened.length} idle subscribers: ` +
        `${fmt(idle.window.commitsPerSecond - baseline.window.commitsPerSecond)} (every autocommit query is ` +
        `one commit; the task-service's own polls are in both windows)`,
    );
    console.log('');
    console.log(
      `## Live: status updates through the task-service at each rate, ${perTask.toFixed(0)} subscribers per task; latency per delivered event (ms)`,
    );
    console.log(
      table(
        [
          'updates/s',
          'deliveries/s',
          'recorded_at→client p50',
          'p99',
          'max',
          'commit ack→client p50',
          'p99',
          'notice→client p50',
          'p99',
          'ingress CPU %',
          'ingress CPU µs/delivery',
          'ingress PG backends CPU %',
          'task-service CPU %',
          'bench CPU %',
          'machine CPU %',
          'bench loop delay p99',
        ],
        levels.map((l) => {
          const latency = ascending(l.latency.filter(Number.isFinite));
          const sinceAck = ascending(l.sinceAck.filter(Number.isFinite));
          const sinceNotice = ascending(l.sinceNotice.filter(Number.isFinite));
          return [
            l.label,
            fmt(latency.length / options.levelSeconds, 0),
            fmt(percentile(latency, 50), 2),
            fmt(percentile(latency, 99), 2),
            fmt(latency.at(-1), 2),
            fmt(percentile(sinceAck, 50), 2),
            fmt(percentile(sinceAck, 99), 2),
            fmt(percentile(sinceNotice, 50), 2),
            fmt(percentile(sinceNotice, 99), 2),
            fmt(l.window.cpuPercent.ingress),
            fmt(
              (l.window.cpuPercent.ingress * l.window.seconds * 10_000) /
                Math.max(1, latency.length),
              0,
            ),
            fmt(l.window.cpuPercent.pgIngress),
            fmt(l.window.cpuPercent.taskService),
            fmt(l.window.cpuPercent.client),
            fmt(l.window.cpuPercent.machine),
            fmt(l.loopDelayP99Ms, 1),
          ];
        }),
      ),
    );
    const sortedCompletion = ascending(completionLatency.filter(Number.isFinite));
    console.log(
      `completion (${options.tasks} COMPLETED at ${completionRate}/s): recorded_at→client p50 ` +
        `${fmt(percentile(sortedCompletion, 50), 2)} ms, p99 ${fmt(percentile(sortedCompletion, 99), 2)} ms`,
    );
    console.log(
      `streams complete & gap-free: ${complete}/${options.subscribers}; ${deliveries} deliveries of ` +
        `${logEvents} log events in ${fmt(liveSeconds)} s; Postgres commits during the live phase: ` +
        `${fmt(liveCommits, 0)} (${fmt(liveCommits / Math.max(1, logEvents), 2)} per log event, the ` +
        `task-service's writes included); publish failures: ${worker.failures}`,
    );
    console.log(
      `tasks: ${[...states].map(([s, n]) => `${n} ${s}`).join(', ')}; ${leasedAgain} leased more than once, ` +
        `${expiries} TaskLeaseExpired; load average at the end: ${loadavg()
          .map((n) => n.toFixed(2))
          .join(' ')}`,
    );
    for (const [kind, n] of problems) {
      console.log(`${n} streams: ${kind}`);
    }
    if (options.logs) {
      for (const proc of processes) {
        console.log(`\n--- ${proc.name} (tail)\n${proc.log.slice(-3_000)}`);
      }
    }
    return complete === options.subscribers ? 0 : 1;
  } finally {
    cleanups.delete(stopAll);
    await stopAll();
    agent.destroy();
  }
}

if (process.argv[2] === LISTENER_FLAG) {
  runListener(JSON.parse(process.argv[3] ?? '{}') as ListenerSpec).catch((error: unknown) => {
    process.send?.({ type: 'failed', message: String(error) } satisfies FromListener);
    process.exit(1);
  });
} else {
  (process.argv[2] === SUBSCRIBERS_SCENARIO ? runSubscribers(process.argv.slice(3)) : main()).then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
      process.exit(1);
    },
  );
}

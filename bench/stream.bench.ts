/**
 * SSE stream delivery: commit → client latency, and many concurrent subscribers on one ingress replica
 * (`npm run build && node dist/bench/stream.bench.js`).
 *
 * Creates a throw-away database, seeds the demo tenant and starts, each as its own process from `dist/`, one
 * task-service, one ingress replica and one `countdown` worker. Then:
 *
 * 1. Latency: `SendStreamingMessage` to `countdown` (`--latency-count` steps of `--latency-step-ms`), one task
 *    at a time (`--repeat` times), then `--concurrent` tasks at once. For every live SSE event: its receive
 *    time minus `events.messages.recorded_at` (clock_timestamp() at insert, slightly before the commit) of the
 *    generation named by its `id:`. A `LISTEN` connection of the bench splits that into "until the task
 *    notice arrived" and "notice → SSE event at the client".
 * 2. Fan-out, once per entry of `--fan-levels` (streams per task, default 1 and 10): `--tasks` long countdown
 *    tasks (`--fan-count` steps of `--fan-step-ms`), a few seconds with no subscriber, then `tasks × level`
 *    `SubscribeToTask` streams opened one per task in turn (at most 100 waiting for a snapshot); the ingress's
 *    RSS (/proc VmRSS) before, with all streams open, and after they closed; CPU per process group; events
 *    delivered; every stream checked against the log (ids strictly increasing, exactly the log's
 *    client-visible generations after its snapshot, ending with the terminal status).
 *
 * Options: `--latency-count N` (100, the agent's maximum), `--latency-step-ms N` (25), `--repeat N` (3),
 * `--concurrent N` (10), `--tasks N` (100), `--fan-levels 1,10`, `--fan-count N` (40), `--fan-step-ms N` (1000),
 * `--logs` (print the tail of each platform process's output at the end).
 * Only loopback traffic; every wait is bounded. The database is dropped at the end.
 */
import { NoticeListener } from '@lib/event-store';
import { seedTenant } from '@lib/tenancy';
import {
  createTestDatabase,
  sleep,
  startAgentWorker,
  startIngress,
  startTaskService,
  type PlatformProcess,
  type TestDatabase,
} from '@lib/testing';
import { AGENT_PROFILES, type ExampleAgentId } from '@lib/worker-sdk';
import { randomUUID } from 'node:crypto';
import { Agent, request } from 'node:http';
import { cpus, loadavg } from 'node:os';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import type { Pool } from 'pg';
import { ascending, fmt, percentile, printMachine, table } from './support/figures';
import { postRpc, rpcBody, rpcRequest, type RpcEndpoint } from './support/json-rpc-http';
import { CLOCK_TICKS, machineBusyTicks, rssMiB, ticksByPid } from './support/proc-stats';
import { readSseBlocks } from './support/sse-blocks';
import { readTaskLogs, type LogEntry } from './support/task-log';
import { calibrateWallClock, wallMs } from './support/wall-clock';

interface Options {
  latencyCount: number;
  latencyStepMs: number;
  repeat: number;
  concurrent: number;
  tasks: number;
  fanLevels: number[];
  fanCount: number;
  fanStepMs: number;
  logs: boolean;
}

const TENANT = 'demo';
const API_KEY = 'demo-key';
const workerSecret = (agent: string): string => `bench-stream-worker-secret:${agent}`;
/** The countdown agent clamps N to 1..100 (apps/agents/src/countdown.agent.ts). */
const MAX_COUNT = 100;
/** Seconds with tasks running and no subscriber, before the streams of a fan-out level are opened. */
const BASELINE_MS = 5_000;
/** SubscribeToTask requests waiting for their snapshot at any one time while the streams are opened. */
const MAX_OPENING = 100;
/** How long one opening stream may hold its place among MAX_OPENING without a snapshot. */
const OPEN_TIMEOUT_MS = 30_000;
/** Event types that the ingress turns into a client-visible StreamResponse (libs/task-domain toStreamResponse). */
const CLIENT_VISIBLE = [
  'TaskSubmitted',
  'TaskStatusUpdated',
  'AgentMessageAppended',
  'ArtifactChunkAppended',
];
const TERMINAL = new Set([
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_REJECTED',
]);

function parseOptions(argv: string[]): Options {
  const options: Options = {
    latencyCount: 100,
    latencyStepMs: 25,
    repeat: 3,
    concurrent: 10,
    tasks: 100,
    fanLevels: [1, 10],
    fanCount: 40,
    fanStepMs: 1_000,
    logs: false,
  };
  const known =
    '--latency-count N, --latency-step-ms N, --repeat N, --concurrent N, --tasks N, --fan-levels 1,10, --fan-count N, --fan-step-ms N, --logs';
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i] ?? '';
    const value = argv[i + 1];
    const positive = (max = Number.MAX_SAFE_INTEGER): number => {
      const n = Number(value);
      if (!Number.isInteger(n) || n <= 0 || n > max) {
        throw new Error(`${flag} needs an integer in 1..${max}, got ${String(value)}`);
      }
      i++;
      return n;
    };
    switch (flag) {
      case '--latency-count':
        options.latencyCount = positive(MAX_COUNT);
        break;
      case '--latency-step-ms':
        options.latencyStepMs = positive(10_000);
        break;
      case '--repeat':
        options.repeat = positive(20);
        break;
      case '--concurrent':
        options.concurrent = positive(200);
        break;
      case '--tasks':
        options.tasks = positive(500);
        break;
      case '--fan-levels':
        options.fanLevels = String(value)
          .split(',')
          .map((level) => Number(level));
        if (
          options.fanLevels.some((level) => !Number.isInteger(level) || level < 1 || level > 50)
        ) {
          throw new Error(`--fan-levels needs integers in 1..50, got ${String(value)}`);
        }
        i++;
        break;
      case '--fan-count':
        options.fanCount = positive(MAX_COUNT);
        break;
      case '--fan-step-ms':
        options.fanStepMs = positive(10_000);
        break;
      case '--logs':
        options.logs = true;
        break;
      default:
        throw new Error(`unknown argument ${flag} (known: ${known})`);
    }
  }
  return options;
}

// ---------------------------------------------------------------------------------------------------------
// HTTP and SSE client (node:http with its own agent, so that the client allows every stream at once).

type EventKind = 'task' | 'status' | 'artifact' | 'message' | 'error';

interface ReceivedEvent {
  id: number;
  /** Wall-clock ms when the chunk carrying the event was read from the socket. */
  at: number;
  kind: EventKind;
  state: string | null;
}

interface StreamRecord {
  taskId: string | null;
  openedAt: number;
  firstAt: number | null;
  endedAt: number | null;
  httpStatus: number | null;
  events: ReceivedEvent[];
  problem: string | null;
}

interface OpenStream {
  record: StreamRecord;
  /** Resolves on the first event (or when the stream ends without one). */
  first: Promise<void>;
  done: Promise<StreamRecord>;
  abort(): void;
}

interface RpcEnvelope {
  result?: {
    task?: { id: string; status?: { state?: string } };
    statusUpdate?: { taskId: string; status?: { state?: string } };
    artifactUpdate?: { taskId: string };
    message?: { taskId?: string };
  };
  error?: { code?: number; message?: string };
}

function countdownMessage(count: number, stepMs: number): unknown {
  return {
    messageId: randomUUID(),
    role: 'ROLE_USER',
    parts: [{ text: String(count) }],
    metadata: { stepMs },
  };
}

/** Opens one SSE stream (SendStreamingMessage or SubscribeToTask) and records every event with its arrival time. */
function openStream(endpoint: RpcEndpoint, body: string, timeoutMs: number): OpenStream {
  const record: StreamRecord = {
    taskId: null,
    openedAt: wallMs(),
    firstAt: null,
    endedAt: null,
    httpStatus: null,
    events: [],
    problem: null,
  };
  let markFirst: () => void = () => undefined;
  const first = new Promise<void>((resolve) => (markFirst = resolve));
  let abort: () => void = () => undefined;
  const done = new Promise<StreamRecord>((resolve) => {
    let finished = false;
    const finish = (problem: string | null): void => {
      if (finished) {
        return;
      }
      finished = true;
      clearTimeout(timer);
      record.endedAt = wallMs();
      record.problem ??= problem;
      markFirst();
      resolve(record);
    };
    const onBlock = (block: string, at: number): void => {
      let id: number | null = null;
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('id:')) {
          id = Number(line.slice(3).trim());
        } else if (line.startsWith('data:')) {
          data.push(line.slice(5).replace(/^ /, ''));
        }
      }
      if (data.length === 0) {
        return; // a keep-alive comment
      }
      let envelope: RpcEnvelope;
      try {
        envelope = JSON.parse(data.join('\n')) as RpcEnvelope;
      } catch {
        record.problem ??= `unparsable event: ${data.join('\n').slice(0, 120)}`;
        return;
      }
      const result = envelope.result;
      let kind: EventKind = 'error';
      let state: string | null = null;
      if (result?.task) {
        kind = 'task';
        state = result.task.status?.state ?? null;
        record.taskId ??= result.task.id;
      } else if (result?.statusUpdate) {
        kind = 'status';
        state = result.statusUpdate.status?.state ?? null;
        record.taskId ??= result.statusUpdate.taskId;
      } else if (result?.artifactUpdate) {
        kind = 'artifact';
        record.taskId ??= result.artifactUpdate.taskId;
      } else if (result?.message) {
        kind = 'message';
      } else {
        record.problem ??= `error event: ${JSON.stringify(envelope.error ?? envelope).slice(0, 160)}`;
      }
      record.events.push({ id: id ?? Number.NaN, at, kind, state });
      if (record.firstAt === null) {
        record.firstAt = at;
        markFirst();
      }
    };
    const req = request(rpcRequest(endpoint, body, API_KEY), (res) => {
      record.httpStatus = res.statusCode ?? 0;
      readSseBlocks(res, onBlock, finish);
    });
    const timer = setTimeout(() => {
      req.destroy();
      finish('timed out');
    }, timeoutMs);
    abort = () => {
      req.destroy();
      finish('aborted');
    };
    req.on('error', (error) => finish(`request: ${error.message}`));
    req.end(body);
  });
  return { record, first, done, abort };
}

// ---------------------------------------------------------------------------------------------------------
// Process and database measurements (Linux /proc, pg_stat_*).

const CPU_GROUPS = [
  ['client', 'bench client'],
  ['ingress', 'ingress'],
  ['taskService', 'task-service'],
  ['worker', 'countdown worker'],
  ['pgIngress', 'PG backends of the ingress'],
  ['pgOther', 'other PG backends of the DB'],
] as const;
type CpuGroup = (typeof CPU_GROUPS)[number][0] | 'machine';

interface Processes {
  ingress: number;
  taskService: number;
  worker: number;
}

interface Sample {
  at: number;
  ticks: Map<CpuGroup, Map<number, number>>;
  commits: number | null;
}

async function sample(pool: Pool, pids: Processes): Promise<Sample> {
  const backends = await pool.query<{ pid: number; application_name: string }>(
    `SELECT pid, application_name FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid()`,
  );
  const commits = await pool.query<{ xact_commit: string }>(
    'SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()',
  );
  const machine = machineBusyTicks();
  const value = commits.rows[0]?.xact_commit;
  return {
    at: wallMs(),
    commits: value === undefined ? null : Number(value),
    ticks: new Map<CpuGroup, Map<number, number>>([
      ['client', ticksByPid([process.pid])],
      ['ingress', ticksByPid([pids.ingress])],
      ['taskService', ticksByPid([pids.taskService])],
      ['worker', ticksByPid([pids.worker])],
      [
        'pgIngress',
        ticksByPid(
          backends.rows.filter((r) => r.application_name === INGRESS_APP).map((r) => r.pid),
        ),
      ],
      [
        'pgOther',
        ticksByPid(
          backends.rows.filter((r) => r.application_name !== INGRESS_APP).map((r) => r.pid),
        ),
      ],
      ['machine', machine === null ? new Map() : new Map([[0, machine]])],
    ]),
  };
}

interface Usage {
  seconds: number;
  /** CPU seconds per group (a process first seen in `after` counts from zero). */
  cpu: Map<CpuGroup, number>;
  /** Committed transactions per second in the bench database (each autocommit statement is one). */
  commitsPerSecond: number | null;
}

function usage(before: Sample, after: Sample): Usage {
  const cpu = new Map<CpuGroup, number>();
  for (const [group, pids] of after.ticks) {
    let ticks = 0;
    for (const [pid, end] of pids) {
      ticks += end - (before.ticks.get(group)?.get(pid) ?? 0);
    }
    cpu.set(group, ticks / CLOCK_TICKS);
  }
  const seconds = (after.at - before.at) / 1_000;
  return {
    seconds,
    cpu,
    commitsPerSecond:
      before.commits === null || after.commits === null
        ? null
        : (after.commits - before.commits) / seconds,
  };
}

/** Application names set on the platform processes' connection strings, to tell their backends apart. */
const INGRESS_APP = 'bench-ingress';
const TASK_SERVICE_APP = 'bench-task-service';

function withApplicationName(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set('application_name', name);
  return parsed.toString();
}

/** The log rows of some task streams: client-visible generations and their recorded_at (wall-clock ms). */
/** Connections to the bench database by application_name, and client connections on the whole server. */
async function connections(pool: Pool): Promise<string> {
  const rows = (
    await pool.query<{ name: string; n: string; all: string }>(
      `SELECT coalesce(nullif(application_name, ''), 'bench') AS name, count(*) AS n,
              (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend') AS all
         FROM pg_stat_activity WHERE datname = current_database() GROUP BY 1 ORDER BY 1`,
    )
  ).rows;
  return (
    `bench DB: ${rows.map((r) => `${r.name} ${r.n}`).join(', ')}; ` +
    `server-wide client connections: ${rows[0]?.all ?? '?'}`
  );
}

/** Re-dispatches in some tasks' logs: tasks leased more than once, and lease expiries. */
function leaseStats(log: Map<string, LogEntry[]>, taskIds: string[]): string {
  let again = 0;
  let expired = 0;
  for (const id of taskIds) {
    const rows = log.get(id) ?? [];
    again += rows.filter((r) => r.type === 'TaskLeaseGranted').length > 1 ? 1 : 0;
    expired += rows.filter((r) => r.type === 'TaskLeaseExpired').length;
  }
  return `${again} of ${taskIds.length} tasks leased more than once, ${expired} TaskLeaseExpired`;
}

/** Client-visible events appended to some tasks' streams per second within a window. */
function writtenPerSecond(
  log: Map<string, LogEntry[]>,
  taskIds: string[],
  from: number,
  to: number,
): number {
  let n = 0;
  for (const id of taskIds) {
    n += (log.get(id) ?? []).filter(
      (r) => CLIENT_VISIBLE.includes(r.type) && r.atMs >= from && r.atMs <= to,
    ).length;
  }
  return n / ((to - from) / 1_000);
}

/** When the bench's own LISTEN connection received each task notice: task id → [version, wall ms] in order. */
type NoticeTimes = Map<string, [number, number][]>;

/** The arrival of the first notice at or after `version` (a notice names the stream's version after its commit). */
function noticeAt(notices: NoticeTimes, taskId: string, version: number): number | null {
  for (const [v, at] of notices.get(taskId) ?? []) {
    if (v >= version) {
      return at;
    }
  }
  return null;
}

// ---------------------------------------------------------------------------------------------------------
// Statistics and output.

/** Latencies of the live (non-snapshot) events of some streams against the log and the notices. */
interface Latencies {
  events: number;
  /** receive − recorded_at */
  total: number[];
  /** notice arrival (bench LISTEN) − recorded_at */
  toNotice: number[];
  /** receive − notice arrival */
  afterNotice: number[];
  unmatched: number;
}

function latencies(
  records: StreamRecord[],
  log: Map<string, LogEntry[]>,
  notices: NoticeTimes,
  window: { from: number; to: number } = { from: -Infinity, to: Infinity },
): Latencies {
  const out: Latencies = { events: 0, total: [], toNotice: [], afterNotice: [], unmatched: 0 };
  for (const record of records) {
    const rows = new Map((log.get(record.taskId ?? '') ?? []).map((r) => [r.version, r]));
    for (const event of record.events) {
      if (
        event.kind === 'task' ||
        event.kind === 'error' ||
        event.at < window.from ||
        event.at > window.to
      ) {
        continue;
      }
      out.events++;
      const row = rows.get(event.id);
      if (!row) {
        out.unmatched++;
        continue;
      }
      out.total.push(event.at - row.atMs);
      const notice = noticeAt(notices, record.taskId ?? '', event.id);
      if (notice !== null) {
        out.toNotice.push(notice - row.atMs);
        out.afterNotice.push(event.at - notice);
      }
    }
  }
  return out;
}

/** Per-stream check against the log: what a gap-free stream after its snapshot must have carried. */
interface StreamCheck {
  ok: number;
  problems: Map<string, number>;
  missing: number;
  extra: number;
  eventsPerStream: number[];
}

function checkStreams(records: StreamRecord[], log: Map<string, LogEntry[]>): StreamCheck {
  const check: StreamCheck = {
    ok: 0,
    problems: new Map(),
    missing: 0,
    extra: 0,
    eventsPerStream: [],
  };
  const fail = (what: string): void => {
    check.problems.set(what, (check.problems.get(what) ?? 0) + 1);
  };
  for (const record of records) {
    const live = record.events.filter((e) => e.kind !== 'task');
    check.eventsPerStream.push(live.length);
    if (record.problem !== null) {
      fail(record.problem.replace(/[0-9a-f-]{36}/g, '<id>').slice(0, 100));
      continue;
    }
    const snapshot = record.events[0];
    if (!snapshot || snapshot.kind !== 'task') {
      fail('first event is not the task snapshot');
      continue;
    }
    const ids = record.events.map((e) => e.id);
    if (ids.some((id, i) => !Number.isInteger(id) || (i > 0 && id <= (ids[i - 1] ?? 0)))) {
      fail('ids not strictly increasing');
      continue;
    }
    const last = record.events.at(-1);
    if (!last || last.kind !== 'status' || !TERMINAL.has(last.state ?? '')) {
      fail('stream did not end with a terminal status');
      continue;
    }
    const expected = (log.get(record.taskId ?? '') ?? [])
      .filter((r) => r.version > snapshot.id && CLIENT_VISIBLE.includes(r.type))
      .map((r) => r.version);
    const received = new Set(live.map((e) => e.id));
    const missing = expected.filter((v) => !received.has(v)).length;
    const extra = live.length - (expected.length - missing);
    check.missing += missing;
    check.extra += extra;
    if (missing > 0 || extra > 0) {
      fail('events missing or not in the log');
      continue;
    }
    check.ok++;
  }
  return check;
}

// ---------------------------------------------------------------------------------------------------------
// Phases.

interface Platform {
  db: TestDatabase;
  endpoint: RpcEndpoint;
  pids: Processes;
  notices: NoticeTimes;
}

interface LatencyRun {
  label: string;
  tasks: number;
  records: StreamRecord[];
  elapsedMs: number;
}

/** `parallel` SendStreamingMessage streams at once, each read to its end. */
async function latencyRun(
  platform: Platform,
  label: string,
  parallel: number,
  count: number,
  stepMs: number,
): Promise<LatencyRun> {
  calibrateWallClock();
  const started = performance.now();
  const timeoutMs = count * stepMs * 5 + 60_000;
  const streams = Array.from({ length: parallel }, () =>
    openStream(
      platform.endpoint,
      rpcBody('SendStreamingMessage', { message: countdownMessage(count, stepMs) }),
      timeoutMs,
    ),
  );
  const records = await Promise.all(streams.map((s) => s.done));
  return { label, tasks: parallel, records, elapsedMs: performance.now() - started };
}

interface FanOutRun {
  perTask: number;
  taskIds: string[];
  records: StreamRecord[];
  baseline: Usage;
  open: Usage;
  openWindow: { from: number; to: number };
  /** From the first SubscribeToTask sent to the last snapshot received. */
  openAllMs: number;
  connectionsAllOpen: string;
  rss: {
    beforeTasks: number | null;
    beforeStreams: number | null;
    allOpen: number | null;
    peak: number | null;
    afterClose: number | null;
    afterSettle: number | null;
  };
  loadBefore: number;
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
}

async function fanOutRun(
  platform: Platform,
  options: Options,
  perTask: number,
): Promise<FanOutRun> {
  const { db, endpoint, pids } = platform;
  calibrateWallClock();
  const loadBefore = loadavg()[0] ?? 0;
  const rssBeforeTasks = rssMiB(pids.ingress);
  const taskDurationMs = options.fanCount * options.fanStepMs;

  // Tasks, started spread over one step so that their steps do not all fall on the same instant.
  const tasksStarted = wallMs();
  const taskIds = await Promise.all(
    Array.from({ length: options.tasks }, async (_, i) => {
      await sleep(Math.floor((i * options.fanStepMs) / options.tasks));
      const answer = await postRpc<RpcEnvelope>(
        endpoint,
        rpcBody('SendMessage', {
          message: countdownMessage(options.fanCount, options.fanStepMs),
          configuration: { returnImmediately: true },
        }),
        API_KEY,
        30_000,
      );
      const id = answer.result?.task?.id;
      if (!id) {
        throw new Error(`SendMessage failed: ${JSON.stringify(answer).slice(0, 300)}`);
      }
      return id;
    }),
  );

  // A few seconds with the tasks running and nobody subscribed.
  await sleep(1_000);
  const s0 = await sample(db.pool, pids);
  await sleep(BASELINE_MS);
  const s1 = await sample(db.pool, pids);
  const rssBeforeStreams = rssMiB(pids.ingress);

  let peak = rssBeforeStreams ?? 0;
  const rssTimer = setInterval(() => {
    peak = Math.max(peak, rssMiB(pids.ingress) ?? 0);
  }, 250);
  const loop = monitorEventLoopDelay({ resolution: 10 });
  const streamTimeoutMs = taskDurationMs * 4 + 60_000;
  const streams: OpenStream[] = [];
  try {
    // One stream per task in turn, at most MAX_OPENING waiting for their snapshot at a time.
    let opening = 0;
    let wakeOpener: (() => void) | null = null;
    for (let wave = 0; wave < perTask; wave++) {
      for (const id of taskIds) {
        while (opening >= MAX_OPENING) {
          await new Promise<void>((resolve) => (wakeOpener = resolve));
        }
        opening++;
        const stream = openStream(endpoint, rpcBody('SubscribeToTask', { id }), streamTimeoutMs);
        streams.push(stream);
        void Promise.race([stream.first, sleep(OPEN_TIMEOUT_MS)]).then(() => {
          opening--;
          const wake = wakeOpener;
          wakeOpener = null;
          wake?.();
        });
      }
    }
    await Promise.race([Promise.all(streams.map((s) => s.first)), sleep(OPEN_TIMEOUT_MS)]);
    const s2 = await sample(db.pool, pids);
    const rssAllOpen = rssMiB(pids.ingress);
    const connectionsAllOpen = await connections(db.pool);
    const openAllMs =
      Math.max(...streams.map((s) => s.record.firstAt ?? s2.at)) -
      Math.min(...streams.map((s) => s.record.openedAt));
    loop.enable();
    // Measure while every stream is open: until shortly before the first tasks can end.
    const remaining = tasksStarted + taskDurationMs - wallMs();
    await sleep(Math.max(2_000, Math.min(20_000, remaining - 3_000)));
    const s3 = await sample(db.pool, pids);
    loop.disable();

    const deadline = sleep(streamTimeoutMs + 5_000).then(() => 'deadline' as const);
    const outcome = await Promise.race([Promise.all(streams.map((s) => s.done)), deadline]);
    if (outcome === 'deadline') {
      streams.forEach((s) => s.abort());
    }
    const rssAfterClose = rssMiB(pids.ingress);
    await sleep(3_000);
    const rssAfterSettle = rssMiB(pids.ingress);
    return {
      perTask,
      taskIds,
      records: streams.map((s) => s.record),
      baseline: usage(s0, s1),
      open: usage(s2, s3),
      openWindow: { from: s2.at, to: s3.at },
      openAllMs,
      connectionsAllOpen,
      rss: {
        beforeTasks: rssBeforeTasks,
        beforeStreams: rssBeforeStreams,
        allOpen: rssAllOpen,
        peak,
        afterClose: rssAfterClose,
        afterSettle: rssAfterSettle,
      },
      loadBefore,
      loopDelayP99Ms: loop.percentile(99) / 1e6,
      loopDelayMaxMs: loop.max / 1e6,
    };
  } finally {
    clearInterval(rssTimer);
    streams.forEach((s) => {
      if (s.record.endedAt === null) {
        s.abort();
      }
    });
  }
}

async function waitForTasksToEnd(pool: Pool, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    const open = await pool.query<{ n: string }>(
      `SELECT count(*) AS n FROM read.task_view
        WHERE state NOT IN ('TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED')`,
    );
    if (Number(open.rows[0]?.n ?? 0) === 0) {
      return;
    }
    await sleep(500);
  }
}

// ---------------------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  const cpuList = cpus();
  console.log(
    '# SSE streams: commit → client latency and fan-out on one ingress replica (loopback)',
  );
  console.log(
    `latency: countdown "${options.latencyCount}" stepMs ${options.latencyStepMs}, ${options.repeat} x 1 task, then ${options.concurrent} at once; ` +
      `fan-out: ${options.tasks} tasks of countdown "${options.fanCount}" stepMs ${options.fanStepMs}, streams per task: ${options.fanLevels.join(', ')}`,
  );

  let db: TestDatabase | null = null;
  const processes: PlatformProcess[] = [];
  let listener: NoticeListener | null = null;
  const agent = new Agent({ keepAlive: false, maxSockets: 5_000 });
  try {
    db = await createTestDatabase('bench_stream');
    const pgVersion =
      (await db.pool.query<{ version: string }>('SELECT version()')).rows[0]?.version ?? '?';
    const maxConnections =
      (await db.pool.query<{ max_connections: string }>('SHOW max_connections')).rows[0]
        ?.max_connections ?? '?';
    printMachine(`${pgVersion} (max_connections ${maxConnections})`);
    console.log(
      `load average at start: ${loadavg()
        .map((n) => n.toFixed(2))
        .join(' ')}`,
    );

    const agents: ExampleAgentId[] = ['echo', 'interview', 'countdown'];
    await seedTenant(db.pool, {
      tenantId: TENANT,
      displayName: 'Demo tenant',
      apiKeys: [{ keyId: 'demo-default', principalId: 'demo-user', secret: API_KEY }],
      agents: agents.map((agentId) => ({
        agentId,
        profile: AGENT_PROFILES[agentId],
        onLeaseLost: 'redispatch',
        maxAttempts: 3,
        workerSecret: workerSecret(agentId),
      })),
    });
    const bootStarted = performance.now();
    const taskService = await startTaskService({
      POSTGRES_URL: withApplicationName(db.url, TASK_SERVICE_APP),
      REPLICA_ID: 'bench-stream',
    });
    processes.push(taskService.process);
    const ingress = await startIngress({ POSTGRES_URL: withApplicationName(db.url, INGRESS_APP) }, [
      taskService.commandTarget,
    ]);
    processes.push(ingress.process);
    const maxTasks = Math.max(options.tasks, options.concurrent);
    const worker = await startAgentWorker(
      'countdown',
      taskService.workerTarget,
      workerSecret('countdown'),
      { WORKER_CONCURRENCY: String(maxTasks + 10) },
    );
    processes.push(worker);
    const base = new URL(ingress.baseUrl);
    const platform: Platform = {
      db,
      endpoint: {
        host: base.hostname,
        port: Number(base.port),
        path: `/agents/${TENANT}/countdown/jsonrpc`,
        agent,
      },
      pids: {
        ingress: ingress.process.pid ?? 0,
        taskService: taskService.process.pid ?? 0,
        worker: worker.pid ?? 0,
      },
      notices: new Map(),
    };
    console.log(
      `platform ready in ${Math.round(performance.now() - bootStarted)} ms (task-service pid ${platform.pids.taskService}, ` +
        `ingress pid ${platform.pids.ingress}, countdown worker pid ${platform.pids.worker}, WORKER_CONCURRENCY ${maxTasks + 10})`,
    );

    console.log(`Postgres connections after boot: ${await connections(db.pool)}`);

    // The bench's own LISTEN connection: when each task notice (commit) became visible to a listener.
    listener = new NoticeListener(db.url, { applicationName: 'a2a-bench:listen' });
    await listener.start();
    listener.subscribe((notice) => {
      if (notice.k === 'task' && notice.t === TENANT) {
        const list = platform.notices.get(notice.id) ?? [];
        list.push([notice.v, wallMs()]);
        platform.notices.set(notice.id, list);
      }
    });

    // Warm-up: one short task through the whole path (JIT, connection pools, caches).
    await latencyRun(platform, 'warm-up', 2, 10, 10);

    // ---- 1. latency
    const latencyRuns: LatencyRun[] = [];
    for (let i = 0; i < options.repeat; i++) {
      latencyRuns.push(
        await latencyRun(platform, '1 task', 1, options.latencyCount, options.latencyStepMs),
      );
    }
    latencyRuns.push(
      await latencyRun(
        platform,
        `${options.concurrent} tasks at once`,
        options.concurrent,
        options.latencyCount,
        options.latencyStepMs,
      ),
    );
    console.log(`latency runs done (${latencyRuns.length})`);

    // ---- 2. fan-out
    const fanRuns: FanOutRun[] = [];
    for (const perTask of options.fanLevels) {
      const run = await fanOutRun(platform, options, perTask);
      fanRuns.push(run);
      console.log(
        `fan-out ${perTask} per task: done (${run.records.length} streams, ${run.records.filter((r) => r.problem !== null).length} with a problem)`,
      );
      await waitForTasksToEnd(db.pool, 30_000);
    }

    // ---- results (the log is read once per phase, at the end)
    let failed = false;
    console.log('');
    console.log('## 1. Commit → SSE client latency (SendStreamingMessage to countdown)');
    const singles = latencyRuns.filter((r) => r.tasks === 1);
    const groups: { label: string; runs: LatencyRun[] }[] = [
      { label: `1 task (x${singles.length}, one after another)`, runs: singles },
      ...latencyRuns.filter((r) => r.tasks > 1).map((r) => ({ label: r.label, runs: [r] })),
    ];
    const latencyLog = await readTaskLogs(
      db.pool,
      TENANT,
      latencyRuns.flatMap((r) => r.records.map((s) => s.taskId ?? '')).filter((id) => id !== ''),
    );
    const latencyRows: string[][] = [];
    const splitRows: string[][] = [];
    const latencyNotes: string[] = [];
    for (const group of groups) {
      const records = group.runs.flatMap((r) => r.records);
      const lat = latencies(records, latencyLog, platform.notices);
      const check = checkStreams(records, latencyLog);
      failed ||= check.ok !== records.length;
      const total = ascending(lat.total);
      const toNotice = ascending(lat.toNotice);
      const afterNotice = ascending(lat.afterNotice);
      latencyRows.push([
        group.label,
        String(records.length),
        `${check.ok}/${records.length}`,
        String(lat.events),
        fmt(percentile(total, 50), 2),
        fmt(percentile(total, 99), 2),
        fmt(total.at(-1), 2),
      ]);
      splitRows.push([
        group.label,
        fmt(percentile(toNotice, 50), 2),
        fmt(percentile(toNotice, 99), 2),
        fmt(percentile(afterNotice, 50), 2),
        fmt(percentile(afterNotice, 99), 2),
      ]);
      check.problems.forEach((n, what) => latencyNotes.push(`${group.label}: ${n} x ${what}`));
      latencyNotes.push(
        `${group.label}: ${leaseStats(
          latencyLog,
          records.flatMap((r) => (r.taskId === null ? [] : [r.taskId])),
        )}`,
      );
    }
    console.log(
      table(
        [
          'run',
          'streams',
          'streams complete & gap-free',
          'live events',
          'p50 ms',
          'p99 ms',
          'max ms',
        ],
        latencyRows,
      ),
    );
    latencyNotes.forEach((note) => console.log(note));
    console.log(
      'latency = time the SSE event was read by the client − events.messages.recorded_at of its generation\n' +
        '(clock_timestamp() at insert, before the rest of the transaction and its commit). Live events only (not the\n' +
        'snapshot). Split by the moment the task notice reached a separate LISTEN connection of the bench:',
    );
    console.log(
      table(['run', 'recorded_at→notice p50', 'p99', 'notice→client p50', 'p99'], splitRows),
    );

    console.log('');
    console.log('## 2. Fan-out: SubscribeToTask streams on one ingress replica');
    const fanLog = await readTaskLogs(
      db.pool,
      TENANT,
      fanRuns.flatMap((r) => r.taskIds),
    );
    const fanRows: string[][] = [];
    const fanNotes: string[] = [];
    const fanLatencyRows: string[][] = [];
    const rssRows: string[][] = [];
    const cpuRows: string[][] = [];
    for (const run of fanRuns) {
      const streams = run.records.length;
      const check = checkStreams(run.records, fanLog);
      failed ||= check.ok !== streams;
      const lat = latencies(run.records, fanLog, platform.notices);
      const total = ascending(lat.total);
      const windowed = ascending(
        latencies(run.records, fanLog, platform.notices, run.openWindow).total,
      );
      const afterNotice = ascending(lat.afterNotice);
      const opens = ascending(
        run.records.flatMap((r) => (r.firstAt === null ? [] : [r.firstAt - r.openedAt])),
      );
      const perStream = ascending(check.eventsPerStream);
      const inWindow = run.records.reduce(
        (n, r) =>
          n +
          r.events.filter(
            (e) => e.kind !== 'task' && e.at >= run.openWindow.from && e.at <= run.openWindow.to,
          ).length,
        0,
      );
      const endedInWindow = run.records.filter(
        (r) => r.endedAt !== null && r.endedAt <= run.openWindow.to,
      ).length;
      const firstOpen = Math.min(...run.records.map((r) => r.openedAt));
      const lastEnd = Math.max(...run.records.map((r) => r.endedAt ?? 0));
      const label = `${run.taskIds.length} x ${run.perTask} = ${streams}`;
      fanRows.push([
        label,
        `${check.ok}/${streams}`,
        String(check.missing),
        String(check.extra),
        `${fmt(perStream[0], 0)}/${fmt(percentile(perStream, 50), 0)}/${fmt(perStream.at(-1), 0)}`,
        String(lat.events),
        fmt(inWindow / ((run.openWindow.to - run.openWindow.from) / 1_000), 0),
        fmt(
          writtenPerSecond(fanLog, run.taskIds, run.openWindow.from, run.openWindow.to) *
            run.perTask,
          0,
        ),
        fmt(lat.events / ((lastEnd - firstOpen) / 1_000), 0),
        fmt(run.openAllMs / 1_000, 1),
        fmt(percentile(opens, 50), 1),
        fmt(percentile(opens, 99), 1),
      ]);
      fanNotes.push(`${label}: ${leaseStats(fanLog, run.taskIds)}`);
      fanNotes.push(`${label}: Postgres connections with all open: ${run.connectionsAllOpen}`);
      if (endedInWindow > 0) {
        fanNotes.push(`${label}: ${endedInWindow} streams ended inside the "all open" window`);
      }
      fanLatencyRows.push([
        label,
        fmt(percentile(total, 50), 2),
        fmt(percentile(total, 99), 2),
        fmt(total.at(-1), 2),
        fmt(percentile(afterNotice, 50), 2),
        fmt(percentile(afterNotice, 99), 2),
        fmt(percentile(windowed, 50), 2),
        fmt(percentile(windowed, 99), 2),
        fmt(run.loopDelayP99Ms, 1),
        fmt(run.loopDelayMaxMs, 1),
      ]);
      const per = (value: number | null): string =>
        value === null || run.rss.beforeStreams === null
          ? '-'
          : fmt(((value - run.rss.beforeStreams) * 1024) / streams, 1);
      rssRows.push([
        label,
        fmt(run.rss.beforeTasks),
        fmt(run.rss.beforeStreams),
        fmt(run.rss.allOpen),
        fmt(run.rss.peak),
        fmt(run.rss.afterClose),
        fmt(run.rss.afterSettle),
        per(run.rss.allOpen),
        per(run.rss.peak),
      ]);
      for (const [phase, use] of [
        ['no subscriber', run.baseline],
        [`${streams} open`, run.open],
      ] as const) {
        const machine = use.cpu.get('machine') ?? 0;
        const ours = CPU_GROUPS.reduce((sum, [group]) => sum + (use.cpu.get(group) ?? 0), 0);
        cpuRows.push([
          `${run.taskIds.length} tasks, ${phase}`,
          fmt(use.seconds, 1),
          ...CPU_GROUPS.map(([group]) => fmt((100 * (use.cpu.get(group) ?? 0)) / use.seconds, 0)),
          fmt((100 * machine) / use.seconds, 0),
          fmt((100 * Math.max(0, machine - ours)) / use.seconds, 0),
          fmt(use.commitsPerSecond, 0),
        ]);
      }
      check.problems.forEach((n, what) => fanNotes.push(`${label}: ${n} x ${what}`));
    }
    console.log(
      table(
        [
          'tasks x streams/task',
          'streams complete & gap-free',
          'missed',
          'extra',
          'live events per stream min/p50/max',
          'live events',
          'events/s, all open',
          'log events/s x streams/task, all open',
          'events/s, first open→last close',
          'opening all s',
          'open→snapshot p50 ms',
          'p99 ms',
        ],
        fanRows,
      ),
    );
    fanNotes.forEach((note) => console.log(note));
    console.log(
      '"missed": generations of the log after the stream\'s snapshot that the ingress turns into a StreamResponse but\n' +
        'the stream did not carry. "all open": every stream open, before any task could end (window of the CPU table).\n' +
        '"log events/s x streams/task": client-visible events appended to the tasks\' streams in that window, times the\n' +
        'streams per task: what the streams would carry if delivery kept up with the writes.',
    );
    console.log('');
    console.log('### Delivery latency (all live events of all streams, ms)');
    console.log(
      table(
        [
          'tasks x streams/task',
          'recorded_at→client p50',
          'p99',
          'max',
          'notice→client p50',
          'p99',
          'all open: recorded_at→client p50',
          'p99',
          'client event-loop delay p99',
          'max',
        ],
        fanLatencyRows,
      ),
    );
    console.log('');
    console.log('### Ingress RSS (MiB, /proc/<pid>/status VmRSS)');
    console.log(
      table(
        [
          'tasks x streams/task',
          'before tasks',
          'tasks running, no stream',
          'all streams open',
          'peak (250 ms samples)',
          'just after all closed',
          '3 s later',
          'KiB per stream (open)',
          'KiB per stream (peak)',
        ],
        rssRows,
      ),
    );
    console.log('');
    console.log('### CPU (100 % = one core) and Postgres commits/s');
    console.log(
      table(
        [
          'phase',
          'window s',
          ...CPU_GROUPS.map(([, label]) => `${label} %`),
          'whole machine %',
          'other %',
          'PG commits/s',
        ],
        cpuRows,
      ),
    );
    console.log(
      `The machine has ${cpuList.length} CPUs (${100 * cpuList.length} % in all). "PG backends of the ingress" are the\n` +
        `backends with application_name ${INGRESS_APP} (its pool and LISTEN connection). PG commits/s: xact_commit of the\n` +
        'bench database (each autocommit read counts as one; counters are published about once a second, so ±1 s).\n' +
        '"other": busy time of none of the groups (Postgres background processes, kernel, other jobs on the machine).',
    );
    if (options.logs) {
      for (const proc of processes) {
        console.log('');
        console.log(`## Output of ${proc.name} (last 64 000 characters)`);
        console.log(proc.log);
      }
    }
    return failed ? 1 : 0;
  } finally {
    agent.destroy();
    await listener?.stop().catch(() => undefined);
    for (const proc of [...processes].reverse()) {
      await proc.stop().catch(() => undefined);
    }
    await db
      ?.drop()
      .catch((error: unknown) => console.error(`could not drop the database: ${String(error)}`));
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    process.exit(1);
  },
);

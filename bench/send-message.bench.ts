/**
 * Blocking SendMessage throughput and latency against the standalone platform (`npm run bench`).
 *
 * Creates a throw-away database, boots `dist/apps/standalone/src/main.js` (ingress + task-service in one
 * process, the example workers as child processes), warms up, then runs closed-loop clients that send a
 * blocking SendMessage to the `echo` agent, back to back, at each concurrency level for a fixed time, once
 * per A2A binding: JSON-RPC (`…/jsonrpc`), HTTP+JSON (`…/rest/message:send`) and gRPC
 * (`lf.a2a.v1.A2AService/SendMessage`, tenant `demo/echo`). Within a level the bindings run one after another,
 * against the same platform. Only loopback traffic. Options: `--seconds N` (per level and binding, default 15),
 * `--warmup N` (seconds per binding, default 3), `--levels 1,16,64`, `--bindings jsonrpc,rest,grpc`.
 */
import { credentials, status as GrpcStatus, Metadata } from '@grpc/grpc-js';
import { a2aPb } from '@lib/a2a-protocol';
import { createTestDatabase, sleep, startStandalone, type TestDatabase } from '@lib/testing';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { Pool } from 'pg';
import { percentile, printMachine, table } from './support/figures';
import { CLOCK_TICKS, machineBusyTicks, ticksByPid } from './support/proc-stats';

const BINDINGS = ['jsonrpc', 'rest', 'grpc'] as const;
type Binding = (typeof BINDINGS)[number];

interface Options {
  seconds: number;
  warmupSeconds: number;
  levels: number[];
  bindings: Binding[];
}

interface LevelResult {
  binding: Binding;
  concurrency: number;
  requests: number;
  errors: number;
  elapsedMs: number;
  latenciesMs: number[];
  errorSamples: Map<string, number>;
  /** Postgres transactions committed in the benchmark database during the level (pg_stat_database). */
  commits: number | null;
  /** Events appended to events.messages during the level. */
  events: number;
  stages: Stages | null;
  /** CPU seconds per process group over the level (Linux only; empty elsewhere). */
  cpu: Map<CpuGroup, number>;
  loadBefore: number;
}

const DEFAULT_SECONDS = 15;
const DEFAULT_WARMUP_SECONDS = 3;
const DEFAULT_LEVELS = [1, 16, 64];
/** Per request: a blocking SendMessage returns within BLOCKING_SEND_TIMEOUT_MS (60 s) at the latest. */
const REQUEST_TIMEOUT_MS = 70_000;
const API_KEY = 'demo-key';
/** The hosted agent, as the gRPC request's `tenant` names it (`<tenant>/<agent>`). */
const AGENT_TENANT = 'demo/echo';

function isBinding(name: string): name is Binding {
  return (BINDINGS as readonly string[]).includes(name);
}

function parseOptions(argv: string[]): Options {
  const options: Options = {
    seconds: DEFAULT_SECONDS,
    warmupSeconds: DEFAULT_WARMUP_SECONDS,
    levels: DEFAULT_LEVELS,
    bindings: [...BINDINGS],
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i] ?? '';
    const value = argv[i + 1];
    const positive = (): number => {
      const n = Number(value);
      if (!Number.isFinite(n) || n <= 0) {
        throw new Error(`${flag} needs a positive number, got ${String(value)}`);
      }
      i++;
      return n;
    };
    switch (flag) {
      case '--seconds':
        options.seconds = positive();
        break;
      case '--warmup':
        options.warmupSeconds = positive();
        break;
      case '--levels':
        options.levels = String(value)
          .split(',')
          .map((level) => Number.parseInt(level, 10));
        if (options.levels.some((level) => !Number.isInteger(level) || level < 1)) {
          throw new Error(
            `--levels needs a comma-separated list of positive integers, got ${String(value)}`,
          );
        }
        i++;
        break;
      case '--bindings': {
        const names = String(value).split(',');
        if (!names.every(isBinding)) {
          throw new Error(
            `--bindings needs a comma-separated list of ${BINDINGS.join(', ')}, got ${String(value)}`,
          );
        }
        options.bindings = [...new Set(names)];
        i++;
        break;
      }
      default:
        throw new Error(
          `unknown argument ${flag} (known: --seconds N, --warmup N, --levels 1,16,64, --bindings ${BINDINGS.join(',')})`,
        );
    }
  }
  return options;
}

/** Pids of the direct children of `parent` whose command line contains `needle`. */
function childPids(parent: number, needle: string): number[] {
  try {
    return readdirSync('/proc')
      .filter((name) => /^\d+$/.test(name))
      .map(Number)
      .filter((pid) => {
        try {
          const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
          const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
          return ppid === parent && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(needle);
        } catch {
          return false;
        }
      });
  } catch {
    return [];
  }
}

type CpuGroup = 'client' | 'standalone' | 'worker' | 'postgres' | 'machine';
type CpuSample = Map<CpuGroup, Map<number, number>>;

/** The process groups whose CPU a level is charged with, sampled at one moment. */
async function sampleCpu(
  pool: Pool,
  standalonePid: number,
  workerPids: number[],
): Promise<CpuSample> {
  const backends = await pool.query<{ pid: number }>(
    'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
  );
  const machine = machineBusyTicks();
  return new Map<CpuGroup, Map<number, number>>([
    ['client', ticksByPid([process.pid])],
    ['standalone', ticksByPid([standalonePid])],
    ['worker', ticksByPid(workerPids)],
    ['postgres', ticksByPid(backends.rows.map((r) => r.pid))],
    ['machine', machine === null ? new Map() : new Map([[0, machine]])],
  ]);
}

/** CPU seconds each group used between two samples (a process seen only at the end counts from zero). */
function cpuSeconds(before: CpuSample, after: CpuSample): Map<CpuGroup, number> {
  const used = new Map<CpuGroup, number>();
  for (const [group, pids] of after) {
    let ticks = 0;
    for (const [pid, end] of pids) {
      ticks += end - (before.get(group)?.get(pid) ?? 0);
    }
    used.set(group, ticks / CLOCK_TICKS);
  }
  return used;
}

/** One blocking SendMessage; resolves to null when the task came back COMPLETED, else to an error label. */
type SendOnce = () => Promise<string | null>;

/** How one binding sends; `close` releases what it holds (the gRPC channel). */
interface Sender {
  binding: Binding;
  send: SendOnce;
  close: () => void;
}

const HTTP_HEADERS = { 'A2A-Version': '1.0', 'X-API-Key': API_KEY };

const userMessage = (): Record<string, unknown> => ({
  messageId: randomUUID(),
  role: 'ROLE_USER',
  parts: [{ text: 'hello' }],
});

function completedOrLabel(state: string | undefined): string | null {
  return state === 'TASK_STATE_COMPLETED' ? null : `task ended ${String(state)}`;
}

/** Runs one request; an exception (a network error, a timeout) becomes its error label. */
async function labelled(send: SendOnce): Promise<string | null> {
  try {
    return await send();
  } catch (error) {
    return `exception: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`;
  }
}

/** JSON-RPC 2.0: `POST {base}/agents/demo/echo/jsonrpc`, method SendMessage. */
async function sendJsonRpc(url: string): Promise<string | null> {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'SendMessage',
    params: { message: userMessage() },
  });
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...HTTP_HEADERS },
    body,
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await response.text();
  if (!response.ok) {
    return `HTTP ${response.status}`;
  }
  const json = JSON.parse(text) as {
    result?: { task?: { status?: { state?: string } } };
    error?: { code?: number; message?: string };
  };
  if (json.error) {
    return `JSON-RPC error ${String(json.error.code)}: ${String(json.error.message).slice(0, 80)}`;
  }
  return completedOrLabel(json.result?.task?.status?.state);
}

/** HTTP+JSON: `POST {base}/agents/demo/echo/rest/message:send`, the SendMessageRequest as ProtoJSON. */
async function sendRest(url: string): Promise<string | null> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/a2a+json', ...HTTP_HEADERS },
    body: JSON.stringify({ message: userMessage() }),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await response.text();
  if (!response.ok) {
    return `HTTP ${response.status}: ${text.slice(0, 80)}`;
  }
  const json = JSON.parse(text) as { task?: { status?: { state?: string } } };
  return completedOrLabel(json.task?.status?.state);
}

/** gRPC: `lf.a2a.v1.A2AService/SendMessage` with `tenant: "demo/echo"`, over the client's one channel. */
function sendGrpc(client: a2aPb.A2AServiceClient): Promise<string | null> {
  const request = a2aPb.SendMessageRequest.fromPartial({
    tenant: AGENT_TENANT,
    message: {
      messageId: randomUUID(),
      role: a2aPb.Role.ROLE_USER,
      parts: [{ text: 'hello' }],
    },
  });
  const metadata = new Metadata();
  metadata.set('x-api-key', API_KEY);
  metadata.set('a2a-version', '1.0');
  return new Promise((resolve) => {
    client.sendMessage(
      request,
      metadata,
      { deadline: Date.now() + REQUEST_TIMEOUT_MS },
      (error, response) => {
        resolve(
          error
            ? `gRPC ${GrpcStatus[error.code] ?? error.code}: ${error.details.slice(0, 80)}`
            : completedOrLabel(response.task?.status?.state),
        );
      },
    );
  });
}

function openSender(binding: Binding, baseUrl: string, grpcTarget: string): Sender {
  switch (binding) {
    case 'jsonrpc': {
      const url = `${baseUrl}/agents/demo/echo/jsonrpc`;
      return { binding, send: () => labelled(() => sendJsonRpc(url)), close: () => undefined };
    }
    case 'rest': {
      const url = `${baseUrl}/agents/demo/echo/rest/message:send`;
      return { binding, send: () => labelled(() => sendRest(url)), close: () => undefined };
    }
    case 'grpc': {
      const client = new a2aPb.A2AServiceClient(grpcTarget, credentials.createInsecure());
      return { binding, send: () => labelled(() => sendGrpc(client)), close: () => client.close() };
    }
  }
}

async function databaseCommits(pool: Pool): Promise<number | null> {
  const result = await pool.query<{ xact_commit: string }>(
    'SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()',
  );
  const value = result.rows[0]?.xact_commit;
  return value === undefined ? null : Number(value);
}

async function eventCount(pool: Pool): Promise<number> {
  const result = await pool.query<{ n: string }>('SELECT count(*) AS n FROM events.messages');
  return Number(result.rows[0]?.n ?? 0);
}

async function lastPosition(pool: Pool): Promise<number> {
  const result = await pool.query<{ p: string | null }>(
    'SELECT max(global_position) AS p FROM events.messages',
  );
  return Number(result.rows[0]?.p ?? 0);
}

/** Median milliseconds between the events of the tasks a level created (from events.messages.recorded_at). */
interface Stages {
  submittedToLease: number;
  leaseToWorking: number;
  workingToArtifact: number;
  artifactToCompleted: number;
  submittedToCompleted: number;
}

async function stagesSince(pool: Pool, position: number): Promise<Stages | null> {
  const result = await pool.query<Record<keyof Stages, number | null>>(
    `WITH per_task AS (
       SELECT stream_id,
         min(recorded_at) FILTER (WHERE event_type = 'TaskSubmitted') AS submitted,
         min(recorded_at) FILTER (WHERE event_type = 'TaskLeaseGranted') AS leased,
         min(recorded_at) FILTER (WHERE event_type = 'TaskStatusUpdated'
                                    AND data->'status'->>'state' = 'TASK_STATE_WORKING') AS working,
         min(recorded_at) FILTER (WHERE event_type = 'ArtifactChunkAppended') AS artifact,
         min(recorded_at) FILTER (WHERE event_type = 'TaskStatusUpdated'
                                    AND data->'status'->>'state' = 'TASK_STATE_COMPLETED') AS completed
       FROM events.messages WHERE global_position > $1 GROUP BY stream_id)
     SELECT
       percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM leased - submitted) * 1000) AS "submittedToLease",
       percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM working - leased) * 1000) AS "leaseToWorking",
       percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM artifact - working) * 1000) AS "workingToArtifact",
       percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM completed - artifact) * 1000) AS "artifactToCompleted",
       percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM completed - submitted) * 1000) AS "submittedToCompleted"
     FROM per_task WHERE submitted IS NOT NULL AND completed IS NOT NULL`,
    [position],
  );
  const row = result.rows[0];
  if (!row || row.submittedToCompleted === null) {
    return null;
  }
  return {
    submittedToLease: Number(row.submittedToLease),
    leaseToWorking: Number(row.leaseToWorking),
    workingToArtifact: Number(row.workingToArtifact),
    artifactToCompleted: Number(row.artifactToCompleted),
    submittedToCompleted: Number(row.submittedToCompleted),
  };
}

/**
 * Backends publish their counters to pg_stat_database at most once a second while busy and within
 * 10 s once idle (Postgres 15: PGSTAT_IDLE_INTERVAL), so the platform's pooled connections are given
 * that long before the counter is read.
 */
const STATS_SETTLE_MS = 11_000;

async function settledCommits(pool: Pool): Promise<number | null> {
  await sleep(STATS_SETTLE_MS);
  return databaseCommits(pool);
}

/** Closed loop: `concurrency` clients each send one request after another until `durationMs` has passed. */
async function runLevel(
  send: SendOnce,
  concurrency: number,
  durationMs: number,
): Promise<Omit<LevelResult, 'binding' | 'commits' | 'events' | 'stages' | 'cpu' | 'loadBefore'>> {
  const latenciesMs: number[] = [];
  const errorSamples = new Map<string, number>();
  let errors = 0;
  const started = performance.now();
  const end = started + durationMs;
  const client = async (): Promise<void> => {
    while (performance.now() < end) {
      const sent = performance.now();
      const error = await send();
      if (error === null) {
        latenciesMs.push(performance.now() - sent);
      } else {
        errors++;
        errorSamples.set(error, (errorSamples.get(error) ?? 0) + 1);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, () => client()));
  return {
    concurrency,
    requests: latenciesMs.length,
    errors,
    elapsedMs: performance.now() - started,
    latenciesMs,
    errorSamples,
  };
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  const cpuList = cpus();
  console.log('# Blocking SendMessage to demo/echo (standalone platform, loopback)');
  console.log(
    `per level and binding: ${options.seconds} s; warm-up: ${options.warmupSeconds} s at concurrency 16 per binding; levels: ${options.levels.join(', ')}; bindings: ${options.bindings.join(', ')}`,
  );

  let db: TestDatabase | null = null;
  let platform: Awaited<ReturnType<typeof startStandalone>> | null = null;
  const senders: Sender[] = [];
  try {
    db = await createTestDatabase('bench');
    const pgVersion =
      (await db.pool.query<{ version: string }>('SELECT version()')).rows[0]?.version ?? '?';
    printMachine(pgVersion);

    const bootStarted = performance.now();
    platform = await startStandalone({ POSTGRES_URL: db.url });
    console.log(
      `platform ready in ${Math.round(performance.now() - bootStarted)} ms (pid ${String(platform.process.pid)})`,
    );
    const standalonePid = platform.process.pid ?? 0;
    const workerPids = childPids(standalonePid, 'echo');
    for (const binding of options.bindings) {
      senders.push(openSender(binding, platform.baseUrl, platform.grpcTarget));
    }

    for (const { binding, send } of senders) {
      const probe = await send();
      if (probe !== null) {
        throw new Error(
          `the first ${binding} SendMessage failed: ${probe}\n${platform.process.log}`,
        );
      }
      const warm = await runLevel(send, 16, options.warmupSeconds * 1_000);
      console.log(`warm-up ${binding}: ${warm.requests} requests, ${warm.errors} errors`);
    }

    // The idle platform commits too (dispatcher polls, lease sweeps): measure that rate once, then take it
    // off each level's count, together with the bench's own seven reads per level.
    let commitsBefore = await settledCommits(db.pool);
    let readAt = performance.now();
    const idleCommits = await settledCommits(db.pool);
    const idleRate =
      commitsBefore === null || idleCommits === null
        ? 0
        : Math.max(0, idleCommits - commitsBefore - 1) / (performance.now() - readAt);
    commitsBefore = idleCommits;
    readAt = performance.now();
    console.log(
      `idle platform: ${(idleRate * 1_000).toFixed(1)} commits/s (background polls and sweeps)`,
    );

    // Within a level the bindings take turns, so that a change in the machine's load over the run falls
    // on all of them alike.
    const results: LevelResult[] = [];
    for (const concurrency of options.levels) {
      for (const { binding, send } of senders) {
        const eventsBefore = await eventCount(db.pool);
        const positionBefore = await lastPosition(db.pool);
        const loadBefore = loadavg()[0] ?? 0;
        const cpuBefore = await sampleCpu(db.pool, standalonePid, workerPids);
        const result = await runLevel(send, concurrency, options.seconds * 1_000);
        const cpuAfter = await sampleCpu(db.pool, standalonePid, workerPids);
        const eventsAfter = await eventCount(db.pool);
        const stages = await stagesSince(db.pool, positionBefore);
        const commitsAfter = await settledCommits(db.pool);
        const now = performance.now();
        results.push({
          binding,
          ...result,
          commits:
            commitsBefore === null || commitsAfter === null
              ? null
              : commitsAfter - commitsBefore - 7 - Math.round(idleRate * (now - readAt)),
          events: eventsAfter - eventsBefore,
          stages,
          cpu: cpuSeconds(cpuBefore, cpuAfter),
          loadBefore,
        });
        commitsBefore = commitsAfter;
        readAt = now;
        console.log(
          `${binding}, concurrency ${concurrency}: done (${result.requests} ok, ${result.errors} errors)`,
        );
      }
    }
    // Printed grouped by binding, each in level order.
    const ordered = options.bindings.flatMap((binding) =>
      results.filter((r) => r.binding === binding),
    );
    const sortedLatencies = new Map(
      results.map((r) => [r, [...r.latenciesMs].sort((a, b) => a - b)]),
    );
    const latencies = (r: LevelResult): number[] => sortedLatencies.get(r) ?? [];

    console.log('');
    console.log('## Results');
    const fmt = (n: number, digits = 1): string => (Number.isFinite(n) ? n.toFixed(digits) : '-');
    const perSecond = (r: LevelResult): number => r.requests / (r.elapsedMs / 1_000);
    console.log(
      table(
        [
          'binding',
          'concurrency',
          'requests',
          'errors',
          'requests/s',
          'p50 ms',
          'p90 ms',
          'p99 ms',
          'max ms',
        ],
        ordered.map((r) => {
          const sorted = latencies(r);
          return [
            r.binding,
            String(r.concurrency),
            String(r.requests),
            String(r.errors),
            fmt(perSecond(r)),
            fmt(percentile(sorted, 50)),
            fmt(percentile(sorted, 90)),
            fmt(percentile(sorted, 99)),
            fmt(sorted.at(-1) ?? Number.NaN),
          ];
        }),
      ),
    );
    if (options.bindings.length > 1) {
      console.log('');
      console.log('## Bindings side by side (requests/s, p50 ms, p99 ms)');
      console.log(
        table(
          [
            'binding',
            ...options.levels.flatMap((level) => [
              `c=${level} req/s`,
              `c=${level} p50`,
              `c=${level} p99`,
            ]),
          ],
          options.bindings.map((binding) => [
            binding,
            ...options.levels.flatMap((level) => {
              const r = results.find((x) => x.binding === binding && x.concurrency === level);
              if (!r) {
                return ['-', '-', '-'];
              }
              const sorted = latencies(r);
              return [fmt(perSecond(r)), fmt(percentile(sorted, 50)), fmt(percentile(sorted, 99))];
            }),
          ]),
        ),
      );
    }
    console.log('');
    console.log('## Postgres work per request');
    console.log(
      table(
        ['binding', 'concurrency', 'events/request', 'commits/request'],
        ordered.map((r) => {
          const total = r.requests + r.errors;
          return [
            r.binding,
            String(r.concurrency),
            total > 0 ? fmt(r.events / total, 2) : '-',
            total > 0 && r.commits !== null ? fmt(r.commits / total, 2) : '-',
          ];
        }),
      ),
    );
    console.log(
      "commits: xact_commit of the benchmark database (pg_stat_database) over the level, less the idle rate and the bench's own reads;\n" +
        'a statement outside an explicit transaction counts as one. events: rows appended to events.messages.',
    );
    console.log('');
    console.log('## Where a request spends its time (medians, ms)');
    console.log(
      table(
        [
          'binding',
          'concurrency',
          'client p50',
          'submitted→leased',
          'leased→WORKING',
          'WORKING→artifact',
          'artifact→COMPLETED',
          'submitted→COMPLETED',
          'remainder (client p50 − that)',
        ],
        ordered.map((r) => {
          const p50 = percentile(latencies(r), 50);
          const st = r.stages;
          return [
            r.binding,
            String(r.concurrency),
            fmt(p50),
            st ? fmt(st.submittedToLease) : '-',
            st ? fmt(st.leaseToWorking) : '-',
            st ? fmt(st.workingToArtifact) : '-',
            st ? fmt(st.artifactToCompleted) : '-',
            st ? fmt(st.submittedToCompleted) : '-',
            st ? fmt(p50 - st.submittedToCompleted) : '-',
          ];
        }),
      ),
    );
    console.log(
      'Stages from events.messages.recorded_at (clock_timestamp() at append) of the tasks each level created;\n' +
        '"remainder" is the binding (HTTP + JSON-RPC, HTTP+JSON, or gRPC), the ingress→task-service gRPC hop,\n' +
        'the submit transaction up to the append, and the blocked call noticing COMPLETED and reading the view.',
    );
    if (results.some((r) => r.cpu.get('machine'))) {
      console.log('');
      console.log('## CPU during each level (Linux /proc; 100 % = one core)');
      const groups: [CpuGroup, string][] = [
        ['client', 'bench client'],
        ['standalone', 'standalone (ingress + task-service)'],
        ['worker', 'echo worker'],
        ['postgres', 'Postgres backends of the bench DB'],
      ];
      console.log(
        table(
          [
            'binding',
            'concurrency',
            'load avg before',
            ...groups.map(([, label]) => `${label} % (ms/request)`),
            'whole machine %',
            'other %',
          ],
          ordered.map((r) => {
            const seconds = r.elapsedMs / 1_000;
            const total = r.requests + r.errors;
            const cell = (used: number): string =>
              `${fmt((100 * used) / seconds, 0)} (${total > 0 ? fmt((1_000 * used) / total, 2) : '-'})`;
            const ours = groups.reduce((sum, [group]) => sum + (r.cpu.get(group) ?? 0), 0);
            const machine = r.cpu.get('machine') ?? 0;
            return [
              r.binding,
              String(r.concurrency),
              fmt(r.loadBefore, 2),
              ...groups.map(([group]) => cell(r.cpu.get(group) ?? 0)),
              fmt((100 * machine) / seconds, 0),
              fmt((100 * Math.max(0, machine - ours)) / seconds, 0),
            ];
          }),
        ),
      );
      console.log(
        `The machine has ${cpuList.length} CPUs (${100 * cpuList.length} % in all). "other" is busy time charged to none of\n` +
          'the groups: Postgres background processes (WAL writer, checkpointer), kernel interrupt time of the loopback\n' +
          'traffic, and any other job running on the machine at the same time.',
      );
    }
    const errorLines = ordered.flatMap((r) =>
      [...r.errorSamples].map(
        ([what, n]) => `${r.binding}, concurrency ${r.concurrency}: ${n} x ${what}`,
      ),
    );
    if (errorLines.length > 0) {
      console.log('');
      console.log('## Errors');
      errorLines.forEach((line) => console.log(line));
    }
    return results.every((r) => r.requests > 0) ? 0 : 1;
  } finally {
    senders.forEach((sender) => sender.close());
    await platform?.process.stop().catch(() => undefined);
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

/**
 * GetTask and ListTasks at 10,000 and at 1,000,000 tasks of one caller (`npm run bench:scale`).
 *
 * Creates a throw-away database, boots `dist/apps/standalone/src/main.js`, sends one real task of each kind to
 * the `tck` agent of the demo tenant (COMPLETED with an artifact, INPUT_REQUIRED, REJECTED), and seeds copies of
 * them (bench/support/seed-tasks.ts: the rows the write path writes, set-based) for the demo caller: 90 %
 * completed, 5 % input-required, 5 % rejected, 10 tasks per context, one second apart. Then, at each size, it
 * measures over JSON-RPC, closed loop at a modest concurrency, one scenario after another:
 *
 * - GetTask of a random existing task;
 * - ListTasks, first page of the default size (50);
 * - ListTasks filtered by status (TASK_STATE_INPUT_REQUIRED, 5 % of the tasks);
 * - ListTasks by contextId (a random context);
 * - ListTasks deep page: a pageToken at a random task, anywhere in the listing.
 *
 * after a warm-up of every scenario, and the platform process's memory before and after the load (VmRSS and the
 * JS heap in use, each after two full garbage collections requested through its inspector, which the bench enables
 * with `--inspect` on a free loopback port) and its VmRSS while the load runs. After seeding (and before
 * measuring) it runs VACUUM ANALYZE and CHECKPOINT, so that the measurement meets a settled database, as
 * autovacuum and the checkpointer leave it, not the seeding's background work. Options: `--small N` (10000),
 * `--large N` (1000000), `--seconds N` per scenario (15, over `--rounds N` rounds of every scenario in turn, 3),
 * `--warmup N` seconds per scenario (5), `--concurrency N` (4), `--batch N` tasks per seeding transaction (20000).
 */
import { encodeListPageToken } from '@lib/a2a-protocol';
import { CLIENT_SCOPES } from '@lib/authz';
import { agentIdOf, principalIdOf, tenantIdOf, type CallContext } from '@lib/tenancy';
import {
  createTestDatabase,
  freePort,
  sleep,
  startStandalone,
  type TestDatabase,
} from '@lib/testing';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { Pool } from 'pg';
import { listTasksStatement } from '../apps/task-service/src/queries/list-tasks.sql';
import { fmt, percentile, printMachine, table } from './support/figures';
import { rssMiB } from './support/proc-stats';
import { captureTemplate, seedTasks, type SeedPlan } from './support/seed-tasks';

interface Options {
  small: number;
  large: number;
  seconds: number;
  warmupSeconds: number;
  concurrency: number;
  rounds: number;
  batch: number;
}

const TENANT = 'demo';
const AGENT = 'tck';
const PRINCIPAL = 'demo-user';
const API_KEY = 'demo-key';
const HEADERS = { 'Content-Type': 'application/json', 'A2A-Version': '1.0', 'X-API-Key': API_KEY };
const REQUEST_TIMEOUT_MS = 30_000;
/** How many random tasks each size's requests pick from. */
const SAMPLE = 5_000;
const RATIO_TARGET = 1.5;
const RSS_TARGET = 0.1;

const SCENARIOS = [
  'GetTask',
  'ListTasks first page',
  'ListTasks status',
  'ListTasks contextId',
  'ListTasks deep page',
] as const;
type Scenario = (typeof SCENARIOS)[number];

function parseOptions(argv: string[]): Options {
  const options: Options = {
    small: 10_000,
    large: 1_000_000,
    seconds: 15,
    warmupSeconds: 5,
    concurrency: 4,
    rounds: 3,
    batch: 20_000,
  };
  const flags: Record<string, keyof Options> = {
    '--small': 'small',
    '--large': 'large',
    '--seconds': 'seconds',
    '--warmup': 'warmupSeconds',
    '--concurrency': 'concurrency',
    '--rounds': 'rounds',
    '--batch': 'batch',
  };
  for (let i = 0; i < argv.length; i += 2) {
    const flag = argv[i] ?? '';
    const key = flags[flag];
    const value = Number(argv[i + 1]);
    if (key === undefined) {
      throw new Error(`unknown argument ${flag} (known: ${Object.keys(flags).join(', ')})`);
    }
    if (!Number.isInteger(value) || value <= 0) {
      throw new Error(`${flag} needs a positive integer, got ${String(argv[i + 1])}`);
    }
    options[key] = value;
  }
  if (options.large <= options.small) {
    throw new Error('--large must be more than --small');
  }
  return options;
}

interface JsonRpcReply {
  result?: { id?: string; tasks?: unknown[]; totalSize?: number; status?: { state?: string } };
  error?: { code?: number; message?: string };
}

/** One JSON-RPC call to the tck agent; resolves to its reply, throws on a transport error. */
async function call(url: string, method: string, params: unknown): Promise<JsonRpcReply> {
  const response = await fetch(url, {
    method: 'POST',
    headers: HEADERS,
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await response.text();
  if (!response.ok) {
    throw new Error(`HTTP ${response.status}: ${text.slice(0, 120)}`);
  }
  return JSON.parse(text) as JsonRpcReply;
}

/** A random existing task of the caller: what the requests of one size pick from. */
interface Sampled {
  taskId: string;
  contextId: string;
  statusTimestamp: string;
}

async function sampleTasks(pool: Pool): Promise<Sampled[]> {
  const result = await pool.query<{ task_id: string; context_id: string; status_timestamp: Date }>(
    `SELECT task_id, context_id, status_timestamp FROM read.task_view
      WHERE tenant_id = $1 AND agent_id = $2 AND owner_id = $3 ORDER BY random() LIMIT $4`,
    [TENANT, AGENT, PRINCIPAL, SAMPLE],
  );
  return result.rows.map((r) => ({
    taskId: r.task_id,
    contextId: r.context_id,
    statusTimestamp: r.status_timestamp.toISOString(),
  }));
}

function pick<T>(items: readonly T[]): T {
  const item = items[Math.floor(Math.random() * items.length)];
  if (item === undefined) {
    throw new Error('nothing to pick from');
  }
  return item;
}

/** The request of one scenario and the check of its reply (null when right, else what is wrong). */
function request(
  scenario: Scenario,
  sample: readonly Sampled[],
): { method: string; params: unknown; check: (reply: JsonRpcReply) => string | null } {
  const listed = (reply: JsonRpcReply): string | null =>
    Array.isArray(reply.result?.tasks) && (reply.result?.totalSize ?? 0) > 0
      ? null
      : 'no tasks listed';
  switch (scenario) {
    case 'GetTask': {
      const { taskId } = pick(sample);
      return {
        method: 'GetTask',
        params: { id: taskId },
        check: (reply) => (reply.result?.id === taskId ? null : 'another task or none'),
      };
    }
    case 'ListTasks first page':
      return { method: 'ListTasks', params: {}, check: listed };
    case 'ListTasks status':
      return {
        method: 'ListTasks',
        params: { status: 'TASK_STATE_INPUT_REQUIRED' },
        check: listed,
      };
    case 'ListTasks contextId':
      return { method: 'ListTasks', params: { contextId: pick(sample).contextId }, check: listed };
    case 'ListTasks deep page': {
      const at = pick(sample);
      return {
        method: 'ListTasks',
        params: {
          pageToken: encodeListPageToken({
            statusTimestamp: at.statusTimestamp,
            taskId: at.taskId,
          }),
        },
        // The oldest sampled task may have nothing after it: a page token is right even then.
        check: (reply) => (Array.isArray(reply.result?.tasks) ? null : 'no page'),
      };
    }
  }
}

interface Measured {
  requests: number;
  errors: Map<string, number>;
  elapsedMs: number;
  /** Ascending. */
  latenciesMs: number[];
}

/** Closed loop: `concurrency` clients send one request after another for `durationMs`. */
async function measure(
  url: string,
  scenario: Scenario,
  sample: readonly Sampled[],
  concurrency: number,
  durationMs: number,
): Promise<Measured> {
  const latenciesMs: number[] = [];
  const errors = new Map<string, number>();
  const started = performance.now();
  const end = started + durationMs;
  const client = async (): Promise<void> => {
    while (performance.now() < end) {
      const { method, params, check } = request(scenario, sample);
      const sent = performance.now();
      let problem: string | null;
      try {
        const reply = await call(url, method, params);
        problem = reply.error
          ? `JSON-RPC error ${String(reply.error.code)}: ${String(reply.error.message).slice(0, 80)}`
          : check(reply);
      } catch (error) {
        problem = `exception: ${error instanceof Error ? error.message : String(error)}`;
      }
      if (problem === null) {
        latenciesMs.push(performance.now() - sent);
      } else {
        errors.set(problem, (errors.get(problem) ?? 0) + 1);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, () => client()));
  return {
    requests: latenciesMs.length,
    errors,
    elapsedMs: performance.now() - started,
    latenciesMs: latenciesMs.sort((a, b) => a - b),
  };
}

function merged(a: Measured, b: Measured): Measured {
  const errors = new Map(a.errors);
  b.errors.forEach((n, what) => errors.set(what, (errors.get(what) ?? 0) + n));
  return {
    requests: a.requests + b.requests,
    errors,
    elapsedMs: a.elapsedMs + b.elapsedMs,
    latenciesMs: [...a.latenciesMs, ...b.latenciesMs].sort((x, y) => x - y),
  };
}

/** The little of the WHATWG WebSocket this file uses (global in Node 22, behind --experimental-websocket in 20). */
interface InspectorSocket {
  send(data: string): void;
  close(): void;
  addEventListener(type: 'open' | 'error', listener: () => void): void;
  addEventListener(type: 'message', listener: (event: { data: unknown }) => void): void;
}
type InspectorSocketClass = new (url: string) => InspectorSocket;

/**
 * Calls Chrome DevTools Protocol methods, one after another, on the process whose inspector listens on `port`,
 * and returns their results. Null when this Node has no WebSocket client.
 */
async function inspectorCalls(port: number, methods: string[]): Promise<unknown[] | null> {
  const Socket = (globalThis as { WebSocket?: InspectorSocketClass }).WebSocket;
  if (Socket === undefined) {
    return null;
  }
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as {
    webSocketDebuggerUrl?: string;
  }[];
  const socket = new Socket(targets[0]?.webSocketDebuggerUrl ?? '');
  const pending = new Map<number, (result: unknown) => void>();
  socket.addEventListener('message', (event) => {
    const reply = JSON.parse(String(event.data)) as { id?: number; result?: unknown };
    if (reply.id !== undefined) {
      pending.get(reply.id)?.(reply.result);
    }
  });
  await new Promise<void>((resolve, reject) => {
    socket.addEventListener('open', () => resolve());
    socket.addEventListener('error', () => reject(new Error(`no inspector on port ${port}`)));
  });
  try {
    const results: unknown[] = [];
    for (const [index, method] of methods.entries()) {
      results.push(
        await new Promise((resolve) => {
          pending.set(index, resolve);
          socket.send(JSON.stringify({ id: index, method }));
        }),
      );
    }
    return results;
  } finally {
    socket.close();
  }
}

/** The platform process's memory once its garbage is collected: VmRSS and the JS heap in use (MiB). */
interface Memory {
  rss: number;
  heapUsed: number | null;
}

/**
 * Memory of the platform process after two full garbage collections (through its inspector), so that a reading
 * does not depend on where in its GC cycle the load left the heap. Without a WebSocket client: VmRSS 2 s idle.
 */
async function memoryAfterGc(pid: number, inspectPort: number): Promise<Memory> {
  const results = await inspectorCalls(inspectPort, [
    'HeapProfiler.collectGarbage',
    'HeapProfiler.collectGarbage',
    'Runtime.getHeapUsage',
  ]);
  await sleep(results === null ? 2_000 : 500);
  const usage = results?.[2] as { usedSize?: number } | undefined;
  return {
    rss: rssMiB(pid) ?? Number.NaN,
    heapUsed: usage?.usedSize === undefined ? null : usage.usedSize / 1024 / 1024,
  };
}

interface SizeResult {
  tasks: number;
  before: Memory;
  after: Memory;
  /** VmRSS every 250 ms during the measured load, ascending (MiB). */
  rssDuring: number[];
  load: string;
  results: Map<Scenario, Measured>;
}

async function measureSize(
  pool: Pool,
  url: string,
  platform: { pid: number; inspectPort: number },
  tasks: number,
  options: Options,
): Promise<SizeResult> {
  const { pid, inspectPort } = platform;
  const sample = await sampleTasks(pool);
  for (const scenario of SCENARIOS) {
    await measure(url, scenario, sample, options.concurrency, options.warmupSeconds * 1_000);
  }
  const before = await memoryAfterGc(pid, inspectPort);
  const load = loadavg()
    .map((n) => n.toFixed(2))
    .join(', ');
  const results = new Map<Scenario, Measured>();
  const rssDuring: number[] = [];
  const sampler = setInterval(() => {
    const rss = rssMiB(pid);
    if (rss !== null) {
      rssDuring.push(rss);
    }
  }, 250);
  // Rounds of every scenario in turn, so that a burst of load from elsewhere on the machine falls on all of them.
  for (let round = 0; round < options.rounds; round++) {
    for (const scenario of SCENARIOS) {
      const measured = await measure(
        url,
        scenario,
        sample,
        options.concurrency,
        (options.seconds * 1_000) / options.rounds,
      );
      const sofar = results.get(scenario);
      results.set(scenario, sofar ? merged(sofar, measured) : measured);
    }
  }
  for (const [scenario, measured] of results) {
    console.log(
      `${tasks} tasks, ${scenario}: ${measured.requests} ok, ${[...measured.errors.values()].reduce((a, b) => a + b, 0)} errors, p99 ${fmt(percentile(measured.latenciesMs, 99), 2)} ms`,
    );
  }
  clearInterval(sampler);
  const after = await memoryAfterGc(pid, inspectPort);
  rssDuring.sort((a, b) => a - b);
  return { tasks, before, after, rssDuring, load, results };
}

async function settle(pool: Pool): Promise<void> {
  for (const table of [
    'events.streams',
    'events.messages',
    'read.task_view',
    'read.task_counts',
    'ops.message_ids',
  ]) {
    await pool.query(`VACUUM ANALYZE ${table}`);
  }
  await pool.query('CHECKPOINT');
}

async function tableSizes(pool: Pool): Promise<string> {
  const result = await pool.query<{ name: string; rows: string; size: string }>(
    `SELECT c.oid::regclass::text AS name, c.reltuples::bigint::text AS rows,
            pg_size_pretty(pg_total_relation_size(c.oid)) AS size
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname IN ('events', 'read', 'ops') AND c.relkind = 'r' AND c.reltuples > 0
      ORDER BY pg_total_relation_size(c.oid) DESC`,
  );
  return table(
    ['table', 'rows (estimate)', 'size with indexes'],
    result.rows.map((r) => [r.name, r.rows, r.size]),
    [0],
  );
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  Plans?: PlanNode[];
}

function planNodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(planNodes)];
}

/**
 * The statement behind each scenario (GetTask's as in TaskViews.find, ListTasks' from listTasksStatement),
 * under EXPLAIN (ANALYZE, BUFFERS) five times at random picks: the server time, and what it read.
 */
async function explainScenarios(pool: Pool, sample: readonly Sampled[]): Promise<string> {
  const ctx: CallContext = {
    tenantId: tenantIdOf(TENANT),
    agentId: agentIdOf(AGENT),
    principalId: principalIdOf(PRINCIPAL),
    credentialId: null,
    scopes: CLIENT_SCOPES,
    binding: 'JSONRPC',
    protocolVersion: '1.0',
    requestId: 'bench',
  };
  const rows: string[][] = [];
  for (const scenario of SCENARIOS) {
    const times: number[] = [];
    let last: PlanNode | null = null;
    let buffers = 0;
    for (let i = 0; i < 5; i++) {
      const { method, params } = request(scenario, sample);
      const statement =
        method === 'GetTask'
          ? {
              text: `SELECT task, state, version FROM read.task_view
                      WHERE tenant_id = $1 AND task_id = $2 AND agent_id = $3 AND owner_id = $4`,
              values: [TENANT, (params as { id: string }).id, AGENT, PRINCIPAL],
            }
          : listTasksStatement(ctx, params as Parameters<typeof listTasksStatement>[1]);
      const result = await pool.query<{
        'QUERY PLAN': [{ Plan: PlanNode; 'Execution Time': number }];
      }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${statement.text}`, statement.values);
      const explained = result.rows[0]?.['QUERY PLAN'][0];
      if (explained) {
        times.push(explained['Execution Time']);
        last = explained.Plan;
        buffers = (last['Shared Hit Blocks'] ?? 0) + (last['Shared Read Blocks'] ?? 0);
      }
    }
    const scans = last
      ? planNodes(last)
          .filter((n) => n['Relation Name'])
          .map(
            (n) =>
              `${n['Node Type']} ${n['Index Name'] ?? n['Relation Name'] ?? ''} (${n['Actual Rows'] * n['Actual Loops']} rows)`,
          )
          .join(' + ')
      : '-';
    times.sort((a, b) => a - b);
    rows.push([
      scenario,
      fmt(percentile(times, 50), 3),
      fmt(times.at(-1), 3),
      String(buffers),
      scans,
    ]);
  }
  return table(
    ['scenario', 'median ms', 'max ms', 'buffers (last)', 'what it reads (last run)'],
    rows,
    [0, 4],
  );
}

/** One real task per kind through the platform (blocking SendMessage to tck), captured as seeding templates. */
async function realTemplates(pool: Pool, url: string): Promise<SeedPlan['mix']> {
  const kinds = [
    { prefix: 'echo', state: 'TASK_STATE_COMPLETED', weight: 18 },
    { prefix: 'tck-input-required', state: 'TASK_STATE_INPUT_REQUIRED', weight: 1 },
    { prefix: 'tck-reject-task', state: 'TASK_STATE_REJECTED', weight: 1 },
  ];
  const mix: SeedPlan['mix'] = [];
  for (const kind of kinds) {
    const reply = await call(url, 'SendMessage', {
      message: {
        messageId: `${kind.prefix}-${randomUUID()}`,
        role: 'ROLE_USER',
        parts: [{ text: 'hello' }],
        contextId: randomUUID(),
      },
    });
    const task = (
      reply.result as { task?: { id?: string; status?: { state?: string } } } | undefined
    )?.task;
    if (!task?.id || task.status?.state !== kind.state) {
      throw new Error(`the ${kind.prefix} template task ended ${JSON.stringify(reply)}`);
    }
    mix.push({
      template: await captureTemplate(pool, TENANT, task.id, kind.prefix),
      weight: kind.weight,
    });
  }
  return mix;
}

function uptime(): string {
  try {
    return execFileSync('uptime', { encoding: 'utf8' }).trim();
  } catch {
    return `load average: ${loadavg()
      .map((n) => n.toFixed(2))
      .join(', ')}`;
  }
}

function report(small: SizeResult, large: SizeResult, options: Options): boolean {
  const p = (m: Measured | undefined, q: number): number => percentile(m?.latenciesMs ?? [], q);
  const rate = (m: Measured | undefined): number =>
    m ? m.requests / (m.elapsedMs / 1_000) : Number.NaN;
  console.log('');
  console.log(
    `## Latency over JSON-RPC, concurrency ${options.concurrency}, ${options.seconds} s per scenario (ms)`,
  );
  let ok = true;
  const rows = SCENARIOS.map((scenario) => {
    const a = small.results.get(scenario);
    const b = large.results.get(scenario);
    const ratio = p(b, 99) / p(a, 99);
    const errors = [a, b].reduce(
      (sum, m) => sum + [...(m?.errors.values() ?? [])].reduce((x, y) => x + y, 0),
      0,
    );
    ok &&= ratio <= RATIO_TARGET && errors === 0;
    return [
      scenario,
      fmt(rate(a), 0),
      fmt(p(a, 50), 2),
      fmt(p(a, 99), 2),
      fmt(rate(b), 0),
      fmt(p(b, 50), 2),
      fmt(p(b, 99), 2),
      fmt(ratio, 2),
      String(errors),
    ];
  });
  const s = small.tasks.toLocaleString('en-US');
  const l = large.tasks.toLocaleString('en-US');
  console.log(
    table(
      [
        'scenario',
        `${s}: req/s`,
        `${s}: p50`,
        `${s}: p99`,
        `${l}: req/s`,
        `${l}: p50`,
        `${l}: p99`,
        `p99 ratio (≤ ${RATIO_TARGET})`,
        'errors',
      ],
      rows,
      [0],
    ),
  );
  console.log('');
  console.log('## Platform process memory (MiB; RSS = VmRSS of the standalone process)');
  const growth = large.after.rss / small.before.rss - 1;
  ok &&= Math.abs(growth) <= RSS_TARGET;
  console.log(
    table(
      [
        'tasks',
        'load average before',
        'before the load: RSS',
        'JS heap',
        'during the load: RSS median',
        'RSS max',
        'after the load: RSS',
        'JS heap',
      ],
      [small, large].map((r) => [
        r.tasks.toLocaleString('en-US'),
        r.load,
        fmt(r.before.rss),
        fmt(r.before.heapUsed),
        fmt(percentile(r.rssDuring, 50)),
        fmt(r.rssDuring.at(-1)),
        fmt(r.after.rss),
        fmt(r.after.heapUsed),
      ]),
    ),
  );
  const signed = (x: number): string => `${x >= 0 ? '+' : ''}${fmt(100 * x)} %`;
  const perTask =
    ((large.after.rss - small.before.rss) * 1024 * 1024) / (large.tasks - small.tasks);
  console.log(
    `RSS after the ${l}-task load vs before the ${s}-task load: ${signed(growth)} (target within ±${100 * RSS_TARGET} %), ` +
      `${fmt(perTask, 1)} bytes per task added`,
  );
  console.log(
    'Before and after: two full garbage collections through the inspector, then VmRSS and the JS heap in use\n' +
      '(without a WebSocket client in the bench: VmRSS 2 s idle, JS heap "-"). During: VmRSS every 250 ms.',
  );
  console.log('');
  console.log(ok ? 'targets met' : 'TARGETS NOT MET');
  return ok;
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  console.log('# GetTask and ListTasks at scale (standalone platform, JSON-RPC, loopback)');
  console.log(
    `sizes: ${options.small} and ${options.large} tasks of one caller; ${options.seconds} s per scenario (in ${options.rounds} rounds) at concurrency ${options.concurrency}; warm-up ${options.warmupSeconds} s per scenario and size`,
  );
  let db: TestDatabase | null = null;
  let platform: Awaited<ReturnType<typeof startStandalone>> | null = null;
  try {
    db = await createTestDatabase('scale');
    const pgVersion =
      (await db.pool.query<{ version: string }>('SELECT version()')).rows[0]?.version ?? '?';
    printMachine(pgVersion);
    console.log(`uptime at start: ${uptime()}`);
    // The inspector is only used to collect garbage before reading memory (memoryAfterGc).
    const inspectPort = await freePort();
    platform = await startStandalone(
      { POSTGRES_URL: db.url },
      { nodeArgs: [`--inspect=127.0.0.1:${inspectPort}`] },
    );
    const pid = platform.process.pid ?? 0;
    const url = `${platform.baseUrl}/agents/${TENANT}/${AGENT}/jsonrpc`;
    console.log(`platform ready (pid ${pid}), RSS ${fmt(rssMiB(pid))} MiB`);

    const plan: SeedPlan = {
      mix: await realTemplates(db.pool, url),
      contextSize: 10,
      // Every seeded task is older than the real ones; the later ones are the newer.
      start: new Date(Date.now() - options.large * 1_000 - 3_600_000),
      stepMs: 1_000,
      seed: `scale-${randomUUID()}`,
    };
    const seed = async (from: number, to: number): Promise<void> => {
      const started = performance.now();
      let reported = started;
      await seedTasks(db!.pool, plan, from, to, {
        batchSize: options.batch,
        onBatch: (upTo) => {
          if (performance.now() - reported > 30_000 || upTo === to) {
            reported = performance.now();
            console.log(`seeded ${upTo} tasks (${Math.round((reported - started) / 1_000)} s)`);
          }
        },
      });
      const seconds = (performance.now() - started) / 1_000;
      console.log(
        `seeded tasks ${from}…${to - 1} in ${seconds.toFixed(1)} s (${Math.round((to - from) / seconds)} tasks/s)`,
      );
      const settling = performance.now();
      await settle(db!.pool);
      console.log(
        `VACUUM ANALYZE and CHECKPOINT in ${((performance.now() - settling) / 1_000).toFixed(1)} s`,
      );
    };

    await seed(0, options.small);
    const small = await measureSize(db.pool, url, { pid, inspectPort }, options.small, options);
    const smallPlans = await explainScenarios(db.pool, await sampleTasks(db.pool));
    await seed(options.small, options.large);
    console.log('');
    console.log(await tableSizes(db.pool));
    console.log('');
    const large = await measureSize(db.pool, url, { pid, inspectPort }, options.large, options);
    const largePlans = await explainScenarios(db.pool, await sampleTasks(db.pool));
    for (const [tasks, plans] of [
      [options.small, smallPlans],
      [options.large, largePlans],
    ] as const) {
      console.log('');
      console.log(
        `## Postgres side at ${tasks.toLocaleString('en-US')} tasks: EXPLAIN (ANALYZE, BUFFERS) of each scenario's statement, 5 random picks`,
      );
      console.log(plans);
    }
    const ok = report(small, large, options);
    console.log(`uptime at end: ${uptime()}`);
    for (const [label, result] of [
      [options.small, small],
      [options.large, large],
    ] as const) {
      for (const [scenario, measured] of result.results) {
        for (const [what, n] of measured.errors) {
          console.log(`errors at ${label}, ${scenario}: ${n} x ${what}`);
        }
      }
    }
    return ok ? 0 : 1;
  } finally {
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

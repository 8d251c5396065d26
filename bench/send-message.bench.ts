/**
 * `npm run bench`: the platform and the official a2a-js server side by side, under the same client, load and
 * levels, in one run.
 *
 * - The reference: `../shared/reference-server` (the `@a2a-js/sdk` server with its in-memory task store),
 *   copied to the OS temp dir, installed there (`npm ci`, reused while its package-lock is the same), started
 *   on free ports (`bench/reference-server.ts`).
 * - The platform: a throw-away database, the standalone from `dist/` (ingress + task-service in one process,
 *   the example workers as child processes), default configuration; agent `echo` of the demo tenant.
 *
 * Both run for the whole bench. Each run (mode, binding, concurrency) sends `concurrency` clients in closed
 * loop, each request with a fresh `messageId`, to each side for `--seconds` in all, in `--slices` parts taken
 * in turns (reference, platform, platform, reference, …): the machine's speed drifts over a run on shared
 * hosts, and interleaved parts give both sides the same share of it.
 * Modes: blocking `SendMessage` (done when the answer holds a COMPLETED task) and `SendStreamingMessage`
 * (done when the server ends the stream after a COMPLETED status). Per run and side: requests/s, latency
 * percentiles, errors, CPU per request of the side's processes (/proc); for the platform also Postgres
 * commits, events and backend CPU per request. Options: `--seconds N` (per run and side, default 10),
 * `--slices N` (parts per run and side, default 2; 1: each side once, the platform first),
 * `--warmup N` (seconds per mode, binding and side, default 3), `--levels 1,16,64` (SendMessage),
 * `--stream-levels 16,64` (SendStreamingMessage; `none` to skip), `--bindings jsonrpc,rest,grpc` (default
 * jsonrpc), `--only platform|reference`, `--cpu-prof DIR` (profiles of every process, summarised at the end),
 * `--platform-env KEY=VALUE` (repeatable: a setting of the standalone, to compare settings in alternated runs).
 */
import { createTestDatabase, type TestDatabase } from '@lib/testing';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { installReferenceServer, referenceSdkVersion, ReferenceServer } from './reference-server';
import {
  BINDINGS,
  mergeLoads,
  openSender,
  runClosedLoop,
  type A2aEndpoints,
  type Binding,
  type LoadResult,
  type Mode,
  type Sender,
} from './support/a2a-load';
import { BenchPlatform, type Counters, type PlatformCpu } from './support/bench-platform';
import { formatProfile, readProfiles } from './support/cpu-profile';
import { ascending, fmt, percentile, printMachine, table } from './support/figures';
import {
  CLOCK_TICKS,
  cpuSecondsBetween,
  machineBusyTicks,
  machineStealTicks,
  rssMiB,
  ticksByPid,
} from './support/proc-stats';

const SIDES = ['platform', 'reference'] as const;
type Side = (typeof SIDES)[number];

interface Options {
  seconds: number;
  /** Parts of each run per side, taken in turns with the other side. */
  slices: number;
  warmupSeconds: number;
  sendLevels: number[];
  streamLevels: number[];
  bindings: Binding[];
  sides: Side[];
  cpuProfDir: string | null;
  /** Settings given to the standalone beside its database (`--platform-env`). */
  platformEnv: Record<string, string>;
}

/** One load shape, sent to each side in turn. */
interface Run {
  mode: Mode;
  binding: Binding;
  concurrency: number;
}

/** What one run measured on one side. */
interface Measured {
  load: LoadResult;
  /** CPU seconds of the side's processes (platform: standalone + echo worker; reference: its process). */
  cpuSeconds: number;
  clientCpuSeconds: number;
  machineBusySeconds: number | null;
  /** Of the machine's busy time, what the host of this virtual machine gave to others. */
  machineStealSeconds: number | null;
  loadAverageBefore: number;
}

/** Platform-only figures of one run. */
interface PlatformExtra {
  standaloneSeconds: number;
  workerSeconds: number;
  postgresSeconds: number;
  commits: number;
  events: number;
}

interface RunResult {
  run: Run;
  sides: Map<Side, Measured>;
  platform: PlatformExtra | null;
}

const DEFAULTS: Omit<Options, 'cpuProfDir' | 'platformEnv'> = {
  seconds: 10,
  slices: 2,
  warmupSeconds: 3,
  sendLevels: [1, 16, 64],
  streamLevels: [16, 64],
  bindings: ['jsonrpc'],
  sides: [...SIDES],
};
const WARMUP_CONCURRENCY = 16;
const USAGE =
  'options: --seconds N, --slices N, --warmup N, --levels 1,16,64, --stream-levels 16,64|none, ' +
  `--bindings ${BINDINGS.join(',')}, --only ${SIDES.join('|')}, --cpu-prof DIR, --platform-env KEY=VALUE`;

function oneOf<T extends string>(names: readonly T[], name: string): name is T {
  return (names as readonly string[]).includes(name);
}

function parseOptions(argv: string[]): Options {
  const options: Options = { ...DEFAULTS, cpuProfDir: null, platformEnv: {} };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i] ?? '';
    // Every option takes a value.
    const value = argv[++i] ?? '';
    const bad = (expected: string): Error =>
      new Error(`${flag} needs ${expected}, got ${value}\n${USAGE}`);
    const positive = (): number => {
      const n = Number(value);
      if (!Number.isFinite(n) || n <= 0) {
        throw bad('a positive number');
      }
      return n;
    };
    const levels = (): number[] => {
      const list = value.split(',').map(Number);
      if (!list.every((level) => Number.isInteger(level) && level > 0)) {
        throw bad('a comma-separated list of positive integers');
      }
      return list;
    };
    switch (flag) {
      case '--seconds':
        options.seconds = positive();
        break;
      case '--slices': {
        const n = positive();
        if (!Number.isInteger(n)) {
          throw bad('a positive integer');
        }
        options.slices = n;
        break;
      }
      case '--warmup':
        options.warmupSeconds = positive();
        break;
      case '--levels':
        options.sendLevels = levels();
        break;
      case '--stream-levels':
        options.streamLevels = value === 'none' ? [] : levels();
        break;
      case '--bindings': {
        const names = value.split(',');
        if (!names.every((name) => oneOf(BINDINGS, name))) {
          throw bad(`a comma-separated list of ${BINDINGS.join(', ')}`);
        }
        options.bindings = [...new Set(names)];
        break;
      }
      case '--only':
        if (!oneOf(SIDES, value)) {
          throw bad(SIDES.join(' or '));
        }
        options.sides = [value];
        break;
      case '--cpu-prof':
        if (value === '' || value.startsWith('--')) {
          throw bad('a directory');
        }
        options.cpuProfDir = resolve(value);
        break;
      case '--platform-env': {
        const match = /^([A-Z][A-Z0-9_]*)=(.*)$/s.exec(value);
        if (!match?.[1]) {
          throw bad('KEY=VALUE');
        }
        options.platformEnv[match[1]] = match[2] ?? '';
        break;
      }
      default:
        throw new Error(`unknown argument ${flag}\n${USAGE}`);
    }
  }
  return options;
}

function plan(options: Options): Run[] {
  const runs = (mode: Mode, levels: number[]): Run[] =>
    levels.flatMap((concurrency) =>
      options.bindings.map((binding) => ({ mode, binding, concurrency })),
    );
  return [...runs('send', options.sendLevels), ...runs('stream', options.streamLevels)];
}

const RPC: Record<Mode, string> = { send: 'SendMessage', stream: 'SendStreamingMessage' };
const runLabel = (run: Run): string => `${RPC[run.mode]} ${run.binding} c=${run.concurrency}`;

/**
 * The parts of a run, side by side: with one part per side, each side once in the order given (the platform
 * first, so that its commit counters settle while the reference runs). With more, in turns that begin with
 * the reference (reference, platform, platform, reference, …): with an even number of parts both sides' parts
 * sit at the same mean time, so a steady drift of the machine's speed weighs on both alike, and the
 * platform's last part is followed by the reference's.
 */
function sliceOrder(servers: readonly Server[], slices: number): Server[] {
  if (slices === 1) {
    return [...servers];
  }
  const turn = [...servers].reverse();
  return Array.from({ length: slices }, (_, i) =>
    i % 2 === 0 ? turn : [...turn].reverse(),
  ).flat();
}

/** The figures of a side's parts of one run, together. */
function mergeMeasured(earlier: Measured | undefined, part: Measured): Measured {
  if (!earlier) {
    return part;
  }
  return {
    load: mergeLoads(earlier.load, part.load),
    cpuSeconds: earlier.cpuSeconds + part.cpuSeconds,
    clientCpuSeconds: earlier.clientCpuSeconds + part.clientCpuSeconds,
    machineBusySeconds:
      earlier.machineBusySeconds === null || part.machineBusySeconds === null
        ? null
        : earlier.machineBusySeconds + part.machineBusySeconds,
    machineStealSeconds:
      earlier.machineStealSeconds === null || part.machineStealSeconds === null
        ? null
        : earlier.machineStealSeconds + part.machineStealSeconds,
    loadAverageBefore: earlier.loadAverageBefore,
  };
}

/** One side of the bench: where to send and whose CPU to count. */
interface Server {
  side: Side;
  endpoints: A2aEndpoints;
  pids: () => number[];
}

/**
 * The load of `run` on `server`, with the CPU of the side's processes, the bench client and the machine;
 * with `platform` (null for the reference), also its process groups' CPU samples before and after.
 */
async function measure(
  server: Server,
  sender: Sender,
  run: Run,
  durationMs: number,
  platform: BenchPlatform | null,
): Promise<{ measured: Measured; cpu: [PlatformCpu, PlatformCpu] | null }> {
  const loadAverageBefore = loadavg()[0] ?? 0;
  const platformBefore = await platform?.sampleCpu();
  const before = { own: ticksByPid(server.pids()), client: ticksByPid([process.pid]) };
  const machineBefore = machineBusyTicks();
  const stealBefore = machineStealTicks();
  const load = await runClosedLoop(sender.send, run.concurrency, durationMs);
  const machineAfter = machineBusyTicks();
  const stealAfter = machineStealTicks();
  const after = { own: ticksByPid(server.pids()), client: ticksByPid([process.pid]) };
  const platformAfter = await platform?.sampleCpu();
  return {
    measured: {
      load,
      cpuSeconds: cpuSecondsBetween(before.own, after.own),
      clientCpuSeconds: cpuSecondsBetween(before.client, after.client),
      machineBusySeconds:
        machineBefore === null || machineAfter === null
          ? null
          : (machineAfter - machineBefore) / CLOCK_TICKS,
      machineStealSeconds:
        stealBefore === null || stealAfter === null
          ? null
          : (stealAfter - stealBefore) / CLOCK_TICKS,
      loadAverageBefore,
    },
    cpu: platformBefore && platformAfter ? [platformBefore, platformAfter] : null,
  };
}

// ---------------------------------------------------------------------------------------------------------
// Printing

const perSecond = (m: Measured): number => m.load.requests / (m.load.elapsedMs / 1_000);
const attempts = (m: Measured): number => m.load.requests + m.load.errors;
const perRequest = (value: number, m: Measured): number =>
  attempts(m) > 0 ? value / attempts(m) : Number.NaN;

/** platform / reference with about three significant digits; `-` when either is missing. */
function ratio(platform: number | undefined, reference: number | undefined): string {
  if (platform === undefined || reference === undefined || !(reference > 0)) {
    return '-';
  }
  const r = platform / reference;
  return r >= 100 ? fmt(r, 0) : r >= 10 ? fmt(r, 1) : r >= 1 ? fmt(r, 2) : fmt(r, 3);
}

function printSideBySide(results: RunResult[]): void {
  const figures: [string, (m: Measured, sorted: number[]) => number, number][] = [
    ['requests/s', (m) => perSecond(m), 1],
    ['p50 ms', (_, sorted) => percentile(sorted, 50), 1],
    ['p90 ms', (_, sorted) => percentile(sorted, 90), 1],
    ['p99 ms', (_, sorted) => percentile(sorted, 99), 1],
    ['errors', (m) => m.load.errors, 0],
    ['CPU ms/request', (m) => perRequest(1_000 * m.cpuSeconds, m), 2],
  ];
  const rows = results.flatMap(({ run, sides }) => {
    const sorted = new Map([...sides].map(([side, m]) => [side, ascending(m.load.latenciesMs)]));
    return figures.map(([figure, value, digits], i) => {
      const of = (side: Side): number | undefined => {
        const m = sides.get(side);
        return m && value(m, sorted.get(side) ?? []);
      };
      const name = run.mode === 'stream' ? figure.replace('requests/s', 'streams/s') : figure;
      return [
        i === 0 ? runLabel(run) : '',
        name,
        fmt(of('reference'), digits),
        fmt(of('platform'), digits),
        figure === 'errors' ? '-' : ratio(of('platform'), of('reference')),
      ];
    });
  });
  console.log(
    table(['run', 'figure', 'reference', 'platform', 'platform / reference'], rows, [0, 1]),
  );
  console.log(
    'requests/s: requests that ended COMPLETED over the wall time of the run (in-flight ones are let finish);\n' +
      'latency percentiles over those; errors: anything else (printed by kind below). CPU ms/request: user +\n' +
      "system time of the side's processes (/proc) over all requests sent: the platform's standalone process and\n" +
      "its echo worker child, the reference server's one process. Ratio > 1: the platform has more of it.",
  );
}

function printPlatformDetail(results: RunResult[]): void {
  const rows = results.flatMap(({ run, sides, platform }) => {
    const m = sides.get('platform');
    if (!m || !platform) {
      return [];
    }
    const ms = (s: number): string => fmt(perRequest(1_000 * s, m), 2);
    return [
      [
        runLabel(run),
        fmt(perRequest(platform.commits, m), 2),
        fmt(perRequest(platform.events, m), 2),
        ms(platform.standaloneSeconds),
        ms(platform.workerSeconds),
        ms(platform.postgresSeconds),
        ms(platform.standaloneSeconds + platform.workerSeconds + platform.postgresSeconds),
      ],
    ];
  });
  if (rows.length === 0) {
    return;
  }
  console.log('');
  console.log('## Platform: Postgres and CPU per request');
  console.log(
    table(
      [
        'run',
        'PG commits/request',
        'events/request',
        'standalone CPU ms',
        'echo worker CPU ms',
        'PG backends CPU ms',
        'all three CPU ms',
      ],
      rows,
      [0],
    ),
  );
  console.log(
    'PG commits: xact_commit of the bench database (pg_stat_database) over the run, read 11 s after its load\n' +
      "so that every backend has published its counters, less the idle platform's rate and the bench's own\n" +
      'reads; a statement outside an explicit transaction counts as one. events: rows appended to\n' +
      'events.messages. PG backends: the backends connected to the bench database.',
  );
}

/** Busy time of other jobs above which a run's figures say more about the machine than about the servers. */
const BUSY_MACHINE_PERCENT = 50;

function printMachineLoad(results: RunResult[], options: Options): void {
  let busyRuns = 0;
  const rows = results.flatMap(({ run, sides, platform }) =>
    options.sides.flatMap((side) => {
      const m = sides.get(side);
      if (!m) {
        return [];
      }
      const percent = (cpuSeconds: number): number =>
        (100 * cpuSeconds) / (m.load.elapsedMs / 1_000);
      const postgres = side === 'platform' ? (platform?.postgresSeconds ?? null) : null;
      const ours = m.cpuSeconds + m.clientCpuSeconds + (postgres ?? 0);
      const other =
        m.machineBusySeconds === null ? null : percent(Math.max(0, m.machineBusySeconds - ours));
      if (other !== null && other > BUSY_MACHINE_PERCENT) {
        busyRuns++;
      }
      return [
        [
          runLabel(run),
          side,
          fmt(m.loadAverageBefore, 2),
          fmt(percent(m.cpuSeconds), 0),
          fmt(postgres === null ? null : percent(postgres), 0),
          fmt(percent(m.clientCpuSeconds), 0),
          fmt(other, 0),
          fmt(m.machineStealSeconds === null ? null : percent(m.machineStealSeconds), 0),
          fmt(m.machineBusySeconds === null ? null : percent(m.machineBusySeconds), 0),
        ],
      ];
    }),
  );
  console.log('');
  console.log('## CPU during each run (100 % = one core)');
  console.log(
    table(
      [
        'run',
        'side',
        'load avg before',
        'side %',
        'PG backends %',
        'bench client %',
        'other %',
        'of it stolen %',
        'whole machine %',
      ],
      rows,
      [0, 1],
    ),
  );
  console.log(
    `The machine has ${cpus().length} CPUs; the bench client runs on them too. "other": busy time of none of the\n` +
      'columns before it: Postgres background processes, the kernel, any other job running at the time;\n' +
      '"of it stolen": the part of "other" that the host of this virtual machine gave to other guests (steal).',
  );
  if (busyRuns > 0) {
    console.log(
      `WARNING: other work took more than ${BUSY_MACHINE_PERCENT} % of a core in ${busyRuns} of ${rows.length} ` +
        'measurements: both sides were short of CPU, and the ratios are less reliable than on a quiet machine.',
    );
  }
}

function printErrors(results: RunResult[]): void {
  const lines = results.flatMap(({ run, sides }) =>
    [...sides].flatMap(([side, m]) =>
      [...m.load.errorSamples].map(([what, n]) => `${side}, ${runLabel(run)}: ${n} x ${what}`),
    ),
  );
  if (lines.length > 0) {
    console.log('');
    console.log('## Errors');
    lines.forEach((line) => console.log(line));
  }
}

/** The top functions by self time of each profile written into `dir` by the processes named in `labels`. */
function printProfiles(dir: string, labels: Map<number, string>): void {
  console.log('');
  console.log(`## CPU profiles (${dir})`);
  console.log(
    'Whole process lifetimes (boot, warm-up and idle time included); the figures above are slower under the\n' +
      'profiler. The other example workers (idle) wrote profiles too and are not shown.',
  );
  for (const summary of readProfiles(dir)) {
    const label = summary.pid === null ? undefined : labels.get(summary.pid);
    if (label !== undefined) {
      console.log('');
      console.log(formatProfile(summary, label, 20));
    }
  }
}

// ---------------------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  const runs = plan(options);
  const sides = options.sides;
  console.log(
    '# SendMessage and SendStreamingMessage: the platform and the a2a-js reference server, side by side (loopback)',
  );
  console.log(
    `sides: ${sides.join(', ')}; per run and side: ${options.seconds} s in ${options.slices} part(s)` +
      `${options.slices > 1 && sides.length > 1 ? ' taken in turns (reference, platform, platform, reference, …)' : ''}; warm-up: ${options.warmupSeconds} s at ` +
      `concurrency ${WARMUP_CONCURRENCY} per mode, binding and side; SendMessage levels: ${options.sendLevels.join(', ')}; ` +
      `SendStreamingMessage levels: ${options.streamLevels.join(', ') || 'none'}; bindings: ${options.bindings.join(', ')}` +
      Object.entries(options.platformEnv)
        .map(([key, value]) => `; platform ${key}=${value}`)
        .join(''),
  );
  let profileDir: string | null = null;
  if (options.cpuProfDir !== null) {
    // A folder of this run's own: the summary reads every profile in it.
    mkdirSync(options.cpuProfDir, { recursive: true });
    profileDir = mkdtempSync(join(options.cpuProfDir, 'run-'));
  }

  let db: TestDatabase | null = null;
  let platform: BenchPlatform | null = null;
  let reference: ReferenceServer | null = null;
  const senders: Sender[] = [];
  let stopping: Promise<void> | null = null;
  // Both servers stopped and the database dropped, whatever happened; once, also on SIGINT or SIGTERM.
  const stopAll = (): Promise<void> =>
    (stopping ??= (async () => {
      senders.forEach((sender) => sender.close());
      await platform
        ?.stop()
        .catch((error: unknown) => console.error(`stopping the platform: ${String(error)}`));
      await reference
        ?.stop()
        .catch((error: unknown) => console.error(`stopping the reference: ${String(error)}`));
      await db
        ?.drop()
        .catch((error: unknown) => console.error(`dropping the database: ${String(error)}`));
    })());
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      console.error(`${signal}: stopping both servers`);
      void stopAll().finally(() => process.exit(130));
    });
  }

  const labels = new Map<number, string>();
  let code: number;
  try {
    const servers: Server[] = [];
    if (sides.includes('reference')) {
      const started = performance.now();
      const installed = await installReferenceServer();
      reference = await ReferenceServer.start(
        installed.dir,
        profileDir === null ? [] : ['--cpu-prof', `--cpu-prof-dir=${profileDir}`],
      );
      const server = reference;
      servers.push({ side: 'reference', endpoints: server.endpoints, pids: () => [server.pid] });
      labels.set(server.pid, 'reference server');
      console.log(
        `reference: @a2a-js/sdk ${referenceSdkVersion(installed.dir)} in ${installed.dir} ` +
          `(${installed.installed ? 'npm ci done now' : 'installed by an earlier run'}), ready in ` +
          `${Math.round(performance.now() - started)} ms, pid ${server.pid}`,
      );
    }
    if (sides.includes('platform')) {
      const started = performance.now();
      db = await createTestDatabase('bench');
      platform = await BenchPlatform.start(db, profileDir, options.platformEnv);
      const bench = platform;
      servers.unshift({
        side: 'platform',
        endpoints: bench.endpoints,
        pids: () => [bench.pid, bench.workerPid],
      });
      labels.set(bench.pid, 'platform: standalone (ingress + task-service)');
      labels.set(bench.workerPid, 'platform: echo worker');
      console.log(
        `platform: standalone ready in ${Math.round(performance.now() - started)} ms ` +
          `(pid ${bench.pid}, echo worker pid ${bench.workerPid})`,
      );
    }
    printMachine(platform ? await platform.postgresVersion() : 'not used (reference only)');
    console.log(
      `load average at start: ${loadavg()
        .map((n) => n.toFixed(2))
        .join(' ')}`,
    );

    // One sender per side, mode and binding; each must succeed once before anything is measured.
    let platformQuietSince = 0;
    const senderOf = new Map<string, Sender>();
    const key = (side: Side, mode: Mode, binding: Binding): string => `${side} ${mode} ${binding}`;
    for (const server of servers) {
      for (const { mode, binding } of runs) {
        const name = key(server.side, mode, binding);
        if (senderOf.has(name)) {
          continue;
        }
        const sender = openSender(mode, binding, server.endpoints);
        senders.push(sender);
        senderOf.set(name, sender);
        const probe = await sender.send();
        if (probe !== null) {
          const log = server.side === 'platform' ? platform?.process.log : reference?.log;
          throw new Error(
            `the first ${name} request failed: ${probe}\n${String(log).slice(-4_000)}`,
          );
        }
        const warm = await runClosedLoop(
          sender.send,
          WARMUP_CONCURRENCY,
          options.warmupSeconds * 1_000,
        );
        console.log(`warm-up ${name}: ${warm.requests} ok, ${warm.errors} errors`);
      }
      if (server.side === 'platform') {
        platformQuietSince = performance.now();
      }
    }
    const senderFor = (side: Side, run: Run): Sender => {
      const sender = senderOf.get(key(side, run.mode, run.binding));
      if (!sender) {
        throw new Error(`no sender for ${side} ${runLabel(run)}`);
      }
      return sender;
    };

    // The idle platform commits too (dispatcher polls, lease sweeps): its rate is taken off every run.
    let counters: Counters | null = null;
    let idleRate = 0;
    if (platform) {
      const first = await platform.counters(platformQuietSince);
      counters = await platform.counters(first.at);
      idleRate = Math.max(0, counters.commits - first.commits) / (counters.at - first.at);
      console.log(
        `idle platform: ${fmt(idleRate * 1_000)} commits/s (background polls and sweeps)`,
      );
    }

    const results: RunResult[] = [];
    for (const run of runs) {
      const result: RunResult = { run, sides: new Map(), platform: null };
      const platformSeconds = { standalone: 0, worker: 0, postgres: 0 };
      let platformEnd = 0;
      for (const server of sliceOrder(servers, options.slices)) {
        const { measured, cpu } = await measure(
          server,
          senderFor(server.side, run),
          run,
          (options.seconds * 1_000) / options.slices,
          server.side === 'platform' ? platform : null,
        );
        result.sides.set(server.side, mergeMeasured(result.sides.get(server.side), measured));
        if (cpu) {
          const [before, after] = cpu;
          platformSeconds.standalone += cpuSecondsBetween(before.standalone, after.standalone);
          platformSeconds.worker += cpuSecondsBetween(before.worker, after.worker);
          platformSeconds.postgres += cpuSecondsBetween(before.postgres, after.postgres);
          platformEnd = performance.now();
        }
      }
      for (const [side, measured] of result.sides) {
        console.log(
          `${side}, ${runLabel(run)}: ${measured.load.requests} ok, ${measured.load.errors} errors, ` +
            `${fmt(perSecond(measured))}/s`,
        );
      }
      if (platform && counters && platformEnd > 0) {
        const next = await platform.counters(platformEnd);
        result.platform = {
          standaloneSeconds: platformSeconds.standalone,
          workerSeconds: platformSeconds.worker,
          postgresSeconds: platformSeconds.postgres,
          commits: next.commits - counters.commits - idleRate * (next.at - counters.at),
          events: next.events - counters.events,
        };
        counters = next;
      }
      results.push(result);
    }

    console.log('');
    console.log('## Side by side');
    printSideBySide(results);
    printPlatformDetail(results);
    printMachineLoad(results, options);
    console.log('');
    console.log(
      `Resident memory at the end (MiB): ${servers
        .flatMap((server) =>
          server.pids().map((pid) => `${labels.get(pid) ?? pid} ${fmt(rssMiB(pid), 0)}`),
        )
        .join(', ')}`,
    );
    printErrors(results);
    code = results.every((r) => [...r.sides.values()].every((m) => m.load.requests > 0)) ? 0 : 1;
  } finally {
    await stopAll();
  }
  if (profileDir !== null) {
    printProfiles(profileDir, labels);
  }
  return code;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    process.exit(1);
  },
);

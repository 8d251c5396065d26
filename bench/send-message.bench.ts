/**
 * `npm run bench`: the platform, a durable peer and the official a2a-js server side by side, under the same
 * client, load and levels, in one run.
 *
 * - The reference: `../shared/reference-server` (the `@a2a-js/sdk` server with its in-memory task store),
 *   copied to the OS temp dir, installed there (`npm ci`, reused while its package-lock is the same), started
 *   on free ports (`bench/reference-server.ts`).
 * - The durable peer: `../shared/durable-peer` (DBOS Transact, one workflow per message, durable on the same
 *   Postgres in a database of its own), installed the same way (`bench/durable-peer.ts`). It answers blocking
 *   `SendMessage` on JSON-RPC only, so it takes part in those runs only.
 * - The platform: a throw-away database, the standalone from `dist/` (ingress + task-service in one process,
 *   the example workers as child processes), default configuration; agent `echo` of the demo tenant.
 *
 * Both run for the whole bench. Each run (mode, binding, concurrency) sends `concurrency` clients in closed
 * loop, each request with a fresh `messageId`, to each side for `--seconds` in all, in `--slices` parts taken
 * in turns (reference, platform, platform, reference, …): the machine's speed drifts over a run on shared
 * hosts, and interleaved parts give both sides the same share of it.
 * Modes: blocking `SendMessage` (done when the answer holds a COMPLETED task) and `SendStreamingMessage`
 * (done when the server ends the stream after a COMPLETED status). Per run and side: requests/s, latency
 * percentiles, errors, CPU per request of the side's processes (/proc); for the two durable sides also, per
 * request, Postgres commits, rows written by table, WAL bytes and the CPU of their backends. Before the
 * runs: the disk's `pg_test_fsync` figure, and the idle platform's CPU. Options: `--seconds N` (per run and side, default 10),
 * `--slices N` (parts per run and side, default 2; 1: each side once, the platform first),
 * `--warmup N` (seconds per mode, binding and side, default 3), `--rewarm N` (seconds of unmeasured load at the
 * run's own level given to each side right before its first part of each run, default 3; 0: none), `--idle N` (seconds the idle
 * platform's CPU is measured over, default 60), `--settled N` (seconds of a second idle reading right after the first, by when
 * the collections that follow the platform's start and its warm-up are usually over; default 0: none),
 * `--levels 1,16,64` (SendMessage),
 * `--stream-levels 16,64` (SendStreamingMessage; `none` to skip), `--bindings jsonrpc,rest,grpc` (default
 * jsonrpc), `--only platform,peer,reference` (the sides to run, default all three), `--cpu-prof DIR` (profiles of every process, summarised at the end),
 * `--platform-env KEY=VALUE` (repeatable: a setting of the standalone, to compare settings in alternated runs).
 */
import { createTestDatabase, type TestDatabase } from '@lib/testing';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import { createPeerDatabase, DEFAULT_DURABLE_PEER_SOURCE, startDurablePeer } from './durable-peer';
import {
  installedVersion,
  installReferenceServer,
  installSharedServer,
  referenceSdkVersion,
  startReferenceServer,
} from './reference-server';
import {
  attempted,
  BINDINGS,
  completedPerSecond,
  mergeLoads,
  openSender,
  runClosedLoop,
  type A2aEndpoints,
  type Binding,
  type LoadResult,
  type Mode,
  type Sender,
} from './support/a2a-load';
import { BenchPlatform } from './support/bench-platform';
import { formatProfile, readProfiles } from './support/cpu-profile';
import { DatabaseStats, rowsBetween, type DatabaseCounters } from './support/database-stats';
import { measureFsync } from './support/disk-fsync';
import { ascending, fmt, percentile, printMachine, table } from './support/figures';
import {
  CLOCK_TICKS,
  commandLine,
  cpuSecondsBetween,
  machineBusyTicks,
  machineStealTicks,
  rssMiB,
  ticksByPid,
} from './support/proc-stats';
import type { ServerProcess } from './support/server-process';

const SIDES = ['platform', 'peer', 'reference'] as const;
type Side = (typeof SIDES)[number];
/** The sides that keep what they answer in Postgres. */
type DurableSideName = Extract<Side, 'platform' | 'peer'>;
/** What the durable peer answers: blocking SendMessage on JSON-RPC. */
const peerTakesPart = (run: Run): boolean => run.mode === 'send' && run.binding === 'jsonrpc';

interface Options {
  seconds: number;
  /** Parts of each run per side, taken in turns with the other side. */
  slices: number;
  warmupSeconds: number;
  /**
   * Seconds of load at a run's own level that each side gets, unmeasured, before its first part: a process that
   * idled (the idle reading, or the runs of the other sides) is slower for its first seconds back under load.
   */
  rewarmSeconds: number;
  /** Seconds the idle platform's CPU is measured over, after the idle commit rates are read. */
  idleSeconds: number;
  /** Seconds of a second idle reading right after the first (0: none). */
  settledSeconds: number;
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

/** What a durable side's processes and database did in one run. */
interface DurableExtra {
  /** CPU seconds of each process group: the platform's standalone and echo worker, the peer's process, and
   *  each side's Postgres backends (`postgres`). */
  cpuSeconds: Record<string, number>;
  /**
   * The requests the database's counters (commits, rows, events) hold: the run's and those of its warm-up;
   * the other figures are read around the run's own parts.
   */
  counted: number;
  commits: number;
  /** Rows written, by table. */
  rows: Map<string, number>;
  /** WAL written by the cluster while the side's load ran. */
  walBytes: number;
  /** Rows appended to events.messages (the platform only). */
  events: number | null;
}

interface RunResult {
  run: Run;
  sides: Map<Side, Measured>;
  durable: Map<DurableSideName, DurableExtra>;
}

const DEFAULTS: Omit<Options, 'cpuProfDir' | 'platformEnv'> = {
  seconds: 10,
  slices: 2,
  warmupSeconds: 3,
  rewarmSeconds: 3,
  idleSeconds: 60,
  settledSeconds: 0,
  sendLevels: [1, 16, 64],
  streamLevels: [16, 64],
  bindings: ['jsonrpc'],
  sides: [...SIDES],
};
const WARMUP_CONCURRENCY = 16;
const USAGE =
  'options: --seconds N, --slices N, --warmup N, --rewarm N, --idle N, --settled N, --levels 1,16,64, ' +
  '--stream-levels 16,64|none, ' +
  `--bindings ${BINDINGS.join(',')}, --only ${SIDES.join(',')}, --cpu-prof DIR, --platform-env KEY=VALUE`;

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
      case '--rewarm':
        options.rewarmSeconds = value === '0' ? 0 : positive();
        break;
      case '--idle':
        options.idleSeconds = positive();
        break;
      case '--settled':
        options.settledSeconds = value === '0' ? 0 : positive();
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
      case '--only': {
        const names = value.split(',');
        if (!names.every((name) => oneOf(SIDES, name))) {
          throw bad(`a comma-separated list of ${SIDES.join(', ')}`);
        }
        options.sides = SIDES.filter((side) => names.includes(side));
        break;
      }
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

/** CPU ticks per pid of each process group of a side. */
type GroupTicks = Record<string, Map<number, number>>;

/** A side whose answers are durable in a Postgres database of its own: what the bench samples of it. */
interface DurableSide {
  stats: DatabaseStats;
  /** CPU ticks of each of its process groups; its Postgres backends are `postgres`. */
  sampleCpu(): Promise<GroupTicks>;
}

/** A durable side's counters; `events` is the platform's only. */
type CountersRead = DatabaseCounters & { events: number | null };

/** One side of the bench: where to send, whose CPU to count, and its database (null: the in-memory one). */
interface Server {
  side: Side;
  endpoints: A2aEndpoints;
  pids: () => number[];
  durable: DurableSide | null;
}

/**
 * The load of `run` on `server`, with the CPU of the side's processes, the bench client and the machine;
 * for a durable side, also its process groups' CPU samples before and after, and the WAL written meanwhile.
 */
async function measure(
  server: Server,
  sender: Sender,
  run: Run,
  durationMs: number,
): Promise<{ measured: Measured; cpu: [GroupTicks, GroupTicks] | null; walBytes: number | null }> {
  const durable = server.durable;
  const loadAverageBefore = loadavg()[0] ?? 0;
  const groupsBefore = await durable?.sampleCpu();
  const walBefore = await durable?.stats.walBytes();
  const before = { own: ticksByPid(server.pids()), client: ticksByPid([process.pid]) };
  const machineBefore = machineBusyTicks();
  const stealBefore = machineStealTicks();
  const load = await runClosedLoop(sender.send, run.concurrency, durationMs);
  const machineAfter = machineBusyTicks();
  const stealAfter = machineStealTicks();
  const after = { own: ticksByPid(server.pids()), client: ticksByPid([process.pid]) };
  const walAfter = await durable?.stats.walBytes();
  const groupsAfter = await durable?.sampleCpu();
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
    cpu: groupsBefore && groupsAfter ? [groupsBefore, groupsAfter] : null,
    walBytes: walBefore !== undefined && walAfter !== undefined ? walAfter - walBefore : null,
  };
}

// ---------------------------------------------------------------------------------------------------------
// Printing

const perSecond = (m: Measured): number => completedPerSecond(m.load);
const attempts = (m: Measured): number => attempted(m.load);
const perRequest = (value: number, m: Measured): number =>
  attempts(m) > 0 ? value / attempts(m) : Number.NaN;

/** a / b with about three significant digits; `-` when either is missing. */
function ratio(a: number | undefined, b: number | undefined): string {
  if (a === undefined || b === undefined || !(b > 0)) {
    return '-';
  }
  const r = a / b;
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
        fmt(of('peer'), digits),
        fmt(of('platform'), digits),
        figure === 'errors' ? '-' : ratio(of('platform'), of('peer')),
        figure === 'errors' ? '-' : ratio(of('platform'), of('reference')),
      ];
    });
  });
  console.log(
    table(
      [
        'run',
        'figure',
        'reference (in memory)',
        'durable peer',
        'platform',
        'platform / peer',
        'platform / reference',
      ],
      rows,
      [0, 1],
    ),
  );
  console.log(
    'requests/s: requests that ended COMPLETED over the wall time of the run (in-flight ones are let finish);\n' +
      'latency percentiles over those; errors: anything else (printed by kind below). CPU ms/request: user +\n' +
      "system time of the side's processes (/proc) over all requests sent, without Postgres: the platform's\n" +
      "standalone process and its echo worker child, the peer's and the reference server's one process (both\n" +
      "durable sides' Postgres figures are in the next table). Ratio > 1: the platform has more of it. The\n" +
      'durable peer answers blocking SendMessage on JSON-RPC only.',
  );
}

/** The CPU of a durable side's process groups and its backends, in ms per request. */
function cpuColumns(side: DurableSideName, extra: DurableExtra, m: Measured): string[] {
  const ms = (seconds: number | undefined): string =>
    fmt(seconds === undefined ? undefined : perRequest(1_000 * seconds, m), 2);
  const all = Object.values(extra.cpuSeconds).reduce((sum, n) => sum + n, 0);
  const own =
    side === 'platform'
      ? `${ms(extra.cpuSeconds['standalone'])} + ${ms(extra.cpuSeconds['worker'])}`
      : ms(extra.cpuSeconds['peer']);
  return [own, ms(extra.cpuSeconds['postgres']), ms(all)];
}

function printDurableDetail(results: RunResult[]): void {
  const rows = results.flatMap(({ run, sides, durable }) =>
    [...durable].flatMap(([side, extra]) => {
      const m = sides.get(side);
      if (!m) {
        return [];
      }
      const rowsWritten = [...extra.rows.values()].reduce((sum, n) => sum + n, 0);
      return [
        [
          runLabel(run),
          side,
          fmt(extra.commits / extra.counted, 2),
          fmt(rowsWritten / extra.counted, 1),
          fmt(perRequest(extra.walBytes, m), 0),
          extra.events === null ? '-' : fmt(extra.events / extra.counted, 2),
          ...cpuColumns(side, extra, m),
        ],
      ];
    }),
  );
  if (rows.length === 0) {
    return;
  }
  console.log('');
  console.log('## Durable sides: Postgres and CPU per request');
  console.log(
    table(
      [
        'run',
        'side',
        'PG commits',
        'rows written',
        'WAL bytes',
        'events',
        'process CPU ms',
        'PG backends CPU ms',
        'all CPU ms',
      ],
      rows,
      [0, 1],
    ),
  );
  console.log(
    "PG commits: xact_commit of the side's database (pg_stat_database) over the run and its warm-up, read 11 s\n" +
      "after its load so that every backend has published its counters, less the idle side's rate and the bench's\n" +
      'own reads, over the requests of both; a statement outside an explicit transaction counts as one. rows\n' +
      "written: rows inserted, updated or deleted in the side's tables (pg_stat_user_tables; by table below), the\n" +
      "same way. WAL bytes: pg_current_wal_lsn() moved while the side's load ran (the cluster's WAL: anything\n" +
      'else written meanwhile counts too). events: rows appended to events.messages, the same way. process\n' +
      "CPU: the platform's standalone + echo worker, the peer's process. PG backends: the backends connected to\n" +
      "the side's database. all: both together. WAL bytes and CPU: over the run's parts only.",
  );
}

/** The rows each durable side wrote per request, by table, over all its runs. */
function printRowsByTable(results: RunResult[]): void {
  for (const side of ['platform', 'peer'] as const) {
    const rows = new Map<string, number>();
    let requests = 0;
    for (const { durable } of results) {
      const extra = durable.get(side);
      if (!extra) {
        continue;
      }
      requests += extra.counted;
      for (const [name, n] of extra.rows) {
        rows.set(name, (rows.get(name) ?? 0) + n);
      }
    }
    if (requests === 0) {
      continue;
    }
    console.log('');
    console.log(`## Rows written per request by table: ${side} (all its runs)`);
    console.log(
      table(
        ['table', 'rows / request'],
        [...rows].sort((a, b) => b[1] - a[1]).map(([name, n]) => [name, fmt(n / requests, 2)]),
        [0],
      ),
    );
  }
}

/** Busy time of other jobs above which a run's figures say more about the machine than about the servers. */
const BUSY_MACHINE_PERCENT = 50;

function printMachineLoad(results: RunResult[], options: Options): void {
  let busyRuns = 0;
  const rows = results.flatMap(({ run, sides, durable }) =>
    options.sides.flatMap((side) => {
      const m = sides.get(side);
      if (!m) {
        return [];
      }
      const percent = (cpuSeconds: number): number =>
        (100 * cpuSeconds) / (m.load.elapsedMs / 1_000);
      const postgres =
        side === 'reference' ? null : (durable.get(side)?.cpuSeconds['postgres'] ?? null);
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

/**
 * The idle platform's CPU over `seconds`, in all and by process: the standalone, and each example worker by
 * the agent it serves (the last word of its command line).
 */
async function printIdleCpu(
  platform: BenchPlatform,
  seconds: number,
  quietSince: number,
): Promise<void> {
  const pids = platform.allPids;
  const before = ticksByPid(pids);
  const from = performance.now();
  await delay(seconds * 1_000);
  const after = ticksByPid(pids);
  const elapsed = (performance.now() - from) / 1_000;
  const percent = (ticks: number): string => fmt((100 * ticks) / CLOCK_TICKS / elapsed, 2);
  const parts = pids.map((pid) => {
    const ticks = (after.get(pid) ?? 0) - (before.get(pid) ?? 0);
    const name =
      pid === platform.pid ? 'standalone' : (commandLine(pid).split(' ').pop() ?? String(pid));
    return `${name} ${percent(ticks)}`;
  });
  console.log(
    `idle platform CPU: ${fmt((100 * cpuSecondsBetween(before, after)) / elapsed, 2)} % of one core over ` +
      `${fmt(elapsed, 0)} s, from ${fmt((from - quietSince) / 1_000, 0)} s after its last request ` +
      `(by process, %: ${parts.join(', ')})`,
  );
}

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
      `concurrency ${WARMUP_CONCURRENCY} per mode, binding and side, and ${options.rewarmSeconds} s at each run's level before the side's first part of it; SendMessage levels: ${options.sendLevels.join(', ')}; ` +
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
  let reference: ServerProcess | null = null;
  let peer: ServerProcess | null = null;
  let peerDb: Pick<TestDatabase, 'url' | 'drop'> | null = null;
  let peerStats: DatabaseStats | null = null;
  const senders: Sender[] = [];
  let stopping: Promise<void> | null = null;
  // Every server stopped and every database dropped, whatever happened; once, also on SIGINT or SIGTERM.
  const stopAll = (): Promise<void> =>
    (stopping ??= (async () => {
      senders.forEach((sender) => sender.close());
      const report =
        (what: string) =>
        (error: unknown): void =>
          console.error(`stopping ${what}: ${String(error)}`);
      await platform?.stop().catch(report('the platform'));
      await reference?.stop().catch(report('the reference'));
      await peerStats?.close();
      await peer?.stop().catch(report('the durable peer'));
      await db?.drop().catch(report("the platform's database"));
      await peerDb?.drop().catch(report("the peer's database"));
    })());
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      console.error(`${signal}: stopping every server`);
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
      const { process: server, endpoints } = await startReferenceServer(
        installed.dir,
        profileDir === null ? [] : ['--cpu-prof', `--cpu-prof-dir=${profileDir}`],
      );
      reference = server;
      servers.push({
        side: 'reference',
        endpoints,
        pids: () => [server.pid],
        durable: null,
      });
      labels.set(server.pid, 'reference server');
      console.log(
        `reference: @a2a-js/sdk ${referenceSdkVersion(installed.dir)} in ${installed.dir} ` +
          `(${installed.installed ? 'npm ci done now' : 'installed by an earlier run'}), ready in ` +
          `${Math.round(performance.now() - started)} ms, pid ${server.pid}`,
      );
    }
    if (sides.includes('peer')) {
      const started = performance.now();
      const installed = await installSharedServer(DEFAULT_DURABLE_PEER_SOURCE, 'durable-peer');
      peerDb = await createPeerDatabase();
      const { process: server, endpoints } = await startDurablePeer(
        installed.dir,
        peerDb.url,
        profileDir === null ? [] : ['--cpu-prof', `--cpu-prof-dir=${profileDir}`],
      );
      peer = server;
      const stats = (peerStats = await DatabaseStats.connect(peerDb.url));
      servers.unshift({
        side: 'peer',
        endpoints,
        pids: () => [server.pid],
        durable: {
          stats,
          sampleCpu: async () => ({
            peer: ticksByPid([server.pid]),
            postgres: ticksByPid(await stats.backendPids()),
          }),
        },
      });
      labels.set(server.pid, 'durable peer');
      console.log(
        `durable peer: @dbos-inc/dbos-sdk ${installedVersion(installed.dir, '@dbos-inc/dbos-sdk')} in ` +
          `${installed.dir} (${installed.installed ? 'npm ci done now' : 'installed by an earlier run'}), ` +
          `ready in ${Math.round(performance.now() - started)} ms, pid ${server.pid}`,
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
        durable: {
          stats: bench.stats,
          sampleCpu: async () => ({ ...(await bench.sampleCpu()) }),
        },
      });
      labels.set(bench.pid, 'platform: standalone (ingress + task-service)');
      labels.set(bench.workerPid, 'platform: echo worker');
      console.log(
        `platform: standalone ready in ${Math.round(performance.now() - started)} ms ` +
          `(pid ${bench.pid}, echo worker pid ${bench.workerPid})`,
      );
    }
    const anyStats = platform?.stats ?? peerStats;
    printMachine(
      anyStats
        ? ((await anyStats.query<{ version: string }>('SELECT version()'))[0]?.version ?? '?')
        : 'not used (reference only)',
    );
    console.log(
      `load average at start: ${loadavg()
        .map((n) => n.toFixed(2))
        .join(' ')}`,
    );
    if (anyStats) {
      const [row] = await anyStats.query<{ data_directory: string }>('SHOW data_directory');
      const fsync = await measureFsync(row?.data_directory ?? '', tmpdir());
      console.log(
        'error' in fsync
          ? `disk: pg_test_fsync not measured (${fsync.error})`
          : `disk: pg_test_fsync in ${fsync.dir}: fdatasync of one 8 kB write ${fmt(fsync.fdatasyncPerSecond, 0)} ` +
              `ops/s (${fmt(1_000 / fsync.fdatasyncPerSecond, 2)} ms each)`,
      );
    }

    // One sender per side, mode and binding; each must succeed once before anything is measured.
    const quietSince = new Map<Side, number>();
    const senderOf = new Map<string, Sender>();
    const key = (side: Side, mode: Mode, binding: Binding): string => `${side} ${mode} ${binding}`;
    for (const server of servers) {
      for (const run of runs) {
        const { mode, binding } = run;
        const name = key(server.side, mode, binding);
        if (senderOf.has(name) || (server.side === 'peer' && !peerTakesPart(run))) {
          continue;
        }
        const sender = openSender(mode, binding, server.endpoints);
        senders.push(sender);
        senderOf.set(name, sender);
        const probe = await sender.send();
        if (probe !== null) {
          const log =
            server.side === 'platform'
              ? platform?.process.log
              : server.side === 'peer'
                ? peer?.log
                : reference?.log;
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
      quietSince.set(server.side, performance.now());
    }
    const senderFor = (side: Side, run: Run): Sender => {
      const sender = senderOf.get(key(side, run.mode, run.binding));
      if (!sender) {
        throw new Error(`no sender for ${side} ${runLabel(run)}`);
      }
      return sender;
    };

    // An idle durable side commits too (the platform's dispatcher polls and lease sweeps): its rate is taken
    // off every run. Then the idle platform's CPU: the standalone and every example worker it started, over
    // `--idle` seconds that begin once the commit rates are read (at least 11 s after the last request, so
    // that the garbage collection and compilation a burst of load leaves behind are not counted as idling).
    const durableServers = servers.flatMap((server) =>
      server.durable && server.side !== 'reference'
        ? [{ side: server.side, durable: server.durable }]
        : [],
    );
    const counterRead = async (side: DurableSideName, since: number): Promise<CountersRead> =>
      side === 'platform' && platform
        ? platform.counters(since)
        : { ...(await (peerStats as DatabaseStats).counters(since)), events: null };
    const idle = await Promise.all(
      durableServers.map(async ({ side }) => {
        const first = await counterRead(side, quietSince.get(side) ?? 0);
        const second = await counterRead(side, first.at);
        return {
          side,
          counters: second,
          rate: Math.max(0, second.commits - first.commits) / (second.at - first.at),
        };
      }),
    );
    const counters = new Map(idle.map(({ side, counters: c }) => [side, c]));
    const idleRate = new Map(idle.map(({ side, rate }) => [side, rate]));
    for (const { side, rate } of idle) {
      console.log(`idle ${side}: ${fmt(rate * 1_000)} commits/s (background polls and sweeps)`);
    }
    if (platform) {
      await printIdleCpu(platform, options.idleSeconds, quietSince.get('platform') ?? 0);
      // V8's memory reducer collects a process's whole heap a while after its start and after a burst of
      // load: the first window may hold the standalone's collection or not. The second shows the settled
      // platform (docs/benchmarks.md, "The idle platform").
      if (options.settledSeconds > 0) {
        await printIdleCpu(platform, options.settledSeconds, quietSince.get('platform') ?? 0);
      }
    }

    const results: RunResult[] = [];
    for (const run of runs) {
      const result: RunResult = { run, sides: new Map(), durable: new Map() };
      const taking = servers.filter((server) => server.side !== 'peer' || peerTakesPart(run));
      // Each side's warm-up comes right before its first part. The database's counters are read only between
      // runs (a read waits for every backend to publish its counts): those of a run include what its warm-up
      // wrote, and are shared out over both.
      const warmedUp = new Map<Side, number>();
      const spent = new Map<
        DurableSideName,
        { cpu: Record<string, number>; wal: number; end: number }
      >();
      for (const server of sliceOrder(taking, options.slices)) {
        if (!warmedUp.has(server.side)) {
          const warm =
            options.rewarmSeconds > 0
              ? await runClosedLoop(
                  senderFor(server.side, run).send,
                  run.concurrency,
                  options.rewarmSeconds * 1_000,
                )
              : null;
          warmedUp.set(server.side, warm ? attempted(warm) : 0);
        }
        const { measured, cpu, walBytes } = await measure(
          server,
          senderFor(server.side, run),
          run,
          (options.seconds * 1_000) / options.slices,
        );
        result.sides.set(server.side, mergeMeasured(result.sides.get(server.side), measured));
        if (server.side !== 'reference' && cpu) {
          const [before, after] = cpu;
          const sum = spent.get(server.side) ?? { cpu: {}, wal: 0, end: 0 };
          for (const [group, ticks] of Object.entries(after)) {
            sum.cpu[group] =
              (sum.cpu[group] ?? 0) +
              cpuSecondsBetween(before[group] ?? new Map<number, number>(), ticks);
          }
          sum.wal += walBytes ?? Number.NaN;
          sum.end = performance.now();
          spent.set(server.side, sum);
        }
      }
      for (const [side, measured] of result.sides) {
        console.log(
          `${side}, ${runLabel(run)}: ${measured.load.requests} ok, ${measured.load.errors} errors, ` +
            `${fmt(perSecond(measured))}/s`,
        );
      }
      await Promise.all(
        [...spent].map(async ([side, sum]) => {
          const previous = counters.get(side);
          if (!previous) {
            return;
          }
          const next = await counterRead(side, sum.end);
          const measured = result.sides.get(side);
          result.durable.set(side, {
            counted: (measured ? attempts(measured) : 0) + (warmedUp.get(side) ?? 0),
            cpuSeconds: sum.cpu,
            commits:
              next.commits - previous.commits - (idleRate.get(side) ?? 0) * (next.at - previous.at),
            rows: rowsBetween(previous, next),
            walBytes: sum.wal,
            events:
              next.events === null || previous.events === null
                ? null
                : next.events - previous.events,
          });
          counters.set(side, next);
        }),
      );
      results.push(result);
    }

    console.log('');
    console.log('## Side by side');
    printSideBySide(results);
    printDurableDetail(results);
    printRowsByTable(results);
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

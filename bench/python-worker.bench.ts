/**
 * `npm run bench:python` (= `npm run build && node dist/bench/python-worker.bench.js`; issue 33): the echo agent
 * written with the Python worker SDK beside the TypeScript one, on one platform, under the send load of
 * `npm run bench`.
 *
 * - The platform: the standalone from `dist/` on a throw-away database, default configuration. Its child
 *   process serving `demo/echo` is the TypeScript echo worker (`apps/agents`, 256 tasks at once).
 * - The Python echo worker: `demo/py-echo`, defined and given a worker credential through the admin API, served
 *   by `python3 sdks/python/examples/echo.py` with `WORKER_CONCURRENCY=256` (the TypeScript worker's room),
 *   started from the repository root (its `.python-version` selects the system Python).
 *
 * Each level sends blocking JSON-RPC `SendMessage` from `concurrency` clients in closed loop, each request with
 * a fresh `messageId` (done when the answer holds a COMPLETED task), to each agent for `--seconds` in all, in
 * two parts taken in turns (TypeScript, Python, Python, TypeScript), after a warm-up of `--warmup` seconds at
 * 16 in flight per agent. Prints per level and agent: requests/s, p50 and p99 latency, errors, the worker's CPU
 * per task (user + system time of its process, /proc/<pid>/stat, over the requests sent) and the standalone's
 * CPU per request; and the ratio Python / TypeScript of each; per part, how busy the whole machine was (other
 * jobs slow both agents, and the one whose parts they overlap more). Options: `--seconds N` (per level and agent,
 * default 10), `--warmup N` (default 3), `--levels 1,16,64`. Nothing is asserted.
 */
import {
  createTestDatabase,
  startPythonWorker,
  startStandalone,
  type PlatformProcess,
  type TestDatabase,
} from '@lib/testing';
import { randomUUID } from 'node:crypto';
import { readlinkSync } from 'node:fs';
import {
  attempted,
  completedPerSecond,
  mergeLoads,
  openSender,
  runClosedLoop,
  type A2aEndpoints,
  type LoadResult,
  type Sender,
} from './support/a2a-load';
import { ascending, fmt, percentile, printMachine, table } from './support/figures';
import {
  childPids,
  CLOCK_TICKS,
  cpuSecondsBetween,
  machineBusyTicks,
  ticksByPid,
} from './support/proc-stats';

const ADMIN_TOKEN = `bench-${randomUUID()}`;
const TENANT = 'demo';
const PYTHON_AGENT = 'py-echo';
/** Tasks each echo worker runs at once: the TypeScript example's own default, given to the Python one. */
const WORKER_CONCURRENCY = 256;
const WARMUP_CONCURRENCY = 16;
type Side = 'TypeScript' | 'Python';

interface Options {
  seconds: number;
  warmupSeconds: number;
  levels: number[];
}

const USAGE = 'options: --seconds N, --warmup N, --levels 1,16,64';

function parseOptions(argv: readonly string[]): Options {
  const options: Options = { seconds: 10, warmupSeconds: 3, levels: [1, 16, 64] };
  for (let i = 0; i < argv.length; i += 2) {
    const flag = argv[i] ?? '';
    const value = argv[i + 1] ?? '';
    const n = Number(value);
    switch (flag) {
      case '--seconds':
      case '--warmup':
        if (!Number.isFinite(n) || n <= 0) {
          throw new Error(`${flag} needs a positive number, got ${value}\n${USAGE}`);
        }
        options[flag === '--seconds' ? 'seconds' : 'warmupSeconds'] = n;
        break;
      case '--levels': {
        const levels = value.split(',').map(Number);
        if (!levels.every((level) => Number.isInteger(level) && level > 0)) {
          throw new Error(`--levels needs a comma-separated list of positive integers\n${USAGE}`);
        }
        options.levels = levels;
        break;
      }
      default:
        throw new Error(`unknown argument ${flag}\n${USAGE}`);
    }
  }
  return options;
}

/** One agent under load: where to send, and the pid of the worker that serves it. */
interface Target {
  side: Side;
  sender: Sender;
  workerPid: number;
}

/** What one agent's parts of a level measured. */
interface Measured {
  load: LoadResult;
  workerSeconds: number;
  standaloneSeconds: number;
}

/** One part of a level, with how busy the whole machine was meanwhile (null off Linux). */
interface Part extends Measured {
  machineBusySeconds: number | null;
}

function endpointsOf(baseUrl: string, grpcTarget: string, agent: string): A2aEndpoints {
  return {
    jsonrpcUrl: `${baseUrl}/agents/${TENANT}/${agent}/jsonrpc`,
    restBaseUrl: `${baseUrl}/agents/${TENANT}/${agent}/rest`,
    grpcTarget,
    grpcTenant: `${TENANT}/${agent}`,
  };
}

/** Defines the Python echo agent through the admin API; returns the secret of a worker credential for it. */
async function definePythonAgent(baseUrl: string): Promise<string> {
  const call = async (
    method: string,
    path: string,
    body: unknown,
  ): Promise<Record<string, unknown>> => {
    const response = await fetch(
      `${baseUrl}/admin/v1/tenants/${TENANT}/agents/${PYTHON_AGENT}${path}`,
      {
        method,
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      },
    );
    const text = await response.text();
    if (response.status !== 201) {
      throw new Error(`${method} ${path || '/'} answered ${response.status}: ${text}`);
    }
    return JSON.parse(text) as Record<string, unknown>;
  };
  await call('PUT', '', {
    card: {
      name: 'Python echo',
      description: 'The echo example of the Python worker SDK.',
      version: '1.0.0',
    },
  });
  const issued = await call('POST', '/worker-credentials', { label: 'bench' });
  return String(issued['secret']);
}

/** The load of `concurrency` in flight on `target` for `durationMs`, with the CPU its worker and the standalone used. */
async function measure(
  target: Target,
  standalonePid: number,
  concurrency: number,
  durationMs: number,
): Promise<Part> {
  const sample = () => ({
    worker: ticksByPid([target.workerPid]),
    standalone: ticksByPid([standalonePid]),
    machine: machineBusyTicks(),
  });
  const before = sample();
  const load = await runClosedLoop(target.sender.send, concurrency, durationMs);
  const after = sample();
  return {
    load,
    workerSeconds: cpuSecondsBetween(before.worker, after.worker),
    standaloneSeconds: cpuSecondsBetween(before.standalone, after.standalone),
    machineBusySeconds:
      before.machine === null || after.machine === null
        ? null
        : (after.machine - before.machine) / CLOCK_TICKS,
  };
}

const attempts = (m: Measured): number => attempted(m.load);
const perRequestMs = (seconds: number, m: Measured): number =>
  attempts(m) > 0 ? (1_000 * seconds) / attempts(m) : Number.NaN;

function ratio(python: number | undefined, typescript: number | undefined): string {
  return python === undefined || typescript === undefined || !(typescript > 0)
    ? '-'
    : fmt(python / typescript, 2);
}

function printSideBySide(
  levels: readonly number[],
  results: Map<number, Map<Side, Measured>>,
): void {
  const figures: [string, (m: Measured, sorted: number[]) => number, number][] = [
    ['requests/s', (m) => completedPerSecond(m.load), 1],
    ['p50 ms', (_, sorted) => percentile(sorted, 50), 1],
    ['p99 ms', (_, sorted) => percentile(sorted, 99), 1],
    ['errors', (m) => m.load.errors, 0],
    ['worker CPU ms/task', (m) => perRequestMs(m.workerSeconds, m), 3],
    ['standalone CPU ms/request', (m) => perRequestMs(m.standaloneSeconds, m), 2],
  ];
  const rows = levels.flatMap((level) => {
    const sides = results.get(level) ?? new Map<Side, Measured>();
    const sorted = new Map([...sides].map(([side, m]) => [side, ascending(m.load.latenciesMs)]));
    return figures.map(([figure, value, digits], i) => {
      const of = (side: Side): number | undefined => {
        const m = sides.get(side);
        return m && value(m, sorted.get(side) ?? []);
      };
      return [
        i === 0 ? String(level) : '',
        figure,
        fmt(of('TypeScript'), digits),
        fmt(of('Python'), digits),
        figure === 'errors' ? '-' : ratio(of('Python'), of('TypeScript')),
      ];
    });
  });
  console.log('');
  console.log('## Side by side (SendMessage, JSON-RPC)');
  console.log(
    table(['in flight', 'figure', 'TypeScript', 'Python', 'Python / TypeScript'], rows, [1]),
  );
  console.log(
    'requests/s: requests that ended COMPLETED over the wall time of the level; latency percentiles over those;\n' +
      "errors: anything else. worker CPU ms/task: user + system time of the agent's worker process (/proc) over\n" +
      'all requests sent; standalone CPU ms/request: the same of the platform process (ingress + task-service),\n' +
      'which serves both agents the same way. Ratio > 1: the Python worker has more of it.',
  );
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  console.log(
    '# SendMessage to echo: a worker of the Python SDK beside the TypeScript one (one platform, loopback)',
  );
  console.log(
    `per level and agent: ${options.seconds} s in 2 parts taken in turns (TypeScript, Python, Python, ` +
      `TypeScript); warm-up: ${options.warmupSeconds} s at ${WARMUP_CONCURRENCY} in flight per agent; levels: ` +
      options.levels.join(', '),
  );
  let db: TestDatabase | null = null;
  let platform: PlatformProcess | null = null;
  let python: PlatformProcess | null = null;
  const targets: Target[] = [];
  try {
    db = await createTestDatabase('bench_python_worker');
    const started = await startStandalone({
      POSTGRES_URL: db.url,
      ADMIN_BOOTSTRAP_TOKEN: ADMIN_TOKEN,
    });
    platform = started.process;
    const standalonePid = platform.pid ?? 0;
    const [typescriptPid] = childPids(standalonePid, 'echo');
    if (typescriptPid === undefined) {
      throw new Error(`no echo worker child of the standalone (pid ${standalonePid}) in /proc`);
    }
    const secret = await definePythonAgent(started.baseUrl);
    python = await startPythonWorker('echo', started.workerTarget, secret, {
      WORKER_CONCURRENCY: String(WORKER_CONCURRENCY),
    });
    const pythonPid = python.pid ?? 0;
    console.log(
      `TypeScript echo: ${TENANT}/echo, worker pid ${typescriptPid} (node dist/apps/agents/src/main.js echo, a child of the standalone pid ${standalonePid})`,
    );
    console.log(
      `Python echo: ${TENANT}/${PYTHON_AGENT}, worker pid ${pythonPid} (${readlinkSync(`/proc/${pythonPid}/exe`)} ` +
        `sdks/python/examples/echo.py, WORKER_CONCURRENCY=${WORKER_CONCURRENCY})`,
    );
    const endpoints = (agent: string) => endpointsOf(started.baseUrl, started.grpcTarget, agent);
    targets.push(
      {
        side: 'TypeScript',
        sender: openSender('send', 'jsonrpc', endpoints('echo')),
        workerPid: typescriptPid,
      },
      {
        side: 'Python',
        sender: openSender('send', 'jsonrpc', endpoints(PYTHON_AGENT)),
        workerPid: pythonPid,
      },
    );
    const version = await db.pool.query<{ server_version: string }>('SHOW server_version');
    printMachine(version.rows[0]?.server_version ?? 'unknown');

    for (const target of targets) {
      await runClosedLoop(target.sender.send, WARMUP_CONCURRENCY, options.warmupSeconds * 1_000);
    }
    const results = new Map<number, Map<Side, Measured>>();
    const partMs = (options.seconds * 1_000) / 2;
    const turns = [...targets, ...[...targets].reverse()];
    console.log('');
    for (const level of options.levels) {
      const sides = new Map<Side, Measured>();
      for (const target of turns) {
        const part = await measure(target, standalonePid, level, partMs);
        const earlier = sides.get(target.side);
        sides.set(
          target.side,
          earlier
            ? {
                load: mergeLoads(earlier.load, part.load),
                workerSeconds: earlier.workerSeconds + part.workerSeconds,
                standaloneSeconds: earlier.standaloneSeconds + part.standaloneSeconds,
              }
            : part,
        );
        const busy =
          part.machineBusySeconds === null
            ? '-'
            : fmt((100 * part.machineBusySeconds) / (part.load.elapsedMs / 1_000), 0);
        console.log(
          `${level} in flight, ${target.side}: ${part.load.requests} requests, ${part.load.errors} errors, ` +
            `whole machine ${busy} % busy (100 % = one core)`,
        );
      }
      results.set(level, sides);
    }
    printSideBySide(options.levels, results);
    const errors = [...results].flatMap(([level, sides]) =>
      [...sides].flatMap(([side, m]) =>
        [...m.load.errorSamples].map(([what, n]) => `${side}, ${level} in flight: ${n} x ${what}`),
      ),
    );
    if (errors.length > 0) {
      console.log('');
      console.log('## Errors');
      errors.forEach((line) => console.log(line));
    }
    return [...results.values()].every((sides) =>
      [...sides.values()].every((m) => m.load.requests > 0),
    )
      ? 0
      : 1;
  } finally {
    targets.forEach((target) => target.sender.close());
    await python?.stop();
    await platform?.stop();
    await db?.drop();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    process.exit(1);
  },
);

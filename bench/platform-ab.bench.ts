/**
 * `npm run bench:ab`: two variants of the platform compared under the same load, for changes smaller than
 * the spread between two runs of `npm run bench` on a shared host. Both variants run for the whole bench,
 * each on a database of its own; the load goes to one at a time, in parts taken in turns (A, B, B, A, …), so
 * the host's drift and the time it steals weigh on both alike.
 *
 * A is this checkout's build with `--env` settings; B is the build of `--against DIR` (another checkout, built
 * with `npm run build`; its standalone migrates its own database) or this one's, with `--against-env`
 * settings. With neither, A and B are the same: the figures then show the harness's own spread.
 *
 * Per level and variant: requests/s, p50/p99 latency, errors, CPU per request of the standalone, its echo
 * worker and the database's backends (/proc), and B / A. Options: `--against DIR`, `--env KEY=VALUE` and
 * `--against-env KEY=VALUE` (repeatable), `--levels 1,16,64`, `--mode send|stream` (blocking SendMessage or
 * SendStreamingMessage, JSON-RPC), `--seconds N` (per level and variant, default 24), `--slices N` (parts per
 * level and variant, default 8), `--warmup N` (seconds per variant, default 3).
 */
import { createTestDatabase, reserveTestDatabase } from '@lib/testing';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  attempted,
  completedPerSecond,
  mergeLoads,
  MODES,
  openSender,
  runClosedLoop,
  type LoadResult,
  type Mode,
  type Sender,
} from './support/a2a-load';
import { BenchPlatform, type PlatformCpu } from './support/bench-platform';
import { ascending, fmt, percentile, printMachine, table } from './support/figures';
import { CLOCK_TICKS, cpuSecondsBetween, machineStealTicks } from './support/proc-stats';

interface Options {
  against: string | null;
  env: Record<string, string>;
  againstEnv: Record<string, string>;
  levels: number[];
  mode: Mode;
  seconds: number;
  slices: number;
  warmupSeconds: number;
}

const USAGE =
  'options: --against DIR, --env KEY=VALUE, --against-env KEY=VALUE, --levels 1,16,64, ' +
  `--mode ${MODES.join('|')}, --seconds N, --slices N, --warmup N`;

function parseOptions(argv: readonly string[]): Options {
  const options: Options = {
    against: null,
    env: {},
    againstEnv: {},
    levels: [1, 16, 64],
    mode: 'send',
    seconds: 24,
    slices: 8,
    warmupSeconds: 3,
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i] ?? '';
    const value = argv[++i] ?? '';
    const bad = (expected: string): Error =>
      new Error(`${flag} needs ${expected}, got ${value}\n${USAGE}`);
    const positiveInteger = (): number => {
      const n = Number(value);
      if (!Number.isInteger(n) || n <= 0) {
        throw bad('a positive integer');
      }
      return n;
    };
    const setting = (into: Record<string, string>): void => {
      const match = /^([A-Z][A-Z0-9_]*)=(.*)$/s.exec(value);
      if (!match?.[1]) {
        throw bad('KEY=VALUE');
      }
      into[match[1]] = match[2] ?? '';
    };
    switch (flag) {
      case '--against': {
        const root = resolve(value);
        if (!existsSync(join(root, 'dist', 'apps', 'standalone', 'src', 'main.js'))) {
          throw bad('a checkout built with npm run build');
        }
        options.against = root;
        break;
      }
      case '--env':
        setting(options.env);
        break;
      case '--against-env':
        setting(options.againstEnv);
        break;
      case '--levels': {
        const levels = value.split(',').map(Number);
        if (!levels.every((n) => Number.isInteger(n) && n > 0)) {
          throw bad('a comma-separated list of positive integers');
        }
        options.levels = levels;
        break;
      }
      case '--mode':
        if (value !== 'send' && value !== 'stream') {
          throw bad(MODES.join(' or '));
        }
        options.mode = value;
        break;
      case '--seconds':
        options.seconds = positiveInteger();
        break;
      case '--slices':
        options.slices = positiveInteger();
        break;
      case '--warmup':
        options.warmupSeconds = positiveInteger();
        break;
      default:
        throw new Error(`unknown argument ${flag}\n${USAGE}`);
    }
  }
  return options;
}

interface Variant {
  name: 'A' | 'B';
  label: string;
  platform: BenchPlatform;
  sender: Sender;
}

/** What one variant did at one level, over all its parts. */
interface Tally {
  load: LoadResult | null;
  /** CPU seconds of the standalone, its echo worker and its database's backends over the parts. */
  standalone: number;
  worker: number;
  postgres: number;
  /** Ticks the host stole during the parts. */
  steal: number;
}

/** The CPU of a tally, all three processes: seconds or, per request, milliseconds. */
function allThree(tally: Pick<Tally, 'standalone' | 'worker' | 'postgres'>): number {
  return tally.standalone + tally.worker + tally.postgres;
}

/** One part of a level on one variant, added to its tally. */
async function measurePart(
  variant: Variant,
  concurrency: number,
  ms: number,
  tally: Tally,
): Promise<void> {
  const before: PlatformCpu = await variant.platform.sampleCpu();
  const stealBefore = machineStealTicks() ?? 0;
  const load = await runClosedLoop(variant.sender.send, concurrency, ms);
  const stealAfter = machineStealTicks() ?? 0;
  const after: PlatformCpu = await variant.platform.sampleCpu();
  tally.load = tally.load ? mergeLoads(tally.load, load) : load;
  tally.standalone += cpuSecondsBetween(before.standalone, after.standalone);
  tally.worker += cpuSecondsBetween(before.worker, after.worker);
  tally.postgres += cpuSecondsBetween(before.postgres, after.postgres);
  tally.steal += stealAfter - stealBefore;
}

function variantLabel(env: Record<string, string>, root: string | null): string {
  const settings = Object.entries(env).map(([key, value]) => `${key}=${value}`);
  return [root ?? 'this checkout', ...settings].join(', ');
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  console.log(
    '# Two variants of the platform, the load alternating between them (npm run bench:ab)',
  );
  console.log(
    `mode: ${options.mode} (JSON-RPC); levels: ${options.levels.join(', ')}; per level and variant: ` +
      `${options.seconds} s in ${options.slices} parts, taken in turns (A, B, B, A, …)`,
  );
  const variants: Variant[] = [];
  const databases: (() => Promise<void>)[] = [];
  try {
    for (const name of ['A', 'B'] as const) {
      const root = name === 'B' ? options.against : null;
      const env = name === 'A' ? options.env : options.againstEnv;
      // Another checkout's standalone migrates its database itself, to its own schema.
      const db = root === null ? await createTestDatabase('ab') : reserveTestDatabase('ab');
      databases.push(() => db.drop());
      const platform = await BenchPlatform.start(db, null, env, root ?? undefined);
      const sender = openSender(options.mode, 'jsonrpc', platform.endpoints);
      const label = variantLabel(env, root);
      variants.push({ name, label, platform, sender });
      console.log(`${name}: ${label} (standalone pid ${platform.pid})`);
    }
    const [first] = variants;
    printMachine(first ? await first.platform.postgresVersion() : '?');
    for (const variant of variants) {
      const warm = await runClosedLoop(variant.sender.send, 16, options.warmupSeconds * 1_000);
      console.log(`warm-up ${variant.name}: ${warm.requests} ok, ${warm.errors} errors`);
    }

    const rows: string[][] = [];
    // Every variant answered at every level.
    let complete = true;
    const partMs = (options.seconds * 1_000) / options.slices;
    for (const concurrency of options.levels) {
      const tallied = variants.map((variant): { variant: Variant; tally: Tally } => ({
        variant,
        tally: { load: null, standalone: 0, worker: 0, postgres: 0, steal: 0 },
      }));
      for (let part = 0; part < options.slices; part++) {
        const order = part % 2 === 0 ? tallied : [...tallied].reverse();
        for (const { variant, tally } of order) {
          await measurePart(variant, concurrency, partMs, tally);
        }
      }
      const figures = tallied.map(({ variant, tally }) => {
        const load = tally.load;
        const n = load ? attempted(load) : 0;
        const perRequest = (seconds: number): number => (n > 0 ? (1_000 * seconds) / n : NaN);
        const sorted = ascending(load?.latenciesMs ?? []);
        return {
          variant,
          rate: load ? completedPerSecond(load) : NaN,
          p50: percentile(sorted, 50),
          p99: percentile(sorted, 99),
          errors: load?.errors ?? 0,
          standalone: perRequest(tally.standalone),
          worker: perRequest(tally.worker),
          postgres: perRequest(tally.postgres),
          steal: load ? (100 * tally.steal) / CLOCK_TICKS / (load.elapsedMs / 1_000) : NaN,
        };
      });
      for (const f of figures) {
        complete &&= f.rate > 0;
        rows.push([
          `c=${concurrency}`,
          f.variant.name,
          fmt(f.rate),
          fmt(f.p50),
          fmt(f.p99),
          String(f.errors),
          fmt(f.standalone, 2),
          fmt(f.worker, 2),
          fmt(f.postgres, 2),
          fmt(allThree(f), 2),
          fmt(f.steal, 0),
        ]);
      }
      const [a, b] = figures;
      if (a && b) {
        rows.push([
          `c=${concurrency}`,
          'B / A',
          fmt(b.rate / a.rate, 3),
          fmt(b.p50 / a.p50, 3),
          fmt(b.p99 / a.p99, 3),
          '-',
          fmt(b.standalone / a.standalone, 3),
          fmt(b.worker / a.worker, 3),
          fmt(b.postgres / a.postgres, 3),
          fmt(allThree(b) / allThree(a), 3),
          '-',
        ]);
      }
    }
    console.log('');
    variants.forEach((v) => console.log(`${v.name}: ${v.label}`));
    console.log(
      table(
        [
          'level',
          'variant',
          'requests/s',
          'p50 ms',
          'p99 ms',
          'errors',
          'standalone CPU ms',
          'echo worker CPU ms',
          'PG backends CPU ms',
          'all three CPU ms',
          'stolen %',
        ],
        rows,
        [0, 1],
      ),
    );
    console.log(
      "CPU: user + system time per request (/proc) of the variant's standalone, its echo worker and the\n" +
        'backends of its database, over its parts only. stolen: steal time of the machine during its parts\n' +
        "(100 % = one core). With the same build and settings on both sides, B / A shows the harness's spread.",
    );
    return complete ? 0 : 1;
  } finally {
    for (const variant of variants) {
      variant.sender.close();
      await variant.platform.stop().catch((error: unknown) => console.error(String(error)));
    }
    for (const drop of databases) {
      await drop().catch((error: unknown) =>
        console.error(`dropping a database: ${String(error)}`),
      );
    }
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    process.exit(1);
  },
);

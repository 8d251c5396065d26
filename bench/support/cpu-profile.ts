/**
 * Where the CPU went, from V8 CPU profiles (`.cpuprofile` files, as `node --cpu-prof` writes them): the
 * functions with the most self time, per profile (one per process). Self time of a function = the samples
 * whose leaf frame it was (hitCount) × the sampling interval, summed over every node of that function
 * (same name, script and line). `npm run bench -- --cpu-prof DIR` prints it after the run; alone:
 *
 *   node dist/bench/support/cpu-profile.js DIR [--top N]
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fmt, table } from './figures';

/** The parts of a V8 `Profiler.Profile` this reads. */
interface CpuProfile {
  nodes: {
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
    hitCount?: number;
  }[];
  /** Microseconds. */
  startTime: number;
  endTime: number;
  samples?: number[];
}

/** One function's self time in one profile. */
export interface FunctionTime {
  /** Function name, `(anonymous)` when it has none, or a V8 pseudo-frame like `(garbage collector)`. */
  name: string;
  /** Script and 1-based line, shortened (repository-relative, `node_modules/…`, `node:…`). */
  location: string;
  selfMs: number;
}

/** The self time of one area of code (a package, an app or lib of this repository, Node's internals). */
export interface AreaTime {
  area: string;
  selfMs: number;
}

/** The self time per function and per area of one profile, most first. */
export interface ProfileSummary {
  file: string;
  /** From the default file name `CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile`; null if not in it. */
  pid: number | null;
  /** Sampled time in all (the profile's duration). */
  totalMs: number;
  /** Time in the `(idle)` pseudo-frame: the event loop waiting. */
  idleMs: number;
  functions: FunctionTime[];
  areas: AreaTime[];
}

const PSEUDO_FRAMES = new Set(['(root)', '(idle)']);

function shortLocation(url: string, line: number, root: string): string {
  if (url === '') {
    return '';
  }
  let path = url.startsWith('file://') ? url.slice('file://'.length) : url;
  const modules = path.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    path = path.slice(modules + 1);
  } else if (path.startsWith(`${root}/`)) {
    path = path.slice(root.length + 1);
  }
  return line >= 0 ? `${path}:${line + 1}` : path;
}

/**
 * Where a function lives: its package (`node_modules/pg/…` → `pg`), app or lib of this repository
 * (`dist/apps/ingress/…` → `apps/ingress`), Node's own module (`node:internal/http2/core` → `node:http2`,
 * `node:_http_server` → `node:http`), another script (its file name), a V8 pseudo-frame such as
 * `(garbage collector)`, or `(native)` for functions without a script (C++ built-ins such as `writev`).
 */
function areaOf(f: FunctionTime): string {
  const path = f.location;
  if (path === '') {
    return f.name.startsWith('(') ? f.name : '(native)';
  }
  if (path.startsWith('node:')) {
    const module =
      path
        .slice('node:'.length)
        .replace(/^internal\//, '')
        .split(/[/:]/)[0] ?? '';
    return `node:${module.replace(/^_/, '').split('_')[0] ?? module}`;
  }
  const modules = /^node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (modules) {
    return modules[1] ?? path;
  }
  const own = /^(?:dist\/)?((?:apps|libs|bench)\/[^/]+)/.exec(path);
  return own?.[1] ?? path.replace(/:\d+$/, '').split('/').pop() ?? path;
}

/** Self time per function of one parsed profile. `root` is taken off script paths below it. */
export function summariseProfile(
  profile: CpuProfile,
  file: string,
  root = process.cwd(),
): ProfileSummary {
  const hits = profile.nodes.reduce((sum, node) => sum + (node.hitCount ?? 0), 0);
  const totalMs = (profile.endTime - profile.startTime) / 1_000;
  // The mean sampling interval: the configured one (1 ms by default) stretches when the process is busy.
  const intervalMs = hits > 0 ? totalMs / hits : 0;
  const byFunction = new Map<string, FunctionTime>();
  let idleMs = 0;
  for (const node of profile.nodes) {
    const selfMs = (node.hitCount ?? 0) * intervalMs;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)') {
      idleMs += selfMs;
    }
    if (selfMs === 0 || PSEUDO_FRAMES.has(functionName)) {
      continue;
    }
    const name = functionName || '(anonymous)';
    const location = shortLocation(url, lineNumber, root);
    const key = `${name}\u0000${location}`;
    const entry = byFunction.get(key) ?? { name, location, selfMs: 0 };
    entry.selfMs += selfMs;
    byFunction.set(key, entry);
  }
  const functions = [...byFunction.values()].sort((a, b) => b.selfMs - a.selfMs);
  const byArea = new Map<string, number>();
  for (const f of functions) {
    byArea.set(areaOf(f), (byArea.get(areaOf(f)) ?? 0) + f.selfMs);
  }
  const pid = /\.(\d+)\.\d+\.\d+\.cpuprofile$/.exec(file)?.[1];
  return {
    file,
    pid: pid === undefined ? null : Number(pid),
    totalMs,
    idleMs,
    functions,
    areas: [...byArea]
      .map(([area, selfMs]) => ({ area, selfMs }))
      .sort((a, b) => b.selfMs - a.selfMs),
  };
}

/** The `.cpuprofile` files in `dir` (or the given ones), summarised, in file-name order. */
export function readProfiles(dir: string, files?: readonly string[]): ProfileSummary[] {
  const names = (
    files ?? readdirSync(dir).filter((name) => name.endsWith('.cpuprofile'))
  ).toSorted();
  return names.map((name) =>
    summariseProfile(
      JSON.parse(readFileSync(join(dir, name), 'utf8')) as CpuProfile,
      name,
      resolve(__dirname, '..', '..', '..'),
    ),
  );
}

/**
 * One profile as a Markdown section: the self time per area, then the top `top` functions by self time; % is
 * of the busy time (all samples but `(idle)`), so the rows of a busy process add up towards 100.
 */
export function formatProfile(summary: ProfileSummary, label: string, top = 25): string {
  const busyMs = summary.totalMs - summary.idleMs;
  const share = (ms: number): string => (busyMs > 0 ? fmt((100 * ms) / busyMs) : '-');
  const head =
    `### ${label} (${summary.file}): profile ${fmt(summary.totalMs / 1_000)} s, ` +
    `busy ${fmt(busyMs / 1_000)} s, idle ${fmt(summary.idleMs / 1_000)} s`;
  const areas = summary.areas.slice(0, top).map((a) => [a.area, fmt(a.selfMs, 0), share(a.selfMs)]);
  const functions = summary.functions
    .slice(0, top)
    .map((f, i) => [String(i + 1), fmt(f.selfMs, 0), share(f.selfMs), f.name, f.location]);
  return [
    head,
    table(['area', 'self ms', '% of busy'], areas, [0]),
    '',
    table(['#', 'self ms', '% of busy', 'function', 'location'], functions, [3, 4]),
  ].join('\n');
}

function main(argv: string[]): number {
  const dir = argv[0];
  const topAt = argv.indexOf('--top');
  const top = topAt >= 0 ? Number(argv[topAt + 1]) : 25;
  if (dir === undefined || dir.startsWith('--') || !Number.isInteger(top) || top < 1) {
    console.error('usage: node dist/bench/support/cpu-profile.js DIR [--top N]');
    return 2;
  }
  const summaries = readProfiles(dir);
  if (summaries.length === 0) {
    console.error(`no .cpuprofile file in ${dir}`);
    return 1;
  }
  for (const summary of summaries) {
    console.log(formatProfile(summary, `pid ${String(summary.pid ?? '?')}`, top));
    console.log('');
  }
  return 0;
}

if (require.main === module) {
  process.exitCode = main(process.argv.slice(2));
}

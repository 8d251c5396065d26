/** What every benchmark prints: the machine, percentiles and Markdown tables (right-aligned by default). */
import { cpus, totalmem } from 'node:os';

/** The nearest-rank percentile `p` (0–100) of ascending `sorted` values; NaN when there are none. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) {
    return Number.NaN;
  }
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}

/** A sorted copy, ascending. */
export function ascending(values: readonly number[]): number[] {
  return [...values].sort((a, b) => a - b);
}

/** A number with `digits` decimals, or `-` when there is none. */
export function fmt(n: number | null | undefined, digits = 1): string {
  return n !== null && n !== undefined && Number.isFinite(n) ? n.toFixed(digits) : '-';
}

/** A Markdown table, every column right-aligned except those whose index is in `leftAligned`. */
export function table(
  headers: string[],
  rows: string[][],
  leftAligned: readonly number[] = [],
): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const pad = (cell: string, i: number): string =>
    leftAligned.includes(i) ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0);
  const line = (cells: string[]): string => `| ${cells.map(pad).join(' | ')} |`;
  return [
    line(headers),
    `|${widths.map((w, i) => (leftAligned.includes(i) ? `:${'-'.repeat(w + 1)}` : `${'-'.repeat(w + 1)}:`)).join('|')}|`,
    ...rows.map(line),
  ].join('\n');
}

/** The `## Machine` section every benchmark starts with; `postgres` is the server line to print. */
export function printMachine(postgres: string): void {
  const cpuList = cpus();
  console.log('');
  console.log('## Machine');
  console.log(`CPU: ${cpuList[0]?.model.trim() ?? 'unknown'} x ${cpuList.length}`);
  console.log(`memory: ${(totalmem() / 1024 ** 3).toFixed(1)} GiB`);
  console.log(`Node: ${process.version}`);
  console.log(`Postgres: ${postgres}`);
}

/**
 * How fast the disk under Postgres makes one 8 kB write durable, as Postgres's own `pg_test_fsync` measures
 * it: the ceiling on commits per second of one connection that waits for each of its commits (group commit
 * shares one flush among the commits waiting for it).
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface FsyncFigure {
  /** Where the test file was written. */
  dir: string;
  /** `fdatasync` (Postgres's default wal_sync_method on Linux), one 8 kB write: operations per second. */
  fdatasyncPerSecond: number;
  /** What it printed, for the record. */
  output: string;
}

/** `pg_test_fsync` of the newest Postgres installed under /usr/lib/postgresql; null when none is. */
function pgTestFsync(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) {
    return null;
  }
  const versions = readdirSync(root)
    .filter((name) => /^\d+$/.test(name))
    .sort((a, b) => Number(b) - Number(a));
  const found = versions
    .map((version) => join(root, version, 'bin', 'pg_test_fsync'))
    .find((path) => existsSync(path));
  return found ?? null;
}

/**
 * Runs `pg_test_fsync -s 1` with its test file beside the data directory (same disk), or in `fallbackDir`
 * when that cannot be written; `{ error }` when the tool is not installed or fails.
 */
export async function measureFsync(
  dataDirectory: string,
  fallbackDir: string,
): Promise<FsyncFigure | { error: string }> {
  const tool = pgTestFsync();
  if (tool === null) {
    return { error: 'pg_test_fsync is not installed (/usr/lib/postgresql/<version>/bin)' };
  }
  const run = (dir: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const file = join(dir, `a2a-bench-fsync-${process.pid}.tmp`);
      execFile(tool, ['-s', '1', '-f', file], { timeout: 120_000 }, (error, stdout) => {
        rmSync(file, { force: true });
        if (error) {
          reject(new Error(`pg_test_fsync: ${error.message}`));
        } else {
          resolve(stdout);
        }
      });
    });
  const dirs = dataDirectory === '' ? [fallbackDir] : [dirname(dataDirectory), fallbackDir];
  let lastError = '';
  for (const dir of dirs) {
    try {
      const output = await run(dir);
      // The first "fdatasync" line is in "Compare file sync methods using one 8kB write".
      const match = /^\s*fdatasync\s+([\d.]+) ops\/sec/m.exec(output);
      if (!match?.[1]) {
        return { error: `no fdatasync figure in pg_test_fsync's output:\n${output}` };
      }
      return { dir, fdatasyncPerSecond: Number(match[1]), output };
    } catch (error) {
      lastError = error instanceof Error ? error.message : String(error);
    }
  }
  return { error: lastError };
}

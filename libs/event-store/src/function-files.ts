import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * A file of `migrations/functions/`: the one current definition of some Postgres functions, re-runnable
 * (`CREATE OR REPLACE`). Applied after the versioned migrations (docs/adr/0014-function-files.md).
 */
export interface FunctionFile {
  /** The file's name, e.g. `events.append_task_batch.sql`. */
  name: string;
  sql: string;
  /** SHA-256 of `sql`, hex. */
  sha256: string;
}

/** A versioned migration's line naming a function file whose definition it changes, with the file's hash. */
export interface FunctionFileChange {
  /** The migration's name: its file name without `.sql`, as `schema_migrations` records it. */
  migration: string;
  file: string;
  sha256: string;
}

/** The versioned migrations in the order they run, and the function file changes they name. */
export interface MigrationHistory {
  migrations: string[];
  changes: FunctionFileChange[];
}

/** What a database records of a function file it was given (`public.schema_function_files`). */
export interface AppliedFunctionFile {
  file: string;
  /** The newest migration naming the file, in the release that applied it. */
  migration: string;
  sha256: string;
}

/** A function file to run on a database, or to leave because a newer release defined its functions. */
export type FunctionFileStep =
  | { action: 'apply'; file: FunctionFile; migration: string }
  | { action: 'leave'; file: FunctionFile; newer: string };

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** The line a migration carries to name `file` at its current content. */
export function functionFileLine(file: Pick<FunctionFile, 'name' | 'sha256'>): string {
  return `-- Function file: ${file.name} sha256:${file.sha256}`;
}

const CHANGE_LINE = /^-- Function file: (\S+\.sql) sha256:([0-9a-f]{64})$/gm;

/** The function files of `dir`, by name. */
export async function readFunctionFiles(dir: string): Promise<FunctionFile[]> {
  const names = (await readdir(dir)).filter((name) => name.endsWith('.sql')).sort();
  return Promise.all(
    names.map(async (name) => {
      const sql = await readFile(join(dir, name), 'utf8');
      return { name, sql, sha256: sha256Hex(sql) };
    }),
  );
}

/**
 * The versioned migrations of `dir` (its `.sql` files; node-pg-migrate reads no folder) in the order they run,
 * with the function file lines of each.
 */
export async function readMigrationHistory(dir: string): Promise<MigrationHistory> {
  const entries = await readdir(dir, { withFileTypes: true });
  // Every name starts with a timestamp of the same length: name order is node-pg-migrate's order.
  const files = entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.sql'))
    .map((entry) => entry.name)
    .sort();
  const texts = await Promise.all(files.map((file) => readFile(join(dir, file), 'utf8')));
  const migrations = files.map((file) => file.slice(0, -'.sql'.length));
  const changes = migrations.flatMap((migration, index) =>
    [...(texts[index] ?? '').matchAll(CHANGE_LINE)].map(([, file = '', sha256 = '']) => ({
      migration,
      file,
      sha256,
    })),
  );
  return { migrations, changes };
}

/**
 * The function files to run on a database that recorded `applied`, in file-name order. A file is run when its
 * content is not the one the database last got, unless a newer release gave it: the newest migration naming
 * the file there is one this release does not have, or comes after this release's newest one (a replica of
 * the previous release restarting during a rollout must not put the old definitions back).
 */
export function planFunctionFiles(
  files: readonly FunctionFile[],
  history: MigrationHistory,
  applied: readonly AppliedFunctionFile[],
): FunctionFileStep[] {
  return files.flatMap((file): FunctionFileStep[] => {
    const latest = history.changes.filter((change) => change.file === file.name).at(-1);
    if (!latest) {
      throw new Error(
        `function file ${file.name} is named by no migration: add one with the line "${functionFileLine(file)}"`,
      );
    }
    const recorded = applied.find((row) => row.file === file.name);
    if (recorded?.sha256 === file.sha256) {
      return [];
    }
    if (recorded) {
      const recordedAt = history.migrations.indexOf(recorded.migration);
      if (recordedAt < 0 || recordedAt > history.migrations.indexOf(latest.migration)) {
        return [{ action: 'leave', file, newer: recorded.migration }];
      }
    }
    return [{ action: 'apply', file, migration: latest.migration }];
  });
}

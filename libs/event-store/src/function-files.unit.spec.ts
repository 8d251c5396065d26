import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  functionFileLine,
  planFunctionFiles,
  readFunctionFiles,
  readMigrationHistory,
  sha256Hex,
  type FunctionFile,
  type MigrationHistory,
} from './function-files';
import { migrationsDir } from './migrate';

function file(name: string, sql: string): FunctionFile {
  return { name, sql, sha256: sha256Hex(sql) };
}

const batchV1 = file('events.f.sql', 'CREATE OR REPLACE FUNCTION events.f() ... v1');
const batchV2 = file('events.f.sql', 'CREATE OR REPLACE FUNCTION events.f() ... v2');

/** Three migrations; the first and the third change `events.f`. */
const history: MigrationHistory = {
  migrations: ['20270101000000_a', '20270102000000_b', '20270103000000_c'],
  changes: [
    { migration: '20270101000000_a', file: batchV1.name, sha256: batchV1.sha256 },
    { migration: '20270103000000_c', file: batchV2.name, sha256: batchV2.sha256 },
  ],
};

describe('function files', () => {
  it('are each named, at their current content, by the newest migration that names them', async () => {
    const files = await readFunctionFiles(join(migrationsDir(), 'functions'));
    const { changes } = await readMigrationHistory(migrationsDir());
    expect(files.length).toBeGreaterThan(0);
    for (const current of files) {
      const latest = changes.filter((change) => change.file === current.name).at(-1);
      // A changed file needs a new migration with this line (it is what makes upgraded databases run it).
      expect(latest?.sha256, `add a migration with the line:\n${functionFileLine(current)}`).toBe(
        current.sha256,
      );
    }
  });

  it('are all run on a database that has none', () => {
    expect(planFunctionFiles([batchV2], history, [])).toEqual([
      { action: 'apply', file: batchV2, migration: '20270103000000_c' },
    ]);
  });

  it('are not run again while their content is the one the database got', () => {
    const applied = [{ file: batchV2.name, migration: '20270103000000_c', sha256: batchV2.sha256 }];
    expect(planFunctionFiles([batchV2], history, applied)).toEqual([]);
  });

  it('are run when they changed since the database got them', () => {
    const applied = [{ file: batchV1.name, migration: '20270101000000_a', sha256: batchV1.sha256 }];
    expect(planFunctionFiles([batchV2], history, applied)).toEqual([
      { action: 'apply', file: batchV2, migration: '20270103000000_c' },
    ]);
  });

  it('are left alone when a newer release gave the database its definitions (a rollout)', () => {
    const older: MigrationHistory = {
      migrations: history.migrations.slice(0, 2),
      changes: history.changes.slice(0, 1),
    };
    const applied = [{ file: batchV2.name, migration: '20270103000000_c', sha256: batchV2.sha256 }];
    expect(planFunctionFiles([batchV1], older, applied)).toEqual([
      { action: 'leave', file: batchV1, newer: '20270103000000_c' },
    ]);
  });

  it('need a migration that names them', () => {
    const unnamed = file('events.g.sql', 'CREATE OR REPLACE FUNCTION events.g() ...');
    expect(() => planFunctionFiles([unnamed], history, [])).toThrow(functionFileLine(unnamed));
  });
});

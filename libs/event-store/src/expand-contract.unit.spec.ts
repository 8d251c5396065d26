import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { contractions, RULE_SINCE_MIGRATION } from './expand-contract';
import { migrationsDir } from './migrate';

const migration = (up: string, down = 'DROP TABLE ops.things;'): string =>
  `-- Up Migration\n${up}\n-- Down Migration\n${down}\n`;

describe('the expand/contract rule', () => {
  it('lets a migration add tables, nullable or defaulted columns, indexes and functions', () => {
    expect(
      contractions(
        migration(`CREATE TABLE ops.things (id text PRIMARY KEY, made_at timestamptz NOT NULL DEFAULT now());
ALTER TABLE ops.tenants ADD COLUMN note text, ADD COLUMN weight int NOT NULL DEFAULT 1;
CREATE INDEX things_made ON ops.things (made_at);
CREATE OR REPLACE FUNCTION ops.thing_count() RETURNS bigint LANGUAGE sql AS 'SELECT count(*) FROM ops.things';
-- A comment may say DROP TABLE or RENAME without effect.`),
      ),
    ).toStrictEqual([]);
  });

  it('names what a migration takes away or changes (its down part does not count)', () => {
    expect(contractions(migration('DROP TABLE ops.things;'))).toStrictEqual(['drops a relation']);
    expect(
      contractions(
        migration(`ALTER TABLE ops.tenants DROP COLUMN note;
ALTER TABLE ops.tenants RENAME COLUMN display_name TO title;
ALTER TABLE ops.tenants ALTER COLUMN weight TYPE bigint;
ALTER TABLE ops.tenants ALTER COLUMN note SET NOT NULL;
DROP FUNCTION ops.thing_count();
ALTER TABLE ops.tenants ADD COLUMN region text NOT NULL;`),
      ),
    ).toStrictEqual([
      'drops a column',
      'drops a function',
      'renames',
      "changes a column's type",
      'makes a column required',
      'adds a required column without a default',
    ]);
  });

  it('allows a contraction the migration declares, naming the release since which nothing uses it', () => {
    expect(
      contractions(
        migration(`-- Contract: ops.tenants.note, unused since 0.3.0
ALTER TABLE ops.tenants DROP COLUMN note;`),
      ),
    ).toStrictEqual([]);
    expect(
      contractions(
        migration('-- Contract: ops.tenants.note\nALTER TABLE ops.tenants DROP COLUMN note;'),
      ),
    ).toStrictEqual(['drops a column']);
  });

  it('holds for every migration written since the rule', () => {
    const dir = migrationsDir();
    const files = readdirSync(dir)
      .filter((name) => name.endsWith('.sql'))
      .sort();
    expect(files).toContain(`${RULE_SINCE_MIGRATION}.sql`);
    const broken = files
      .filter((name) => name > `${RULE_SINCE_MIGRATION}.sql`)
      .map((name) => [name, contractions(readFileSync(join(dir, name), 'utf8'))] as const)
      .filter(([, found]) => found.length > 0);
    expect(broken).toStrictEqual([]);
  });
});

/**
 * The expand/contract rule of the schema (docs/deploy.md "The expand/contract rule"): during a rollout the
 * previous release runs on the new schema, and a rollback runs it there for good, so a migration's up part
 * only adds. Taking away or changing what a release may still use (a table, a column, a column's type, a
 * function) is a contraction, allowed only in a migration that says so with a line
 * `-- Contract: <what>, unused since <release>`, naming the release after which nothing uses it any more.
 */

/** The newest migration when the rule was written down: the ones up to it are history. */
export const RULE_SINCE_MIGRATION = '20261211010000_task-batch-readable-keys';

/** Statements that take away or change what a running release may use. */
const CONTRACTIONS: { pattern: RegExp; what: string }[] = [
  {
    pattern: /\bDROP\s+(TABLE|SCHEMA|VIEW|MATERIALIZED\s+VIEW|SEQUENCE|TYPE)\b/i,
    what: 'drops a relation',
  },
  { pattern: /\bDROP\s+COLUMN\b/i, what: 'drops a column' },
  { pattern: /\bDROP\s+(FUNCTION|PROCEDURE)\b/i, what: 'drops a function' },
  { pattern: /\bRENAME\b/i, what: 'renames' },
  { pattern: /\bALTER\s+COLUMN\s+\S+\s+(SET\s+DATA\s+)?TYPE\b/i, what: "changes a column's type" },
  { pattern: /\bSET\s+NOT\s+NULL\b/i, what: 'makes a column required' },
];

const CONTRACT_LINE = /^-- Contract: .+, unused since \S+/m;

/** The up part of a node-pg-migrate SQL migration (everything before `-- Down Migration`). */
function upSection(sql: string): string {
  const down = sql.search(/^-- Down Migration/m);
  return down < 0 ? sql : sql.slice(0, down);
}

/**
 * What the up part of `sql` takes away or changes, each kind once; empty when the migration only adds, or
 * when it declares itself a contraction (`-- Contract: …, unused since <release>`).
 */
export function contractions(sql: string): string[] {
  const up = upSection(sql);
  if (CONTRACT_LINE.test(up)) {
    return [];
  }
  const statements = up
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('--'))
    .join('\n');
  const found = CONTRACTIONS.filter(({ pattern }) => pattern.test(statements)).map(
    ({ what }) => what,
  );
  // A required column without a default: the previous release's inserts, which do not name it, would fail.
  const required = statements
    .split(';')
    .flatMap((statement) => statement.split(/\bADD\s+COLUMN\b/i).slice(1))
    .some((column) => /\bNOT\s+NULL\b/i.test(column) && !/\bDEFAULT\b/i.test(column));
  return required ? [...found, 'adds a required column without a default'] : found;
}

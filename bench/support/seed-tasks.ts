/**
 * Bulk seeding of tasks for scale benchmarks and tests: the rows the write path writes for one real task,
 * repeated set-based (`generate_series`, `INSERT … SELECT`) for many tasks, each with ids and times of its own.
 *
 * 1. Run one task of each kind through the real write path (SendMessage, a worker, a terminal or interrupted
 *    state) and capture its rows from every table the write path writes ({@link TASK_TABLES}) with
 *    {@link captureTemplate}.
 * 2. {@link seedTasks} writes tasks `from … to - 1` from those templates, in batches of one transaction each:
 *    - every UUID in the template (task id, message ids, request ids, worker id, idempotency keys) becomes one of
 *      task i's own, the same wherever it occurs; UUIDv7 ids (event ids) stay UUIDv7 of the shifted time;
 *    - the template's contextId becomes that of task i's context (`contextSize` consecutive tasks share one);
 *    - every time (ISO strings in JSON, timestamptz columns) moves by the same amount: task i starts at
 *      `start + i × stepMs`, its events keep the template's spacing;
 *    - `ops.message_ids.message_digest` is recomputed (SHA-256 of the RFC 8785 form of the message, as the
 *      write path computes it; {@link captureTemplate} checks that it can reproduce the template's);
 *    - columns the database fills (`global_position`, `transaction_id`) are left to it;
 *    - `read.task_counts` is kept by the view's triggers, as for the write path.
 *
 * Templates should be terminal or interrupted tasks: a seeded queued or leased task would wait for a worker
 * that does not exist. A million tasks take a few minutes (see docs/benchmarks-history.md).
 */
import { canonicalize } from '@lib/a2a-protocol';
import { createHash } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';

/** Where the rows of one task live, and how they are found: by stream id or by task id. */
interface TableSpec {
  table: string;
  key: 'stream' | 'task';
  orderBy: string;
}

/**
 * Every table the write path writes a task's rows to (read.task_counts follows read.task_view by trigger). A
 * test compares this list with the tables a real task has rows in.
 */
export const TASK_TABLES: readonly TableSpec[] = [
  { table: 'ops.message_ids', key: 'task', orderBy: 'created_at' },
  { table: 'events.streams', key: 'stream', orderBy: 'version' },
  { table: 'events.messages', key: 'stream', orderBy: 'stream_version' },
  { table: 'read.task_view', key: 'task', orderBy: 'version' },
  { table: 'ops.task_work', key: 'task', orderBy: 'queued_at' },
];

/** Columns the database fills in on insert (identity, the writing transaction's id). */
const DATABASE_FILLED = new Set([
  'events.messages.global_position',
  'events.messages.transaction_id',
]);

interface Column {
  name: string;
  /** `format_type` of the column, e.g. `jsonb`, `timestamp with time zone`. */
  type: string;
}

/** One table's rows of the template task, every value as text (timestamptz: microseconds since the epoch). */
interface CapturedTable {
  table: string;
  columns: Column[];
  rows: (string | null)[][];
}

/** The rows of one real task, to be repeated by {@link seedTasks}. */
export interface TaskTemplate {
  name: string;
  tenantId: string;
  taskId: string;
  contextId: string;
  tables: CapturedTable[];
  /** Canonical JSON of each message whose digest is in ops.message_ids, by message_id. */
  digested: Map<string, string>;
}

const TIMESTAMPTZ = 'timestamp with time zone';
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const ISO_MILLIS = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/g;
const VARIABLE = new RegExp(`${UUID.source}|${ISO_MILLIS.source}`, 'g');
const IS_UUID = new RegExp(`^${UUID.source}$`);

/** Reads the rows of task `taskId` of `tenantId` from every table in {@link TASK_TABLES}. */
export async function captureTemplate(
  pool: Pool,
  tenantId: string,
  taskId: string,
  name = taskId,
): Promise<TaskTemplate> {
  const streamId = `task:${tenantId}:${taskId}`;
  const tables: CapturedTable[] = [];
  for (const spec of TASK_TABLES) {
    const described = await pool.query<Column>(
      `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type
         FROM pg_attribute a
        WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped
        ORDER BY a.attnum`,
      [spec.table],
    );
    const columns = described.rows.filter((c) => !DATABASE_FILLED.has(`${spec.table}.${c.name}`));
    const select = columns
      .map((c) =>
        c.type === TIMESTAMPTZ
          ? `(extract(epoch FROM ${c.name}) * 1000000)::bigint::text`
          : `${c.name}::text`,
      )
      .join(', ');
    const key = spec.key === 'stream' ? 'stream_id' : 'task_id';
    const found = await pool.query<(string | null)[]>({
      text: `SELECT ${select} FROM ${spec.table} WHERE tenant_id = $1 AND ${key} = $2 ORDER BY ${spec.orderBy}`,
      values: [tenantId, spec.key === 'stream' ? streamId : taskId],
      rowMode: 'array',
    });
    if (found.rows.length > 0) {
      tables.push({ table: spec.table, columns, rows: found.rows });
    }
  }
  const view = tables.find((t) => t.table === 'read.task_view');
  const contextId = view ? cell(view, 0, 'context_id') : null;
  if (contextId === null) {
    throw new Error(`task ${taskId} of ${tenantId} has no row in read.task_view`);
  }
  const claims = tables.find((t) => t.table === 'ops.message_ids');
  for (const row of claims?.rows.keys() ?? []) {
    const messageId = claims ? (cell(claims, row, 'message_id') ?? '') : '';
    if (!new RegExp(UUID.source).test(messageId)) {
      throw new Error(
        `messageId ${messageId} of the template task has no UUID in it: seeded tasks would all reuse it`,
      );
    }
  }
  return { name, tenantId, taskId, contextId, tables, digested: digestedMessages(tables) };
}

function cell(table: CapturedTable, row: number, column: string): string | null {
  const index = table.columns.findIndex((c) => c.name === column);
  return index < 0 ? null : (table.rows[row]?.[index] ?? null);
}

/**
 * For every ops.message_ids row, the canonical JSON whose SHA-256 is its message_digest: the message as it is
 * in the log, less what the write path adds to it (taskId; contextId when the client sent none). Throws when
 * none matches, which means the write path digests something else now and this seeder must follow.
 */
function digestedMessages(tables: CapturedTable[]): Map<string, string> {
  const claims = tables.find((t) => t.table === 'ops.message_ids');
  const events = tables.find((t) => t.table === 'events.messages');
  const digested = new Map<string, string>();
  if (!claims) {
    return digested;
  }
  const messages = (events?.rows ?? []).flatMap((_, row) => {
    const data = events ? cell(events, row, 'data') : null;
    return data === null ? [] : findMessages(JSON.parse(data));
  });
  claims.rows.forEach((_, row) => {
    const messageId = cell(claims, row, 'message_id');
    const digest = cell(claims, row, 'message_digest');
    if (digest === null || messageId === null) {
      return;
    }
    const message = messages.find((m) => m['messageId'] === messageId);
    const { taskId: _taskId, ...withoutTask } = message ?? {};
    const { contextId: _contextId, ...withoutContext } = withoutTask;
    const canonical = [withoutTask, withoutContext, message ?? {}]
      .map((candidate) => canonicalize(candidate))
      .find((text) => sha256(text) === digest);
    if (canonical === undefined) {
      throw new Error(`cannot reproduce the message_digest of message ${messageId}`);
    }
    digested.set(messageId, canonical);
  });
  return digested;
}

/** Every object with a string `messageId` inside `value`. */
function findMessages(value: unknown): Record<string, unknown>[] {
  if (Array.isArray(value)) {
    return value.flatMap(findMessages);
  }
  if (typeof value !== 'object' || value === null) {
    return [];
  }
  const object = value as Record<string, unknown>;
  const nested = Object.values(object).flatMap(findMessages);
  return typeof object['messageId'] === 'string' ? [object, ...nested] : nested;
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Which templates the seeded tasks repeat, how they are grouped into contexts and spread over time. */
export interface SeedPlan {
  /** Task i repeats the template whose slot holds `i mod (sum of weights)`, slots in this order. */
  mix: { template: TaskTemplate; weight: number }[];
  /** Consecutive tasks that share one contextId. */
  contextSize: number;
  /** When task 0 starts; task i starts `i × stepMs` later. */
  start: Date;
  stepMs: number;
  /** Makes the ids of one plan differ from another's (ids are derived from it and the task number). */
  seed: string;
}

export interface SeedOptions {
  /** Tasks per transaction. */
  batchSize?: number;
  onBatch?: (seededUpTo: number) => void;
}

// One expression each (no FROM) and no less volatile than what they call, so that the planner inlines them: a
// UUIDv4 from the MD5 of a key, and a UUIDv7 of a time with the rest from the MD5 of a key.
const HELPERS = `
CREATE OR REPLACE FUNCTION pg_temp.seed_uuid4(key text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT overlay(overlay(md5(key) PLACING '4' FROM 13 FOR 1) PLACING '8' FROM 17 FOR 1)::uuid::text
$$;
CREATE OR REPLACE FUNCTION pg_temp.seed_uuid7(at timestamptz, key text) RETURNS text LANGUAGE sql STABLE AS $$
  SELECT overlay(overlay(overlay(md5(key)
           PLACING lpad(to_hex(floor(extract(epoch FROM at) * 1000)::bigint), 12, '0') FROM 1 FOR 12)
           PLACING '7' FROM 13 FOR 1) PLACING '8' FROM 17 FOR 1)::uuid::text
$$;`;

/**
 * Writes tasks `from … to - 1` of `plan` (see the file comment), `batchSize` tasks per transaction. Task numbers
 * are positions in the plan: seeding 0 … 9 999 and then 10 000 … 999 999 gives the same tasks as 0 … 999 999.
 */
export async function seedTasks(
  pool: Pool,
  plan: SeedPlan,
  from: number,
  to: number,
  options: SeedOptions = {},
): Promise<void> {
  const batchSize = options.batchSize ?? 20_000;
  const cycle = plan.mix.reduce((sum, m) => sum + m.weight, 0);
  const templates = plan.mix.map((m, index) => {
    const first = plan.mix.slice(0, index).reduce((sum, x) => sum + x.weight, 0);
    return {
      statements: templateStatements(m.template),
      slots: Array.from({ length: m.weight }, (_, k) => first + k),
    };
  });
  const client = await pool.connect();
  try {
    await client.query(HELPERS);
    for (let low = from; low < to; low += batchSize) {
      const high = Math.min(to, low + batchSize);
      await client.query('BEGIN');
      try {
        // The rows of a batch are sorted (by task, then by version within a stream) in memory.
        await client.query(`SET LOCAL work_mem = '256MB'`);
        for (const { statements, slots } of templates) {
          await runTemplate(client, statements, {
            from: low,
            to: high,
            cycle,
            slots,
            plan,
          });
        }
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        throw error;
      }
      options.onBatch?.(high);
    }
  } finally {
    client.release();
  }
}

interface TemplateStatements {
  /** Per-task variables (base time, context, UUIDs, ISO times) into pg_temp.seed_vars. */
  vars: string;
  inserts: string[];
}

async function runTemplate(
  client: PoolClient,
  statements: TemplateStatements,
  batch: { from: number; to: number; cycle: number; slots: number[]; plan: SeedPlan },
): Promise<void> {
  await client.query('DROP TABLE IF EXISTS pg_temp.seed_vars');
  await client.query(statements.vars, [
    batch.from,
    batch.to,
    batch.cycle,
    batch.slots,
    batch.plan.start.toISOString(),
    batch.plan.stepMs,
    batch.plan.contextSize,
    batch.plan.seed,
  ]);
  for (const insert of statements.inserts) {
    await client.query(insert);
  }
}

/** The SQL that repeats one template: the variables of each task, then one INSERT per table. */
function templateStatements(template: TaskTemplate): TemplateStatements {
  const uuids: string[] = [];
  const isoTimes: string[] = [];
  const times: bigint[] = [];
  // The contextId first: a client may choose one that is not a UUID.
  const variable = new RegExp(`${escapeRegExp(template.contextId)}|${VARIABLE.source}`, 'g');
  const note = (text: string): void => {
    for (const [value] of text.matchAll(variable)) {
      if (value === template.contextId) {
        continue;
      }
      if (!IS_UUID.test(value)) {
        if (!isoTimes.includes(value)) {
          isoTimes.push(value);
          times.push(isoMicros(value));
        }
      } else if (!uuids.includes(value)) {
        uuids.push(value);
      }
    }
  };
  for (const table of template.tables) {
    for (const row of table.rows) {
      row.forEach((value, index) => {
        if (value !== null && table.columns[index]?.type === TIMESTAMPTZ) {
          times.push(BigInt(value));
        } else if (value !== null) {
          note(value);
        }
      });
    }
  }
  template.digested.forEach((canonical) => note(canonical));
  for (const uuid of uuids) {
    const ms = uuidV7Millis(uuid);
    if (ms !== null) {
      times.push(ms * 1000n);
    }
  }
  // Whole milliseconds, so that a time with millisecond precision keeps it.
  const origin = (times.reduce((min, t) => (t < min ? t : min), times[0] ?? 0n) / 1000n) * 1000n;
  const shifted = (base: string, micros: bigint): string =>
    `(${base} + interval '${(micros - origin).toString()} microseconds')`;

  const uuidVars = uuids.map((uuid, k) => {
    const ms = uuidV7Millis(uuid);
    const key = `$8::text || ':' || s.i || ':${k}'`;
    return ms === null
      ? `pg_temp.seed_uuid4(${key})`
      : `pg_temp.seed_uuid7(${shifted('s.base', ms * 1000n)}, ${key})`;
  });
  const isoVars = isoTimes.map(
    (iso) =>
      `to_char(${shifted('s.base', isoMicros(iso))} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`,
  );
  const vars = `CREATE TEMP TABLE seed_vars ON COMMIT DROP AS
SELECT s.i, s.base, pg_temp.seed_uuid4($8::text || ':context:' || (s.i / $7::int)) AS ctx,
       ARRAY[${uuidVars.join(', ') || "''"}]::text[] AS u,
       ARRAY[${isoVars.join(', ') || "''"}]::text[] AS ts
  FROM (SELECT i, $5::timestamptz + i * ($6::float8 * interval '1 millisecond') AS base
          FROM generate_series($1::int, $2::int - 1) AS i
         WHERE i % $3::int = ANY ($4::int[])) AS s`;

  const textExpr = (text: string): string => {
    const parts: string[] = [];
    let at = 0;
    for (const match of text.matchAll(variable)) {
      const value = match[0];
      const index = match.index ?? 0;
      if (index > at) {
        parts.push(literal(text.slice(at, index)));
      }
      if (value === template.contextId) {
        parts.push('v.ctx');
      } else if (uuids.includes(value)) {
        parts.push(`v.u[${uuids.indexOf(value) + 1}]`);
      } else {
        parts.push(`v.ts[${isoTimes.indexOf(value) + 1}]`);
      }
      at = index + value.length;
    }
    if (at < text.length || parts.length === 0) {
      parts.push(literal(text.slice(at)));
    }
    return parts.join(' || ');
  };

  const inserts = template.tables.map((table) => {
    const messageId = table.columns.findIndex((c) => c.name === 'message_id');
    const rows = table.rows.map((row, ord) => {
      const values = table.columns.map((column, index) => {
        const value = row[index] ?? null;
        if (value === null) {
          return `NULL::${column.type}`;
        }
        if (column.type === TIMESTAMPTZ) {
          return shifted('v.base', BigInt(value));
        }
        if (table.table === 'ops.message_ids' && column.name === 'message_digest') {
          const canonical = template.digested.get(row[messageId] ?? '');
          if (canonical !== undefined) {
            return `encode(sha256(convert_to(${textExpr(canonical)}, 'UTF8')), 'hex')`;
          }
        }
        return `(${textExpr(value)})::${column.type}`;
      });
      return `(${ord}, ${values.join(', ')})`;
    });
    const names = table.columns.map((c) => c.name);
    return `INSERT INTO ${table.table} (${names.join(', ')})
SELECT ${names.map((n) => `r.${n}`).join(', ')}
  FROM pg_temp.seed_vars AS v
 CROSS JOIN LATERAL (VALUES ${rows.join(',\n  ')}) AS r(seed_ord, ${names.join(', ')})
 ORDER BY v.i, r.seed_ord`;
  });
  return { vars, inserts };
}

/** The millisecond timestamp of a UUIDv7, or null for another version. */
function uuidV7Millis(uuid: string): bigint | null {
  return uuid[14] === '7' ? BigInt(`0x${uuid.slice(0, 8)}${uuid.slice(9, 13)}`) : null;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function isoMicros(iso: string): bigint {
  return BigInt(Date.parse(iso)) * 1000n;
}

function literal(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

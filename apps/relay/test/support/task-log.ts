import { tenantIdOf, type TenantId } from '@lib/ids';
/**
 * Writes realistic task events into the log the way the task-service does (`appendToStream` inside a
 * transaction, the task's view row with the first event, optionally a `pg_notify` task notice), with knobs
 * that make transactions commit out of sequence order, and reads the log back for comparisons.
 */
import type { Message, TaskStateName } from '@lib/a2a-protocol';
import {
  appendToStream,
  ConcurrencyConflict,
  NOTICE_CHANNEL,
  type EventMetadata,
  type Notice,
} from '@lib/event-store';
import { TASK_EVENT_SCHEMA_VERSION, taskStreamId, type TaskEvent } from '@lib/task-domain';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Pool, PoolClient } from 'pg';

/** A task the writer appends to; `contextId` and `agentId` are what the relay joins in from the view. */
export interface LogTask {
  tenantId: TenantId;
  taskId: string;
  contextId: string;
  agentId: string;
}

/** One row of `events.messages`, as the tests compare it with the topic. */
export interface LogEntry {
  eventId: string;
  tenantId: string;
  streamId: string;
  taskId: string;
  generation: number;
  globalPosition: string;
  transactionId: string;
  type: string;
  schemaVersion: number;
  data: unknown;
  metadata: EventMetadata;
  recordedAt: string;
}

/** A relay position in (transaction id, global position) order. */
export interface Cursor {
  transactionId: string;
  position: string;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export function randomInt(min: number, max: number): number {
  return min + Math.floor(Math.random() * (max - min + 1));
}

export function newTasks(tenants: readonly string[], count: number, agentId = 'echo'): LogTask[] {
  return Array.from({ length: count }, (_, i) => ({
    tenantId: tenantIdOf(tenants[i % tenants.length] ?? 'relay-test'),
    taskId: randomUUID(),
    contextId: randomUUID(),
    agentId,
  }));
}

const STATES: TaskStateName[] = [
  'TASK_STATE_WORKING',
  'TASK_STATE_INPUT_REQUIRED',
  'TASK_STATE_WORKING',
  'TASK_STATE_AUTH_REQUIRED',
];

/** A realistic event for generation `generation` of `task` (TaskSubmitted first, then a mix). */
export function taskEventAt(task: LogTask, generation: number): TaskEvent {
  const at = new Date().toISOString();
  const ref = { taskId: task.taskId, contextId: task.contextId };
  if (generation === 1) {
    const message: Message = {
      messageId: randomUUID(),
      role: 'ROLE_USER',
      parts: [{ text: `task ${task.taskId}` }],
      ...ref,
    };
    return {
      type: 'TaskSubmitted',
      data: { ...ref, agentId: task.agentId, ownerId: 'alice', message, submittedAt: at },
    };
  }
  switch ((generation - 2) % 5) {
    case 0:
      return {
        type: 'TaskLeaseGranted',
        data: { leaseEpoch: generation, workerId: 'w-1', expiresAt: at, attempt: 1 },
      };
    case 1:
      return {
        type: 'TaskStatusUpdated',
        data: { status: { state: STATES[generation % STATES.length]!, timestamp: at } },
      };
    case 2:
      return {
        type: 'ArtifactChunkAppended',
        data: {
          artifact: { artifactId: `a-${task.taskId}`, parts: [{ text: `chunk ${generation}` }] },
          append: generation > 4,
          lastChunk: false,
          metadata: { generation },
        },
      };
    case 3:
      return {
        type: 'AgentMessageAppended',
        data: {
          message: {
            messageId: randomUUID(),
            role: 'ROLE_AGENT',
            parts: [{ text: `note ${generation}` }],
            ...ref,
          },
        },
      };
    default:
      return {
        type: 'TaskStatusUpdated',
        data: {
          status: {
            state: 'TASK_STATE_WORKING',
            timestamp: at,
            message: {
              messageId: randomUUID(),
              role: 'ROLE_AGENT',
              parts: [{ text: `step ${generation}` }],
              ...ref,
            },
          },
        },
      };
  }
}

/** How one write transaction behaves. */
export interface WriteShape {
  /** Tasks to append to, in one transaction (sorted by stream id inside, so writers never deadlock). */
  tasks: LogTask[];
  /** Events appended to each task. */
  eventsPerTask: number;
  /** `SELECT pg_current_xact_id()` right after BEGIN: the transaction id is taken before anything else. */
  xidFirst?: boolean;
  /** Sleep after BEGIN (and the early xid), before reading the stream versions. */
  sleepBeforeAppendMs?: number;
  /** Sleep after the appends, before COMMIT: positions are taken, the commit comes late. */
  sleepBeforeCommitMs?: number;
  /** `pg_notify` a task notice per task, like the task-service. */
  notify?: boolean;
  /** End with ROLLBACK instead of COMMIT. */
  rollback?: boolean;
  /** A savepoint rolled back inside the transaction, with one extra event for the first task in it. */
  rolledBackSavepoint?: boolean;
}

export interface WriteResult {
  /** Event ids committed (empty when rolled back). */
  eventIds: string[];
  /** Event ids written and then rolled back (whole transaction or savepoint). */
  rolledBackIds: string[];
  /** `performance.now()` right after COMMIT returned. */
  committedAt: number;
  /** Attempts that hit a concurrency conflict and were retried. */
  retries: number;
}

const MAX_TRIES = 200;

function traceparent(): string {
  const hex = (n: number) =>
    Array.from({ length: n }, () => Math.floor(Math.random() * 16).toString(16)).join('');
  return `00-${hex(32)}-${hex(16)}-01`;
}

function isRetryable(error: unknown): boolean {
  if (error instanceof ConcurrencyConflict) {
    return true;
  }
  // deadlock_detected, serialization_failure, unique_violation (a racing stream creation)
  const code = (error as { code?: string }).code;
  return code === '40P01' || code === '40001' || code === '23505';
}

async function currentVersion(client: PoolClient, task: LogTask): Promise<number> {
  const result = await client.query<{ version: number }>(
    'SELECT version FROM events.streams WHERE tenant_id = $1 AND stream_id = $2',
    [task.tenantId, taskStreamId(task.tenantId, task.taskId)],
  );
  return result.rows[0]?.version ?? 0;
}

/** Appends `count` events to `task` at its current version, inside the caller's transaction. */
export async function appendEvents(
  client: PoolClient,
  task: LogTask,
  count: number,
  notify: boolean,
): Promise<string[]> {
  const version = await currentVersion(client, task);
  const events = Array.from({ length: count }, (_, i) => ({
    event: taskEventAt(task, version + i + 1),
    schemaVersion: TASK_EVENT_SCHEMA_VERSION,
  }));
  const metadata: EventMetadata = {
    actor: { kind: version === 0 ? 'caller' : 'agent-worker', id: 'relay-test' },
    binding: 'test',
    ...(Math.random() < 0.5 ? { traceparent: traceparent() } : {}),
  };
  const stored = await appendToStream(
    client,
    task.tenantId,
    taskStreamId(task.tenantId, task.taskId),
    version,
    events,
    metadata,
  );
  if (version === 0) {
    await client.query(
      `INSERT INTO read.task_view
         (tenant_id, task_id, agent_id, owner_id, context_id, state, status_timestamp, version, task)
       VALUES ($1, $2, $3, 'alice', $4, 'TASK_STATE_SUBMITTED', now(), $5, $6)`,
      [
        task.tenantId,
        task.taskId,
        task.agentId,
        task.contextId,
        count,
        JSON.stringify({ id: task.taskId, contextId: task.contextId }),
      ],
    );
  }
  if (notify) {
    const notice: Notice = { k: 'task', t: task.tenantId, id: task.taskId, v: version + count };
    await client.query('SELECT pg_notify($1, $2)', [NOTICE_CHANNEL, JSON.stringify(notice)]);
  }
  return stored.map((e) => e.eventId);
}

/** Runs one write transaction of the given shape; retried from the start on a concurrency conflict. */
export async function writeTransaction(pool: Pool, shape: WriteShape): Promise<WriteResult> {
  const tasks = [...shape.tasks].sort((a, b) =>
    taskStreamId(a.tenantId, a.taskId).localeCompare(taskStreamId(b.tenantId, b.taskId)),
  );
  for (let attempt = 0; ; attempt++) {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      if (shape.xidFirst) {
        await client.query('SELECT pg_current_xact_id()');
      }
      if (shape.sleepBeforeAppendMs) {
        await sleep(shape.sleepBeforeAppendMs);
      }
      const rolledBackIds: string[] = [];
      if (shape.rolledBackSavepoint && tasks[0]) {
        await client.query('SAVEPOINT doomed');
        rolledBackIds.push(...(await appendEvents(client, tasks[0], 1, false)));
        await client.query('ROLLBACK TO SAVEPOINT doomed');
      }
      const eventIds: string[] = [];
      for (const task of tasks) {
        eventIds.push(...(await appendEvents(client, task, shape.eventsPerTask, !!shape.notify)));
      }
      if (shape.sleepBeforeCommitMs) {
        await sleep(shape.sleepBeforeCommitMs);
      }
      if (shape.rollback) {
        await client.query('ROLLBACK');
        return {
          eventIds: [],
          rolledBackIds: [...rolledBackIds, ...eventIds],
          committedAt: performance.now(),
          retries: attempt,
        };
      }
      await client.query('COMMIT');
      return { eventIds, rolledBackIds, committedAt: performance.now(), retries: attempt };
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      if (!isRetryable(error) || attempt >= MAX_TRIES) {
        throw error;
      }
      await sleep(randomInt(0, 3));
    } finally {
      client.release();
    }
  }
}

export interface WriterLoadOptions {
  /** Concurrent writers (each holds one connection at a time). */
  writers: number;
  tasks: LogTask[];
  /** Stop once this many events are committed. */
  events: number;
  /** Share of transactions that take their transaction id first and commit late (0..1). */
  earlyXidShare?: number;
  /** Share of transactions that append to two tasks (0..1). */
  multiTaskShare?: number;
  /** Upper bound of the random sleep before COMMIT, in ms. */
  maxSleepMs?: number;
  /** Range of the sleep between taking the transaction id and appending (early-xid transactions), in ms. */
  earlyXidSleepMs?: [number, number];
  /** Target events per second over all writers (unpaced when absent). */
  eventsPerSecond?: number;
  /** `pg_notify` like the task-service. */
  notify?: boolean;
  /** Called after every committed transaction with the running total. */
  onProgress?: (committed: number) => void;
  /** Called after every committed transaction, in the order the COMMITs returned. */
  onCommit?: (result: WriteResult) => void;
  /** Give up (reject) after this long. */
  timeoutMs?: number;
  /**
   * Points the writers do not pass before something happened elsewhere: once `at` events are reserved, no
   * writer starts another transaction until `open` settles. A test that acts on a process *while* the load
   * runs holds the load with these, instead of hoping to be quick enough.
   */
  gates?: readonly WriterGate[];
}

/** See {@link WriterLoadOptions.gates}. */
export interface WriterGate {
  at: number;
  open: Promise<unknown>;
}

export interface WriterLoadResult {
  committed: number;
  transactions: number;
  retries: number;
  earlyXidTransactions: number;
  elapsedMs: number;
}

/**
 * Concurrent writers appending to random tasks until `events` are committed. With `earlyXidShare`, some
 * transactions take their transaction id at BEGIN and append after a sleep, so transactions commit out of
 * both sequence and transaction-id order; every transaction sleeps a random few ms before COMMIT.
 */
export async function runWriters(
  pool: Pool,
  options: WriterLoadOptions,
): Promise<WriterLoadResult> {
  const started = performance.now();
  const deadline = started + (options.timeoutMs ?? 60_000);
  const maxSleep = options.maxSleepMs ?? 8;
  let committed = 0;
  let reserved = 0;
  let transactions = 0;
  let retries = 0;
  let earlyXidTransactions = 0;
  const pick = (): LogTask => options.tasks[randomInt(0, options.tasks.length - 1)]!;
  const writer = async (): Promise<void> => {
    while (reserved < options.events) {
      for (const gate of options.gates ?? []) {
        if (reserved >= gate.at) {
          await gate.open;
        }
      }
      if (reserved >= options.events) {
        break;
      }
      if (performance.now() > deadline) {
        throw new Error(`writers timed out after ${committed}/${options.events} events`);
      }
      const multi = Math.random() < (options.multiTaskShare ?? 0) && options.tasks.length > 1;
      const early = Math.random() < (options.earlyXidShare ?? 0);
      const first = pick();
      let second = pick();
      while (multi && second.taskId === first.taskId) {
        second = pick();
      }
      const tasks = multi ? [first, second] : [first];
      const eventsPerTask = Math.max(
        1,
        Math.min(randomInt(1, 3), Math.floor((options.events - reserved) / tasks.length)),
      );
      reserved += eventsPerTask * tasks.length;
      if (options.eventsPerSecond) {
        const due = started + (reserved / options.eventsPerSecond) * 1_000;
        const wait = due - performance.now();
        if (wait > 0) {
          await sleep(wait);
        }
      }
      const result = await writeTransaction(pool, {
        tasks,
        eventsPerTask,
        xidFirst: early,
        sleepBeforeAppendMs: early ? randomInt(...(options.earlyXidSleepMs ?? [1, maxSleep])) : 0,
        sleepBeforeCommitMs: randomInt(0, maxSleep),
        notify: options.notify ?? false,
      });
      committed += result.eventIds.length;
      transactions++;
      retries += result.retries;
      earlyXidTransactions += early ? 1 : 0;
      options.onCommit?.(result);
      options.onProgress?.(committed);
    }
  };
  await Promise.all(Array.from({ length: options.writers }, () => writer()));
  return {
    committed,
    transactions,
    retries,
    earlyXidTransactions,
    elapsedMs: performance.now() - started,
  };
}

interface LogRowSql {
  event_id: string;
  tenant_id: string;
  stream_id: string;
  stream_version: number;
  global_position: string;
  transaction_id: string;
  event_type: string;
  schema_version: number;
  data: unknown;
  metadata: EventMetadata;
  recorded_at: Date;
}

/** The whole log in (transaction id, global position) order (the columns, not their text aliases). */
export async function readLog(pool: Pool): Promise<LogEntry[]> {
  const result = await pool.query<LogRowSql>(
    `SELECT event_id, tenant_id, stream_id, stream_version, global_position::text AS global_position,
            transaction_id::text AS transaction_id, event_type, schema_version, data, metadata, recorded_at
       FROM events.messages m ORDER BY m.transaction_id, m.global_position`,
  );
  return result.rows.map((row) => ({
    eventId: row.event_id,
    tenantId: row.tenant_id,
    streamId: row.stream_id,
    taskId: row.stream_id.split(':').slice(2).join(':'),
    generation: row.stream_version,
    globalPosition: row.global_position,
    transactionId: row.transaction_id,
    type: row.event_type,
    schemaVersion: row.schema_version,
    data: row.data,
    metadata: row.metadata,
    recordedAt: row.recorded_at.toISOString(),
  }));
}

/** The last row of the log in relay order; null when the log is empty. */
export async function lastLogCursor(pool: Pool): Promise<Cursor | null> {
  const result = await pool.query<{ transaction_id: string; global_position: string }>(
    `SELECT transaction_id::text AS transaction_id, global_position::text AS global_position
       FROM events.messages m ORDER BY m.transaction_id DESC, m.global_position DESC LIMIT 1`,
  );
  const row = result.rows[0];
  return row ? { transactionId: row.transaction_id, position: row.global_position } : null;
}

/** The relay's checkpoint (`ops.relay_checkpoints`); null before its first batch. */
export async function relayCheckpoint(pool: Pool, relayName: string): Promise<Cursor | null> {
  const result = await pool.query<{ last_transaction_id: string; last_position: string }>(
    `SELECT last_transaction_id::text AS last_transaction_id, last_position::text AS last_position
       FROM ops.relay_checkpoints WHERE relay_name = $1`,
    [relayName],
  );
  const row = result.rows[0];
  return row ? { transactionId: row.last_transaction_id, position: row.last_position } : null;
}

/**
 * Waits until the relay's checkpoint is the last row of the log (it has published everything committed);
 * returns how long that took. Throws with both positions after `timeoutMs`.
 */
export async function waitForCatchUp(
  pool: Pool,
  relayName: string,
  timeoutMs: number,
): Promise<number> {
  const started = performance.now();
  for (;;) {
    const [last, checkpoint] = await Promise.all([
      lastLogCursor(pool),
      relayCheckpoint(pool, relayName),
    ]);
    if (
      last &&
      checkpoint &&
      last.transactionId === checkpoint.transactionId &&
      last.position === checkpoint.position
    ) {
      return performance.now() - started;
    }
    if (performance.now() - started > timeoutMs) {
      throw new Error(
        `relay ${relayName} did not catch up within ${timeoutMs} ms: checkpoint ${JSON.stringify(
          checkpoint,
        )}, last log row ${JSON.stringify(last)}`,
      );
    }
    await sleep(50);
  }
}

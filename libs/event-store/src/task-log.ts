import { tenantIdOf, type TenantId } from '@lib/ids';
import {
  TASK_EVENT_SCHEMA_VERSION,
  TASK_EVENT_TYPES,
  type TaskEvent,
  type TaskEventType,
} from '@lib/task-domain';
import type { Pool, PoolClient } from 'pg';
import type { EventMetadata } from './event-store';

/** The one method of a pool or client the log's reads use (tests pass wrappers that count or fail queries). */
export type LogQueryable = Pick<Pool, 'query'>;

/** A position in commit-safe log order: (writing transaction id, global position). */
export interface LogCursor {
  transactionId: string;
  position: string;
}

export const LOG_START: LogCursor = { transactionId: '0', position: '0' };

/** A task stream of a tenant. */
export interface StreamRef {
  tenantId: TenantId;
  streamId: string;
}

/** One task stream's history as the writer needs it: its events and the idempotency keys they carry. */
export interface TaskStreamHistory {
  events: TaskEvent[];
  idempotencyKeys: string[];
}

/** One event of a task stream with its generation (the stream version after it). */
export interface VersionedTaskEvent {
  version: number;
  event: TaskEvent;
}

/** An event of the log in commit order (the relay's read), with its task's context and agent. */
export interface CommittedTaskEvent {
  eventId: string;
  tenantId: TenantId;
  streamId: string;
  streamVersion: number;
  globalPosition: string;
  transactionId: string;
  event: TaskEvent;
  schemaVersion: number;
  metadata: EventMetadata;
  recordedAt: string;
  /** From the stream's first event (its TaskSubmitted). */
  contextId: string | null;
  agentId: string | null;
}

/** One event of a task stream as an operator's timeline shows it. */
export interface StoredTaskEvent {
  generation: number;
  eventId: string;
  event: TaskEvent;
  schemaVersion: number;
  metadata: EventMetadata;
  recordedAt: Date;
}

/** A stream with events in the log after a cursor, and the cursor after its last such event. */
export interface ChangedStream extends StreamRef {
  cursor: LogCursor;
}

/** The log holds an event of a registered type at a schema version this code cannot read. */
export class UnreadableTaskEvent extends Error {
  override readonly name = 'UnreadableTaskEvent';

  constructor(
    readonly type: string,
    readonly schemaVersion: number,
  ) {
    super(
      `${type} at schema version ${schemaVersion} cannot be read: this version reads version ` +
        `${TASK_EVENT_SCHEMA_VERSION} and has no upcaster for it`,
    );
  }
}

const REGISTERED: ReadonlySet<string> = new Set<TaskEventType>(TASK_EVENT_TYPES);

/** The columns of `events.messages` that make an event. */
interface EventColumns {
  event_type: string;
  schema_version: number;
  data: unknown;
}

/**
 * The domain event of a row of `events.messages`: the one place a row becomes a {@link TaskEvent}. A registered
 * type must be at the schema version this code reads (there is no upcaster yet), else {@link UnreadableTaskEvent}:
 * deciding or streaming on a payload read under the wrong shape would be worse than stopping. A type this code
 * does not know (written by a newer version) is passed on: the domain ignores it (`evolve`, `toStreamResponse`).
 */
export function taskEventOf(row: EventColumns): TaskEvent {
  if (REGISTERED.has(row.event_type) && row.schema_version !== TASK_EVENT_SCHEMA_VERSION) {
    throw new UnreadableTaskEvent(row.event_type, row.schema_version);
  }
  return { type: row.event_type, data: row.data } as TaskEvent;
}

/**
 * Most streams checked by one version query. One statement covers every task an ingress replica follows at
 * the scale measured (10,000); beyond that the poll sends one statement per this many tasks.
 */
const VERSIONS_PER_QUERY = 10_000;

/** Only transactions older than every one still running: nothing can later appear behind a cursor. */
const COMMITTED_AFTER = `(m.transaction_id, m.global_position) > ($1::xid8, $2::bigint)
        AND m.transaction_id < pg_snapshot_xmin(pg_current_snapshot())`;

/**
 * The reads of the task log (`events.messages`, `events.streams`), each in the shape its reader needs, every
 * event mapped by {@link taskEventOf}. The writes are `events.append_task_batch` (the task-service's writer).
 */
export class TaskLog {
  constructor(private readonly db: LogQueryable) {}

  /** Every stream of a category (the text before a stream id's first `:`), by tenant and stream id. */
  async streamsOf(category: string): Promise<StreamRef[]> {
    const result = await this.db.query<{ tenant_id: string; stream_id: string }>(
      `SELECT tenant_id, stream_id FROM events.streams WHERE stream_id LIKE $1
        ORDER BY tenant_id, stream_id`,
      [`${category}:%`],
    );
    return result.rows.map((row) => ({
      tenantId: tenantIdOf(row.tenant_id),
      streamId: row.stream_id,
    }));
  }

  /**
   * The histories of several streams (of one tenant or many) in one query, by stream id; a stream that does
   * not exist is absent. `within`: in the caller's transaction.
   */
  async histories(
    streams: readonly StreamRef[],
    within?: PoolClient,
  ): Promise<Map<string, TaskStreamHistory>> {
    const result = await (within ?? this.db).query<
      EventColumns & { stream_id: string; idempotency_key: string | null }
    >({
      name: 'task-log.histories',
      text: `SELECT m.stream_id, m.event_type, m.schema_version, m.data,
                    m.metadata ->> 'idempotencyKey' AS idempotency_key
               FROM unnest($1::text[], $2::text[]) AS s(tenant_id, stream_id)
               JOIN events.messages m ON m.tenant_id = s.tenant_id AND m.stream_id = s.stream_id
              ORDER BY m.stream_id, m.stream_version`,
      values: [streams.map((s) => s.tenantId), streams.map((s) => s.streamId)],
    });
    const histories = new Map<string, TaskStreamHistory>();
    for (const row of result.rows) {
      let history = histories.get(row.stream_id);
      if (!history) {
        history = { events: [], idempotencyKeys: [] };
        histories.set(row.stream_id, history);
      }
      history.events.push(taskEventOf(row));
      if (row.idempotency_key) {
        history.idempotencyKeys.push(row.idempotency_key);
      }
    }
    return histories;
  }

  /**
   * The trace context of the stream's latest message (its `TaskSubmitted` or `UserMessageAppended`): the
   * request the task's queued work is for.
   */
  async requestTrace(stream: StreamRef, within?: PoolClient): Promise<string | undefined> {
    const result = await (within ?? this.db).query<{ traceparent: string | null }>({
      name: 'task-log.request-trace',
      text: `SELECT metadata ->> 'traceparent' AS traceparent FROM events.messages
              WHERE tenant_id = $1 AND stream_id = $2
                AND event_type IN ('TaskSubmitted', 'UserMessageAppended')
              ORDER BY stream_version DESC LIMIT 1`,
      values: [stream.tenantId, stream.streamId],
    });
    return result.rows[0]?.traceparent ?? undefined;
  }

  /** At most `limit` events of one stream after generation `after`, in generation order. */
  async eventsAfter(
    stream: StreamRef,
    after: number,
    limit: number,
  ): Promise<VersionedTaskEvent[]> {
    const result = await this.db.query<EventColumns & { stream_version: number }>(
      `SELECT stream_version, event_type, schema_version, data FROM events.messages
        WHERE tenant_id = $1 AND stream_id = $2 AND stream_version > $3
        ORDER BY stream_version
        LIMIT $4`,
      [stream.tenantId, stream.streamId, after, limit],
    );
    return result.rows.map((row) => ({ version: row.stream_version, event: taskEventOf(row) }));
  }

  /**
   * The streams among `watched` whose version (`events.streams`, written in the append's transaction) is past
   * the position given, with that version: index in `watched` → version. One statement per
   * {@link VERSIONS_PER_QUERY} streams.
   */
  async moved(
    watched: readonly (StreamRef & { position: number })[],
  ): Promise<Map<number, number>> {
    const moved = new Map<number, number>();
    for (let from = 0; from < watched.length; from += VERSIONS_PER_QUERY) {
      const slice = watched.slice(from, from + VERSIONS_PER_QUERY);
      const result = await this.db.query<{ i: string; version: number }>(
        `SELECT w.i, s.version
           FROM unnest($1::text[], $2::text[], $3::int[]) WITH ORDINALITY
                  AS w(tenant_id, stream_id, position, i)
           JOIN events.streams s USING (tenant_id, stream_id)
          WHERE s.version > w.position`,
        [slice.map((w) => w.tenantId), slice.map((w) => w.streamId), slice.map((w) => w.position)],
      );
      for (const row of result.rows) {
        moved.set(from + Number(row.i) - 1, row.version);
      }
    }
    return moved;
  }

  /**
   * At most `limit` events after `cursor` in (transaction id, position) order, only from transactions older
   * than every transaction still running (`pg_snapshot_xmin`). Sequence values are not commit order: a
   * transaction that took a lower position may commit after a higher one is visible. Gating on xmin means
   * nothing can ever appear behind the cursor, so no event is skipped.
   */
  async committedAfter(cursor: LogCursor, limit: number): Promise<CommittedTaskEvent[]> {
    const result = await this.db.query<
      EventColumns & {
        event_id: string;
        tenant_id: string;
        stream_id: string;
        stream_version: number;
        global_position: string;
        transaction_id: string;
        metadata: EventMetadata;
        recorded_at: Date;
        context_id: string | null;
        agent_id: string | null;
      }
    >(
      `SELECT m.event_id, m.tenant_id, m.stream_id, m.stream_version, m.global_position,
              m.transaction_id::text AS transaction_id, m.event_type, m.schema_version, m.data,
              m.metadata, m.recorded_at, f.data ->> 'contextId' AS context_id,
              f.data ->> 'agentId' AS agent_id
         FROM events.messages m
         LEFT JOIN events.messages f
           ON f.tenant_id = m.tenant_id AND f.stream_id = m.stream_id AND f.stream_version = 1
        WHERE ${COMMITTED_AFTER}
        ORDER BY m.transaction_id, m.global_position
        LIMIT $3`,
      [cursor.transactionId, cursor.position, limit],
    );
    return result.rows.map((row) => ({
      eventId: row.event_id,
      tenantId: tenantIdOf(row.tenant_id),
      streamId: row.stream_id,
      streamVersion: row.stream_version,
      globalPosition: row.global_position,
      transactionId: row.transaction_id,
      event: taskEventOf(row),
      schemaVersion: row.schema_version,
      metadata: row.metadata,
      recordedAt: row.recorded_at.toISOString(),
      contextId: row.context_id,
      agentId: row.agent_id,
    }));
  }

  /**
   * The streams of the events read like {@link committedAfter} (at most `limit` events, so a stream may be
   * named more than once), each with the cursor after its event; no payload is read.
   */
  async changedAfter(cursor: LogCursor, limit: number): Promise<ChangedStream[]> {
    const result = await this.db.query<{
      tenant_id: string;
      stream_id: string;
      transaction_id: string;
      global_position: string;
    }>({
      name: 'task-log.changed-after',
      text: `SELECT m.tenant_id, m.stream_id, m.transaction_id::text AS transaction_id, m.global_position
               FROM events.messages m
              WHERE ${COMMITTED_AFTER}
              ORDER BY m.transaction_id, m.global_position
              LIMIT $3`,
      values: [cursor.transactionId, cursor.position, limit],
    });
    return result.rows.map((row) => ({
      tenantId: tenantIdOf(row.tenant_id),
      streamId: row.stream_id,
      cursor: { transactionId: row.transaction_id, position: row.global_position },
    }));
  }

  /** Where the log readable by {@link committedAfter} ends now: transactions older than every running one. */
  async horizon(): Promise<LogCursor> {
    const result = await this.db.query<{ xid: string }>({
      name: 'task-log.horizon',
      text: `SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS xid`,
    });
    return { transactionId: result.rows[0]?.xid ?? '0', position: '0' };
  }

  /**
   * At most `limit` events of the stream after generation `after`, oldest first; null when the tenant has no
   * stream of that id.
   */
  async timeline(
    stream: StreamRef,
    after: number,
    limit: number,
  ): Promise<StoredTaskEvent[] | null> {
    const result = await this.db.query<
      | (EventColumns & {
          stream_version: number;
          event_id: string;
          metadata: EventMetadata;
          recorded_at: Date;
        })
      | { stream_version: null }
    >({
      name: 'task-log.timeline',
      text: `SELECT m.stream_version, m.event_id, m.event_type, m.schema_version, m.data, m.metadata,
                    m.recorded_at
               FROM events.streams s
               LEFT JOIN LATERAL (
                 SELECT * FROM events.messages
                  WHERE tenant_id = s.tenant_id AND stream_id = s.stream_id AND stream_version > $3
                  ORDER BY stream_version LIMIT $4) m ON true
              WHERE s.tenant_id = $1 AND s.stream_id = $2`,
      values: [stream.tenantId, stream.streamId, after, limit],
    });
    if (result.rows.length === 0) {
      return null;
    }
    return result.rows.flatMap((row) =>
      row.stream_version === null
        ? []
        : [
            {
              generation: row.stream_version,
              eventId: row.event_id,
              event: taskEventOf(row),
              schemaVersion: row.schema_version,
              metadata: row.metadata,
              recordedAt: row.recorded_at,
            },
          ],
    );
  }

  /**
   * When the event at each given generation was recorded, by stream id; generations not (or not yet) in the
   * log are absent.
   */
  async recordedAt(
    tenantId: TenantId,
    generations: readonly { streamId: string; version: number }[],
  ): Promise<Map<string, Date>> {
    const result = await this.db.query<{ stream_id: string; recorded_at: Date }>({
      name: 'task-log.recorded-at',
      text: `SELECT m.stream_id, m.recorded_at
               FROM unnest($2::text[], $3::int[]) AS g(stream_id, version)
               JOIN events.messages m
                 ON m.tenant_id = $1 AND m.stream_id = g.stream_id AND m.stream_version = g.version`,
      values: [tenantId, generations.map((g) => g.streamId), generations.map((g) => g.version)],
    });
    return new Map(result.rows.map((row) => [row.stream_id, row.recorded_at]));
  }
}

import { TASK_STATES, type TaskStateName } from '@lib/a2a-protocol';
import type { EventMetadata } from '@lib/event-store';
import { taskIdOfStream, taskStreamId } from '@lib/task-domain';
import { InvalidInput, type TenantId } from '@lib/tenancy';
import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { timelineEntry, type TimelineEntry } from './task-timeline';
import { ADMIN_PG_POOL } from './tokens';

/** Largest page of tasks or events; the default is 50 tasks, 200 events. */
export const MAX_TASK_PAGE_SIZE = 500;

/** What a tenant's task listing filters on. */
export interface TaskQuery {
  tenantId: TenantId;
  agentId?: string;
  state?: string;
  contextId?: string;
  limit?: number;
  cursor?: string;
}

/** One task of a listing: what the view says about it, without its history and artifacts. */
export interface TaskSummary {
  taskId: string;
  contextId: string;
  agentId: string;
  ownerId: string;
  state: TaskStateName;
  statusTimestamp: string;
  version: number;
}

export interface TaskPage {
  tasks: TaskSummary[];
  nextCursor?: string;
}

/** The task's row in `ops.task_work`: queued, or leased to a worker session. */
export interface TaskWork {
  status: 'queued' | 'leased';
  attempt: number;
  queuedAt: string;
  leaseEpoch: number | null;
  workerId: string | null;
  leaseExpiresAt: string | null;
  cancelDeadline: string | null;
}

/** A task as stored: the view's row (the A2A task with its history and artifacts) and its work. */
export interface TaskDetail extends TaskSummary {
  tenantId: string;
  /** The A2A `Task` (ProtoJSON): id, contextId, status, history, artifacts, metadata. */
  task: unknown;
  /** Null when the task waits for nothing (idle, interrupted or terminal). */
  work: TaskWork | null;
}

export interface TimelinePage {
  events: TimelineEntry[];
  /** Pass as `after` for the next page; absent on the last one. */
  nextAfter?: number;
}

/** A task's latest state, as the live change stream sends it. */
export interface TaskChange {
  taskId: string;
  contextId: string;
  agentId: string;
  state: TaskStateName;
  version: number;
  statusTimestamp: string;
  /** When the event at `version` was recorded. */
  updatedAt: string | null;
}

/** A position in the log, in the relay's order: (transaction id, global position). */
export interface LogCursor {
  xid: string;
  position: string;
}

/** The tasks changed between two log positions (in transactions committed before the later one). */
export interface LogChanges {
  tasks: { tenantId: string; taskId: string }[];
  next: LogCursor;
  /** The read stopped at its limit: more changes may follow at once. */
  full: boolean;
}

const BASE64URL = /^[A-Za-z0-9_-]+$/;
/** A cursor's content: the last row's status time (UTC, to the microsecond) and its task id. */
const CURSOR = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}) (.+)$/s;
/** Most log rows one poll of the change stream reads. */
const CHANGE_SCAN_LIMIT = 5_000;

interface SummaryRow {
  task_id: string;
  context_id: string;
  agent_id: string;
  owner_id: string;
  state: TaskStateName;
  status_timestamp: Date;
  version: number;
}

const iso = (at: Date | null): string | null => (at ? at.toISOString() : null);

/**
 * The admin API's reads of tasks (docs/admin.md "Tasks"): a tenant's tasks from `read.task_view`, one task
 * with its work, its event timeline from `events.messages`, and what the live change stream needs.
 */
@Injectable()
export class TaskAdminStore {
  constructor(@Inject(ADMIN_PG_POOL) private readonly pool: Pool) {}

  /**
   * A page of the tenant's tasks, newest status first (ties by task id, descending). A listing of every
   * principal's tasks sorts the tenant's (or the agent's) view rows: no index serves it without the owner.
   */
  async list(query: TaskQuery): Promise<TaskPage> {
    const limit = query.limit ?? 50;
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_TASK_PAGE_SIZE) {
      throw invalid('limit', `must be an integer from 1 to ${MAX_TASK_PAGE_SIZE}`);
    }
    if (query.state !== undefined && !(TASK_STATES as readonly string[]).includes(query.state)) {
      throw invalid('state', `must be one of ${TASK_STATES.join(', ')}`);
    }
    const after = query.cursor === undefined ? null : decodeCursor(query.cursor);
    const result = await this.pool.query<SummaryRow & { cursor_key: string }>({
      name: 'admin-tasks.list',
      text: `SELECT task_id, context_id, agent_id, owner_id, state, status_timestamp, version,
                    to_char(status_timestamp AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') AS cursor_key
               FROM read.task_view
              WHERE tenant_id = $1 AND ($2::text IS NULL OR agent_id = $2)
                AND ($3::text IS NULL OR state = $3) AND ($4::text IS NULL OR context_id = $4)
                AND ($5::timestamp IS NULL
                     OR (status_timestamp, task_id) < ($5::timestamp AT TIME ZONE 'UTC', $6::text))
              ORDER BY status_timestamp DESC, task_id DESC
              LIMIT $7`,
      values: [
        query.tenantId,
        query.agentId ?? null,
        query.state ?? null,
        query.contextId ?? null,
        after?.key ?? null,
        after?.taskId ?? null,
        limit + 1,
      ],
    });
    const rows = result.rows.slice(0, limit);
    const tasks = rows.map(summaryOf);
    const last = rows.at(-1);
    return result.rows.length > limit && last
      ? { tasks, nextCursor: encodeCursor(last.cursor_key, last.task_id) }
      : { tasks };
  }

  /** The task as stored, or null when the tenant has no such task. */
  async get(tenantId: TenantId, taskId: string): Promise<TaskDetail | null> {
    const result = await this.pool.query<
      SummaryRow & {
        task: unknown;
        work_status: 'queued' | 'leased' | null;
        attempt: number | null;
        queued_at: Date | null;
        lease_epoch: string | null;
        worker_id: string | null;
        lease_expires_at: Date | null;
        cancel_deadline: Date | null;
      }
    >({
      name: 'admin-tasks.get',
      text: `SELECT v.task_id, v.context_id, v.agent_id, v.owner_id, v.state, v.status_timestamp, v.version,
                    v.task, w.status AS work_status, w.attempt, w.queued_at, w.lease_epoch, w.worker_id,
                    w.lease_expires_at, w.cancel_deadline
               FROM read.task_view v
               LEFT JOIN ops.task_work w ON w.tenant_id = v.tenant_id AND w.task_id = v.task_id
              WHERE v.tenant_id = $1 AND v.task_id = $2`,
      values: [tenantId, taskId],
    });
    const row = result.rows[0];
    if (!row) {
      return null;
    }
    return {
      tenantId,
      ...summaryOf(row),
      task: row.task,
      work:
        row.work_status === null
          ? null
          : {
              status: row.work_status,
              attempt: row.attempt ?? 0,
              queuedAt: iso(row.queued_at) ?? '',
              leaseEpoch: row.lease_epoch === null ? null : Number(row.lease_epoch),
              workerId: row.worker_id,
              leaseExpiresAt: iso(row.lease_expires_at),
              cancelDeadline: iso(row.cancel_deadline),
            },
    };
  }

  /**
   * The task stream's events after generation `after`, oldest first, as timeline entries; null when the
   * tenant has no stream of that id (a task, or an exchange answered with a bare message).
   */
  async timeline(
    tenantId: TenantId,
    taskId: string,
    after: number,
    limit: number,
  ): Promise<TimelinePage | null> {
    const streamId = taskStreamId(tenantId, taskId);
    const result = await this.pool.query<{
      stream_version: number;
      event_id: string;
      event_type: string;
      schema_version: number;
      data: unknown;
      metadata: EventMetadata;
      recorded_at: Date;
    }>({
      name: 'admin-tasks.timeline',
      text: `SELECT m.stream_version, m.event_id, m.event_type, m.schema_version, m.data, m.metadata,
                    m.recorded_at
               FROM events.streams s
               LEFT JOIN LATERAL (
                 SELECT * FROM events.messages
                  WHERE tenant_id = s.tenant_id AND stream_id = s.stream_id AND stream_version > $3
                  ORDER BY stream_version LIMIT $4) m ON true
              WHERE s.tenant_id = $1 AND s.stream_id = $2`,
      values: [tenantId, streamId, after, limit + 1],
    });
    if (result.rows.length === 0) {
      return null;
    }
    const rows = result.rows.filter((row) => row.stream_version !== null);
    const events = rows.slice(0, limit).map((row) =>
      timelineEntry({
        generation: row.stream_version,
        eventId: row.event_id,
        type: row.event_type,
        schemaVersion: row.schema_version,
        data: row.data,
        metadata: row.metadata,
        recordedAt: row.recorded_at,
      }),
    );
    const last = events.at(-1);
    return rows.length > limit && last ? { events, nextAfter: last.generation } : { events };
  }

  /** The current state of some of the tenant's tasks (those without a view row are left out). */
  async changes(tenantId: string, taskIds: readonly string[]): Promise<TaskChange[]> {
    const result = await this.pool.query<
      Omit<SummaryRow, 'owner_id'> & { recorded_at: Date | null }
    >({
      name: 'admin-tasks.changes',
      text: `SELECT v.task_id, v.context_id, v.agent_id, v.state, v.version, v.status_timestamp, m.recorded_at
               FROM unnest($2::text[], $3::text[]) AS t(task_id, stream_id)
               JOIN read.task_view v ON v.tenant_id = $1 AND v.task_id = t.task_id
               LEFT JOIN events.messages m
                 ON m.tenant_id = $1 AND m.stream_id = t.stream_id AND m.stream_version = v.version`,
      values: [tenantId, taskIds, taskIds.map((id) => taskStreamId(tenantId, id))],
    });
    return result.rows.map((row) => ({
      taskId: row.task_id,
      contextId: row.context_id,
      agentId: row.agent_id,
      state: row.state,
      version: row.version,
      statusTimestamp: row.status_timestamp.toISOString(),
      updatedAt: iso(row.recorded_at),
    }));
  }

  /** Where the log ends for {@link changedSince}: transactions older than every running one. */
  async logHorizon(): Promise<LogCursor> {
    const result = await this.pool.query<{ xid: string }>({
      name: 'admin-tasks.log-horizon',
      text: `SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS xid`,
    });
    return { xid: result.rows[0]?.xid ?? '0', position: '0' };
  }

  /**
   * The tasks whose streams have events after `from`, read in the relay's order and only from transactions older than the
   * oldest running one, so that a transaction committing late is never skipped.
   */
  async changedSince(from: LogCursor): Promise<LogChanges> {
    const result = await this.pool.query<{
      tenant_id: string;
      stream_id: string;
      xid: string;
      global_position: string;
    }>({
      name: 'admin-tasks.changed-since',
      text: `SELECT tenant_id, stream_id, transaction_id::text AS xid, global_position
               FROM events.messages
              WHERE (transaction_id, global_position) > ($1::xid8, $2::bigint)
                AND transaction_id < pg_snapshot_xmin(pg_current_snapshot())
              ORDER BY transaction_id, global_position
              LIMIT $3`,
      values: [from.xid, from.position, CHANGE_SCAN_LIMIT],
    });
    const last = result.rows.at(-1);
    return {
      tasks: result.rows.flatMap((row) => {
        const taskId = taskIdOfStream(row.tenant_id, row.stream_id);
        return taskId === null ? [] : [{ tenantId: row.tenant_id, taskId }];
      }),
      next: last ? { xid: last.xid, position: last.global_position } : from,
      full: result.rows.length === CHANGE_SCAN_LIMIT,
    };
  }
}

function summaryOf(row: SummaryRow): TaskSummary {
  return {
    taskId: row.task_id,
    contextId: row.context_id,
    agentId: row.agent_id,
    ownerId: row.owner_id,
    state: row.state,
    statusTimestamp: row.status_timestamp.toISOString(),
    version: row.version,
  };
}

function invalid(field: string, description: string): InvalidInput {
  return new InvalidInput(`query parameter ${field} ${description}`, [{ field, description }]);
}

/** The cursor of the page after the row with status time `key` (see {@link CURSOR}) and id `taskId`. */
function encodeCursor(key: string, taskId: string): string {
  return Buffer.from(`${key} ${taskId}`, 'utf8').toString('base64url');
}

/** The row a cursor from {@link encodeCursor} stands for; anything else is a 400 naming `cursor`. */
function decodeCursor(cursor: string): { key: string; taskId: string } {
  const text = BASE64URL.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const [, key, taskId] = CURSOR.exec(text) ?? [];
  if (
    key === undefined ||
    taskId === undefined ||
    Number.isNaN(Date.parse(`${key}Z`)) ||
    encodeCursor(key, taskId) !== cursor
  ) {
    throw invalid('cursor', 'is not one this listing gave out');
  }
  return { key, taskId };
}

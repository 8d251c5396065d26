import { TASK_STATES, type TaskStateName } from '@lib/a2a-protocol';
import { TaskLog, type LogCursor } from '@lib/event-store';
import { taskIdOfStream, taskStreamId } from '@lib/task-domain';
import { InvalidInput, taskIdOf, type TenantId } from '@lib/tenancy';
import { WorkQueue, type TaskWork } from '@lib/work-queue';
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

/** A task as stored: the view's row (the A2A task with its history and artifacts) and its work. */
export interface TaskDetail extends TaskSummary {
  tenantId: TenantId;
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

/** The tasks changed between two log positions (in transactions committed before the later one). */
export interface LogChanges {
  tasks: { tenantId: TenantId; taskId: string }[];
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
 * with its work, its event timeline from the log (`TaskLog`), and what the live change stream needs.
 */
@Injectable()
export class TaskAdminStore {
  private readonly log: TaskLog;

  constructor(
    @Inject(ADMIN_PG_POOL) private readonly pool: Pool,
    private readonly work: WorkQueue,
  ) {
    this.log = new TaskLog(pool);
  }

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
    const result = await this.pool.query<SummaryRow & { task: unknown }>({
      name: 'admin-tasks.get',
      text: `SELECT task_id, context_id, agent_id, owner_id, state, status_timestamp, version, task
               FROM read.task_view
              WHERE tenant_id = $1 AND task_id = $2`,
      values: [tenantId, taskId],
    });
    const row = result.rows[0];
    if (!row) {
      return null;
    }
    const work = await this.work.workOf({ tenantId, taskId: taskIdOf(taskId) });
    return { tenantId, ...summaryOf(row), task: row.task, work };
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
    const stored = await this.log.timeline(
      { tenantId, streamId: taskStreamId(tenantId, taskId) },
      after,
      limit + 1,
    );
    if (stored === null) {
      return null;
    }
    const events = stored.slice(0, limit).map(timelineEntry);
    const last = events.at(-1);
    return stored.length > limit && last ? { events, nextAfter: last.generation } : { events };
  }

  /** The current state of some of the tenant's tasks (those without a view row are left out). */
  async changes(tenantId: TenantId, taskIds: readonly string[]): Promise<TaskChange[]> {
    const result = await this.pool.query<Omit<SummaryRow, 'owner_id'>>({
      name: 'admin-tasks.changes',
      text: `SELECT task_id, context_id, agent_id, state, version, status_timestamp
               FROM read.task_view WHERE tenant_id = $1 AND task_id = ANY($2::text[])`,
      values: [tenantId, taskIds],
    });
    const recordedAt = await this.log.recordedAt(
      tenantId,
      result.rows.map((row) => ({
        streamId: taskStreamId(tenantId, row.task_id),
        version: row.version,
      })),
    );
    return result.rows.map((row) => ({
      taskId: row.task_id,
      contextId: row.context_id,
      agentId: row.agent_id,
      state: row.state,
      version: row.version,
      statusTimestamp: row.status_timestamp.toISOString(),
      updatedAt: iso(recordedAt.get(taskStreamId(tenantId, row.task_id)) ?? null),
    }));
  }

  /** Where the log ends for {@link changedSince}: transactions older than every running one. */
  logHorizon(): Promise<LogCursor> {
    return this.log.horizon();
  }

  /**
   * The tasks whose streams have events after `from`, read in the relay's order and only from transactions
   * older than the oldest running one, so that a transaction committing late is never skipped.
   */
  async changedSince(from: LogCursor): Promise<LogChanges> {
    const changed = await this.log.changedAfter(from, CHANGE_SCAN_LIMIT);
    return {
      tasks: changed.flatMap((row) => {
        const taskId = taskIdOfStream(row.tenantId, row.streamId);
        return taskId === null ? [] : [{ tenantId: row.tenantId, taskId }];
      }),
      next: changed.at(-1)?.cursor ?? from,
      full: changed.length === CHANGE_SCAN_LIMIT,
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

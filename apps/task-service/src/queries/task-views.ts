import {
  applyHistoryLength,
  decodeListPageToken,
  encodeListPageToken,
  taskNotFound,
  withoutArtifacts,
  type ListTasksRequest,
  type ListTasksResponse,
  type Task,
} from '@lib/a2a-protocol';
import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import type { CallContext } from '../call-context';
import type { NoticeBus } from '../notice-bus';
import { PG_POOL } from '../tokens';

export interface TaskViewRecord {
  task: Task;
  state: string;
  version: number;
}

const DEFAULT_PAGE_SIZE = 50;
const FALLBACK_POLL_MS = 1_000;

/** Reads of the inline task view, always scoped to the caller's tenant, agent and ownership. */
@Injectable()
export class TaskViews {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  /** The caller's task, or TaskNotFound when it does not exist or belongs to someone else. */
  async get(ctx: CallContext, taskId: string): Promise<TaskViewRecord> {
    const found = await this.find(ctx, taskId);
    if (!found) {
      throw taskNotFound(taskId);
    }
    return found;
  }

  async find(ctx: CallContext, taskId: string): Promise<TaskViewRecord | null> {
    const result = await this.pool.query<{ task: Task; state: string; version: number }>(
      `SELECT task, state, version FROM read.task_view
        WHERE tenant_id = $1 AND task_id = $2 AND agent_id = $3 AND owner_id = $4`,
      [ctx.tenantId, taskId, ctx.agentId, ctx.principalId],
    );
    return result.rows[0] ?? null;
  }

  /**
   * Waits until the caller's task satisfies `done`, woken by task notices and backed by polling.
   * Returns the latest record when `timeoutMs` passes first.
   */
  async waitFor(
    ctx: CallContext,
    taskId: string,
    bus: NoticeBus,
    done: (record: TaskViewRecord) => boolean,
    timeoutMs: number,
  ): Promise<TaskViewRecord> {
    let wake: () => void = () => undefined;
    const unsubscribe = bus.subscribe((notice) => {
      if (notice.k === 'task' && notice.t === ctx.tenantId && notice.id === taskId) {
        wake();
      }
    });
    const deadline = Date.now() + timeoutMs;
    try {
      for (;;) {
        const woken = new Promise<void>((resolve) => {
          wake = resolve;
        });
        const record = await this.get(ctx, taskId);
        const left = deadline - Date.now();
        if (done(record) || left <= 0) {
          return record;
        }
        await Promise.race([woken, sleep(Math.min(left, FALLBACK_POLL_MS))]);
      }
    } finally {
      unsubscribe();
    }
  }

  /** ListTasks (spec digest §10.7): newest status first, keyset pagination, filters, counts. */
  async list(ctx: CallContext, request: ListTasksRequest): Promise<ListTasksResponse> {
    const pageSize = request.pageSize ?? DEFAULT_PAGE_SIZE;
    const where = ['tenant_id = $1', 'agent_id = $2', 'owner_id = $3'];
    const params: unknown[] = [ctx.tenantId, ctx.agentId, ctx.principalId];
    if (request.contextId) {
      params.push(request.contextId);
      where.push(`context_id = $${params.length}`);
    }
    if (request.status && request.status !== 'TASK_STATE_UNSPECIFIED') {
      params.push(request.status);
      where.push(`state = $${params.length}`);
    }
    if (request.statusTimestampAfter) {
      params.push(request.statusTimestampAfter);
      where.push(`status_timestamp >= $${params.length}`);
    }
    const filter = where.join(' AND ');
    const total = await this.pool.query<{ count: string }>(
      `SELECT count(*) AS count FROM read.task_view WHERE ${filter}`,
      params,
    );
    const pageParams = [...params];
    let pageFilter = filter;
    if (request.pageToken) {
      const cursor = decodeListPageToken(request.pageToken);
      pageParams.push(cursor.statusTimestamp, cursor.taskId);
      pageFilter += ` AND (status_timestamp, task_id) < ($${pageParams.length - 1}::timestamptz, $${pageParams.length})`;
    }
    pageParams.push(pageSize + 1);
    const page = await this.pool.query<{ task: Task; status_timestamp: Date; task_id: string }>(
      `SELECT task, status_timestamp, task_id FROM read.task_view WHERE ${pageFilter}
        ORDER BY status_timestamp DESC, task_id DESC LIMIT $${pageParams.length}`,
      pageParams,
    );
    const rows = page.rows.slice(0, pageSize);
    const last = rows[rows.length - 1];
    const nextPageToken =
      page.rows.length > pageSize && last
        ? encodeListPageToken({
            statusTimestamp: last.status_timestamp.toISOString(),
            taskId: last.task_id,
          })
        : '';
    return {
      tasks: rows.map((row) => {
        const trimmed = applyHistoryLength(row.task, request.historyLength);
        return request.includeArtifacts ? trimmed : withoutArtifacts(trimmed);
      }),
      nextPageToken,
      pageSize,
      totalSize: Number(total.rows[0]?.count ?? 0),
    };
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

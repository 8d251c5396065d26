import {
  applyHistoryLength,
  encodeListPageToken,
  taskNotFound,
  withoutArtifacts,
  type ListTasksRequest,
  type ListTasksResponse,
  type Message,
  type Task,
} from '@lib/a2a-protocol';
import { readsAllTasks } from '@lib/authz';
import type { TaskId } from '@lib/tenancy';
import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import type { CallContext } from '../call-context';
import { PG_POOL } from '../tokens';
import { DEFAULT_PAGE_SIZE, listTasksStatement, type ListTasksRow } from './list-tasks.sql';

export interface TaskViewRecord {
  task: Task;
  state: string;
  version: number;
  /**
   * Set for a stream clients do not see as a task (never from the view): an exchange whose agent has not
   * answered yet (`reply: null`) or answered with this bare Message (docs/adr/0009-message-replies.md).
   */
  exchange?: { reply: Message | null };
}

/** Whose task a lookup may find: the caller's own, or any principal's for a read with the read-all scope. */
export type TaskAccess = 'own' | 'read';

/** Reads of the inline task view, always scoped to the caller's tenant, agent and ownership. */
@Injectable()
export class TaskViews {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  /**
   * The caller's task, or TaskNotFound when it does not exist or belongs to someone else. `read`: a read that
   * the tenant-wide read scope extends to every principal's tasks (writes always take the caller's own).
   */
  async get(ctx: CallContext, taskId: TaskId, access: TaskAccess = 'own'): Promise<TaskViewRecord> {
    const found = await this.find(ctx, taskId, access);
    if (!found) {
      throw taskNotFound(taskId);
    }
    return found;
  }

  async find(
    ctx: CallContext,
    taskId: TaskId,
    access: TaskAccess = 'own',
  ): Promise<TaskViewRecord | null> {
    const result =
      access === 'read' && readsAllTasks(ctx)
        ? await this.pool.query<TaskViewRecord>({
            name: 'task-view.find-any-owner',
            text: `SELECT task, state, version FROM read.task_view
                    WHERE tenant_id = $1 AND task_id = $2 AND agent_id = $3`,
            values: [ctx.tenantId, taskId, ctx.agentId],
          })
        : await this.pool.query<TaskViewRecord>({
            name: 'task-view.find',
            text: `SELECT task, state, version FROM read.task_view
                    WHERE tenant_id = $1 AND task_id = $2 AND agent_id = $3 AND owner_id = $4`,
            values: [ctx.tenantId, taskId, ctx.agentId, ctx.principalId],
          });
    return result.rows[0] ?? null;
  }

  /** ListTasks (spec digest §10.7): newest status first, keyset pagination, filters, totalSize. */
  async list(ctx: CallContext, request: ListTasksRequest): Promise<ListTasksResponse> {
    const pageSize = request.pageSize ?? DEFAULT_PAGE_SIZE;
    const { text, values } = listTasksStatement(ctx, request);
    const result = await this.pool.query<ListTasksRow>(text, values);
    const rows = result.rows.filter(
      (row): row is ListTasksRow & { status_timestamp: Date; task_id: string } =>
        row.task_id !== null && row.status_timestamp !== null,
    );
    const page = rows.slice(0, pageSize);
    const last = page[page.length - 1];
    const nextPageToken =
      rows.length > pageSize && last
        ? encodeListPageToken({
            statusTimestamp: last.status_timestamp.toISOString(),
            taskId: last.task_id,
          })
        : '';
    return {
      tasks: page.map((row) => {
        const trimmed = applyHistoryLength(row.task as Task, request.historyLength);
        return request.includeArtifacts ? trimmed : withoutArtifacts(trimmed);
      }),
      nextPageToken,
      pageSize,
      totalSize: Number(result.rows[0]?.total ?? 0),
    };
  }

  /** Tasks by state across every tenant, from the counts kept with the view (for metrics). */
  async countByState(): Promise<Map<string, number>> {
    const result = await this.pool.query<{ state: string; tasks: string }>({
      name: 'task-views.count-by-state',
      text: 'SELECT state, sum(tasks)::text AS tasks FROM read.task_counts GROUP BY state',
    });
    return new Map(result.rows.map((row) => [row.state, Number(row.tasks)]));
  }
}

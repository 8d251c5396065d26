import { shownAsTask, type PresentTask, type TaskAggregate } from '@lib/task-domain';
import { taskIdOf, type TaskId, type TenantId } from '@lib/tenancy';
import type { PoolClient } from 'pg';

/** A row of `read.task_view`: the task as GetTask/ListTasks serve it, derived only from the task stream. */
export interface TaskViewRow {
  tenantId: TenantId;
  taskId: TaskId;
  agentId: string;
  ownerId: string;
  contextId: string;
  state: string;
  statusTimestamp: string;
  version: number;
  task: PresentTask['task'];
}

/** Pure projection of a folded task stream into its view row. */
export function taskViewRow(tenantId: TenantId, state: PresentTask): TaskViewRow {
  return {
    tenantId,
    taskId: taskIdOf(state.task.id),
    agentId: state.agentId,
    ownerId: state.ownerId,
    contextId: state.task.contextId,
    state: state.task.status.state,
    statusTimestamp: state.task.status.timestamp ?? new Date(0).toISOString(),
    version: state.version,
    task: state.task,
  };
}

/**
 * Writes the view row of a task stream in the caller's transaction (the inline projection); a stream not
 * shown as a task (an exchange answered by a message, ADR 0009) has none.
 */
export async function upsertTaskView(
  client: PoolClient,
  tenantId: TenantId,
  state: TaskAggregate,
  table = 'read.task_view',
): Promise<void> {
  if (state.status === 'absent' || !shownAsTask(state)) {
    return;
  }
  const row = taskViewRow(tenantId, state);
  await client.query(
    `INSERT INTO ${table}
       (tenant_id, task_id, agent_id, owner_id, context_id, state, status_timestamp, version, task)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
     ON CONFLICT (tenant_id, task_id) DO UPDATE SET
       state = EXCLUDED.state, status_timestamp = EXCLUDED.status_timestamp,
       version = EXCLUDED.version, task = EXCLUDED.task
     WHERE ${table.split('.').pop()}.version < EXCLUDED.version`,
    [
      row.tenantId,
      row.taskId,
      row.agentId,
      row.ownerId,
      row.contextId,
      row.state,
      row.statusTimestamp,
      row.version,
      JSON.stringify(row.task),
    ],
  );
}

import type { PresentTask, TaskAggregate } from '@lib/task-domain';
import type { PoolClient } from 'pg';

/** A row of `read.task_view`: the task as GetTask/ListTasks serve it, derived only from the task stream. */
export interface TaskViewRow {
  tenantId: string;
  taskId: string;
  agentId: string;
  ownerId: string;
  contextId: string;
  state: string;
  statusTimestamp: string;
  version: number;
  task: PresentTask['task'];
}

/** Pure projection of a folded task stream into its view row. */
export function taskViewRow(tenantId: string, state: PresentTask): TaskViewRow {
  return {
    tenantId,
    taskId: state.task.id,
    agentId: state.agentId,
    ownerId: state.ownerId,
    contextId: state.task.contextId,
    state: state.task.status.state,
    statusTimestamp: state.task.status.timestamp ?? new Date(0).toISOString(),
    version: state.version,
    task: state.task,
  };
}

/** Writes the view row of a task stream in the caller's transaction (the inline projection). */
export async function upsertTaskView(
  client: PoolClient,
  tenantId: string,
  state: TaskAggregate,
  table = 'read.task_view',
): Promise<void> {
  if (state.status === 'absent') {
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

/**
 * Keeps `ops.task_work` in step with the stream: a row while the task is queued or leased, none otherwise.
 * Heartbeats extend `lease_expires_at` outside the log, so an unchanged epoch keeps the renewed expiry.
 */
export async function syncTaskWork(
  client: PoolClient,
  tenantId: string,
  state: TaskAggregate,
): Promise<void> {
  if (state.status === 'absent') {
    return;
  }
  if (state.work === 'idle') {
    await client.query('DELETE FROM ops.task_work WHERE tenant_id = $1 AND task_id = $2', [
      tenantId,
      state.task.id,
    ]);
    return;
  }
  const lease = state.work === 'leased' ? state.lease : null;
  await client.query(
    `INSERT INTO ops.task_work
       (tenant_id, task_id, agent_id, status, queued_at, attempt, lease_epoch, worker_id,
        lease_expires_at, cancel_deadline)
     VALUES ($1, $2, $3, $4, clock_timestamp(), $5, $6, $7, $8, $9)
     ON CONFLICT (tenant_id, task_id) DO UPDATE SET
       status = EXCLUDED.status,
       queued_at = CASE WHEN task_work.status = 'queued' AND EXCLUDED.status = 'queued'
                        THEN task_work.queued_at ELSE EXCLUDED.queued_at END,
       attempt = EXCLUDED.attempt,
       lease_epoch = EXCLUDED.lease_epoch,
       worker_id = EXCLUDED.worker_id,
       lease_expires_at = CASE WHEN task_work.lease_epoch IS NOT DISTINCT FROM EXCLUDED.lease_epoch
                               THEN task_work.lease_expires_at ELSE EXCLUDED.lease_expires_at END,
       cancel_deadline = EXCLUDED.cancel_deadline`,
    [
      tenantId,
      state.task.id,
      state.agentId,
      state.work,
      state.attempt,
      lease?.epoch ?? null,
      lease?.workerId ?? null,
      lease?.expiresAt ?? null,
      state.cancel?.deadline ?? null,
    ],
  );
}

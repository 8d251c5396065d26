import { taskIdOf, type TaskId, type TenantId } from '@lib/ids';

/** Stream category of task streams; a stream id is `task:<tenantId>:<taskId>`. */
export const TASK_STREAM_CATEGORY = 'task';

export function taskStreamId(tenantId: TenantId, taskId: string): string {
  return `${TASK_STREAM_CATEGORY}:${tenantId}:${taskId}`;
}

/** The task id of `tenantId`'s task stream `streamId` ({@link taskStreamId}); null for any other stream. */
export function taskIdOfStream(tenantId: TenantId, streamId: string): TaskId | null {
  const prefix = taskStreamId(tenantId, '');
  return streamId.startsWith(prefix) ? taskIdOf(streamId.slice(prefix.length)) : null;
}

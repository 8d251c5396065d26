/** Stream category of task streams; a stream id is `task:<tenantId>:<taskId>`. */
export const TASK_STREAM_CATEGORY = 'task';

export function taskStreamId(tenantId: string, taskId: string): string {
  return `${TASK_STREAM_CATEGORY}:${tenantId}:${taskId}`;
}

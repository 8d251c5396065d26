import type { Notice } from '@lib/event-store';
import type { PresentTask, TaskAggregate, TaskEvent } from '@lib/task-domain';
import type { TenantId } from '@lib/tenancy';

/** Which notices an append produces (pure). `byWorker`: the lease holder itself made the change. */
export function noticesFor(
  tenantId: TenantId,
  before: TaskAggregate,
  events: readonly TaskEvent[],
  after: PresentTask,
  byWorker: boolean,
): Notice[] {
  const id = after.task.id;
  const notices: Notice[] = [{ k: 'task', t: tenantId, id, v: after.version }];
  const wasQueued = before.status === 'present' && before.work === 'queued';
  if (after.work === 'queued' && !wasQueued) {
    notices.push({ k: 'work', t: tenantId, a: after.agentId });
  }
  if (after.lease && events.some((e) => e.type === 'TaskCancelRequested')) {
    notices.push({ k: 'cancel', t: tenantId, id, e: after.lease.epoch, w: after.lease.workerId });
  }
  const held = before.status === 'present' ? before.lease : null;
  if (held && after.lease?.epoch !== held.epoch && !byWorker) {
    notices.push({ k: 'revoke', t: tenantId, id, e: held.epoch, w: held.workerId });
  }
  return notices;
}

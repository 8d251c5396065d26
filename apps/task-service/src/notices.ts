import type { PresentTask, TaskAggregate, TaskEvent } from '@lib/task-domain';

/** Postgres NOTIFY channel carrying {@link Notice}s between task-service replicas. */
export const NOTICE_CHANNEL = 'a2a_platform';

/** Cross-replica signals; each is a hint backed by durable state, never the state itself. */
export type Notice =
  /** A task stream reached version `v` (wakes blocking SendMessage / CancelTask waiters). */
  | { k: 'task'; t: string; id: string; v: number }
  /** Work was queued for an agent (wakes the dispatchers that host its workers). */
  | { k: 'work'; t: string; a: string }
  /** The client asked to cancel; the worker holding lease `e` should stop. */
  | { k: 'cancel'; t: string; id: string; e: number; w: string }
  /** Lease `e` ended without the worker finishing (expired, canceled at the deadline). */
  | { k: 'revoke'; t: string; id: string; e: number; w: string };

/** Which notices an append produces (pure). `byWorker`: the lease holder itself made the change. */
export function noticesFor(
  tenantId: string,
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

export function parseNotice(payload: string): Notice | null {
  try {
    const value = JSON.parse(payload) as Notice;
    return typeof value === 'object' && value !== null && 'k' in value ? value : null;
  } catch {
    return null;
  }
}

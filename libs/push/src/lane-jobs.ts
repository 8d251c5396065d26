/**
 * The lane jobs' contract on BullMQ (docs/adr/0010-push-notifications.md), shared by whoever schedules them:
 * the dispatcher (its feed consumer, lane runs and reconciler, and its lane runner works the queue) and the
 * admin API (a redrive). Keys live under PUSH_QUEUE_PREFIX; both sides must use the same one.
 */

/** The BullMQ queue of lane jobs. */
export const LANE_QUEUE = 'a2a-push-lanes';

/** The options of every lane job: a finished job leaves Redis at once (its row in Postgres is the record). */
export const LANE_JOB_OPTIONS = { removeOnComplete: true, removeOnFail: true } as const;

/** The deliveries of one (task, config), a lane job's data: sent one at a time, in generation order. */
export interface Lane {
  tenantId: string;
  taskId: string;
  configId: string;
}

/** The id of the job that makes the next attempt of a delivery that has had `attempts`. */
export function attemptJobId(deliveryId: string, attempts: number): string {
  return `a-${deliveryId}-${attempts}`;
}

/**
 * The id of the job that sends a redriven delivery: its first attempt's id with a suffix of the redrive's time,
 * because BullMQ may still hold that id from the delivery's first life, and a replica that settled the delivery
 * drops that id's job unread.
 */
export function redriveJobId(deliveryId: string, now: number): string {
  return `${attemptJobId(deliveryId, 0)}-r${now}`;
}

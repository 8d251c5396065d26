/**
 * Errors of the task domain that are not A2A protocol errors: they concern agent workers.
 * A2A-facing failures are thrown as `A2aError` with the protocol's reason.
 */
export type WorkerErrorReason =
  /** The lease epoch is not the task's current one (fencing), or the task has no lease. */
  | 'LEASE_LOST'
  /** The reported status is not a legal transition from the current one (§10.3). */
  | 'INVALID_TRANSITION'
  /** The update is malformed for the current task (wrong role, append to an unknown artifact). */
  | 'INVALID_UPDATE';

export class WorkerUpdateRejected extends Error {
  override readonly name = 'WorkerUpdateRejected';

  constructor(
    readonly reason: WorkerErrorReason,
    message: string,
  ) {
    super(message);
  }
}

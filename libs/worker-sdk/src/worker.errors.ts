/** Why the SDK threw or aborted. Identify errors by `reason`, not by `instanceof` across packages. */
export type WorkerErrorReason =
  /** `AgentWorker.create` got an option it cannot use. */
  | 'INVALID_OPTIONS'
  /** `run()` was called on a worker that is not `INITIALIZED`. */
  | 'ILLEGAL_STATE'
  /** The platform refused the worker's first session (bad credential or permission): retrying cannot help. */
  | 'CONNECT_REJECTED'
  /** The worker no longer holds the task's lease (revoked, fenced by a newer epoch, or expired). */
  | 'LEASE_LOST'
  /** The task already reached a terminal or interrupted state in this assignment; its lease has ended. */
  | 'TASK_ENDED'
  /** The client asked to cancel the task (the `AbortSignal` reason; the SDK then publishes CANCELED). */
  | 'TASK_CANCELED'
  /** The platform rejected an update as invalid (a bug in the agent; never retried). */
  | 'UPDATE_REJECTED'
  /** The worker is shutting down and stopped the task; the platform re-dispatches it. */
  | 'WORKER_SHUTDOWN';

export class WorkerError extends Error {
  override readonly name = 'WorkerError';

  constructor(
    readonly reason: WorkerErrorReason,
    message: string,
    readonly metadata: Readonly<Record<string, string>> = {},
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/**
 * The work tables: `ops.task_work` (work queued for agent workers, and their leases) and
 * `ops.worker_sessions` (the workers each task-service replica hosts). Their one reader, used by the
 * task-service and the admin API.
 */
export * from './work-queue';
export * from './worker-sessions';

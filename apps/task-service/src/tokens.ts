/** Injection token of the Postgres pool. */
export const PG_POOL = Symbol('PG_POOL');
/** Injection token of the task-service configuration. */
export const TASK_SERVICE_CONFIG = Symbol('TASK_SERVICE_CONFIG');
/** Injection token of the `PlatformFeatures` the task-service offers (webhooks inline in SendMessage). */
export const TASK_SERVICE_FEATURES = Symbol('TASK_SERVICE_FEATURES');

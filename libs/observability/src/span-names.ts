/**
 * The platform's span names (docs/observability.md). Names are contracts: dashboards, alerts and the
 * tracing test use them, so a change is a new name, never an edit. The worker SDK names its own span
 * `agent <agentId> execute` (it depends on the OpenTelemetry API only).
 */
export const SPANS = {
  /** Server span of one A2A call in the ingress; `A2A <binding>` until the method is known. */
  a2aCall: (method: string) => `A2A ${method}`,
  /** One operation of the task-service: an A2A method, or a worker's `PublishUpdate`. */
  taskService: (operation: string) => `task-service ${operation}`,
  /** One command's wait for the group commit that appends its events. */
  append: 'task-service append',
  /** A lease granted and its assignment sent to a worker. */
  dispatch: 'task-service dispatch',
  /** One batch of task events published to Kafka (linked to each event's trace). */
  relayPublish: 'relay publish',
  /** One webhook delivery attempt (a POST), in the trace of the event it delivers. */
  pushDeliver: 'push deliver',
} as const;

/** The platform's own span attributes (`a2a.*`). Never message content, never a secret. */
export const ATTRIBUTES = {
  binding: 'a2a.binding',
  method: 'a2a.method',
  tenant: 'a2a.tenant',
  agent: 'a2a.agent',
  taskId: 'a2a.task_id',
  requestId: 'a2a.request_id',
  generation: 'a2a.generation',
  leaseEpoch: 'a2a.lease_epoch',
  attempt: 'a2a.attempt',
  workerId: 'a2a.worker_id',
  /** This replica's number of the write batch (group commit) that took the command. */
  writeBatch: 'a2a.write.batch',
  writeBatchSize: 'a2a.write.batch_size',
  writeOutcome: 'a2a.write.outcome',
  updates: 'a2a.updates',
  deliveryId: 'a2a.push.delivery_id',
  pushConfigId: 'a2a.push.config_id',
} as const;

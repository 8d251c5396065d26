import type { StreamResponse } from '@lib/a2a-protocol';
import type { CommittedTaskEvent, EventMetadata } from '@lib/event-store';
import { taskIdOfStream, toStreamResponse } from '@lib/task-domain';

/** Version of the record value schema (docs/asyncapi.yaml); bumped only with a new topic or a new field set. */
export const TASK_EVENT_RECORD_SCHEMA = 'a2a-platform.task-event';
export const TASK_EVENT_RECORD_VERSION = 1;
/** CloudEvents `source` of every record. */
export const CLOUDEVENTS_SOURCE = 'a2a-platform';

/** The JSON value of a record on the task-event topic (documented in docs/asyncapi.yaml). */
export interface TaskEventRecordValue {
  schema: typeof TASK_EVENT_RECORD_SCHEMA;
  schemaVersion: typeof TASK_EVENT_RECORD_VERSION;
  eventId: string;
  tenantId: string;
  agentId: string | null;
  taskId: string;
  contextId: string | null;
  /** The task's generation (stream version): with `taskId`, the dedupe key of every consumer. */
  generation: number;
  globalPosition: string;
  type: string;
  eventSchemaVersion: number;
  occurredAt: string;
  actor: EventMetadata['actor'];
  /** The domain event's payload, exactly as in the log. */
  data: unknown;
  /** What an A2A client streaming the task saw for this event (null for platform-internal events). */
  streamResponse: StreamResponse | null;
}

export interface TaskEventRecord {
  key: string;
  value: string;
  headers: Record<string, string>;
}

/** Maps one event of the log to its Kafka record: key = task id (per-task ordering), CloudEvents headers. */
export function toTaskEventRecord(row: CommittedTaskEvent): TaskEventRecord {
  // The relay reads task streams only (`task:<tenant>:<task>`); any other would be keyed by its own id.
  const taskId = taskIdOfStream(row.tenantId, row.streamId) ?? row.streamId;
  const { event } = row;
  const value: TaskEventRecordValue = {
    schema: TASK_EVENT_RECORD_SCHEMA,
    schemaVersion: TASK_EVENT_RECORD_VERSION,
    eventId: row.eventId,
    tenantId: row.tenantId,
    agentId: row.agentId,
    taskId,
    contextId: row.contextId,
    generation: row.streamVersion,
    globalPosition: row.globalPosition,
    type: event.type,
    eventSchemaVersion: row.schemaVersion,
    occurredAt: row.recordedAt,
    actor: row.metadata.actor,
    data: event.data,
    streamResponse: row.contextId
      ? toStreamResponse(event, { taskId, contextId: row.contextId })
      : null,
  };
  const headers: Record<string, string> = {
    ce_specversion: '1.0',
    ce_id: row.eventId,
    ce_type: `dev.a2a-platform.task.${event.type}.v${row.schemaVersion}`,
    ce_source: CLOUDEVENTS_SOURCE,
    ce_subject: taskId,
    ce_time: row.recordedAt,
    ce_datacontenttype: 'application/json',
    tenant: row.tenantId,
    generation: String(row.streamVersion),
  };
  if (row.metadata.traceparent) {
    headers['traceparent'] = row.metadata.traceparent;
  }
  return { key: taskId, value: JSON.stringify(value), headers };
}

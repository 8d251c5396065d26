import type { SealedAuditEntry } from '@lib/audit';
import type { EventMetadata } from '@lib/event-store';
import type { PresentTask, TaskEvent, WorkStatus } from '@lib/task-domain';
import type { AgentId, PrincipalId, TaskId, TenantId } from '@lib/tenancy';

/**
 * The one argument of `events.append_task_batch` (`migrations/functions/events.append_task_batch.sql`), sent as
 * JSON: one list per kind of row the batch writes. Each row names its stream by `stream_index`, the stream's
 * index in {@link TaskBatch.streams}; its other keys are the columns it fills. A stream's rows are written
 * only if its guard holds and its claim, if any, is new.
 */
export interface TaskBatch {
  /** The channel the notices are sent on. */
  channel: string;
  streams: TaskBatchStream[];
  claims: TaskBatchClaim[];
  events: TaskBatchEvent[];
  views: TaskBatchView[];
  work: TaskBatchWork[];
  notices: TaskBatchNotice[];
  /** At most one per stream: the record of the call that made its change. */
  audit: TaskBatchAudit[];
}

/** What every row of a {@link TaskBatch} has: its stream's index in {@link TaskBatch.streams}. */
export interface TaskBatchRow {
  stream_index: number;
}

/** A stream the batch appends to, and the guard it is appended under (`events.streams`). */
export interface TaskBatchStream extends TaskBatchRow {
  tenant_id: TenantId;
  stream_id: string;
  /** The version the stream must be at; 0: it must not exist yet. */
  expected_version: number;
  /** Its version after the batch's events. */
  version: number;
}

/** A SendMessage's claim on its message (`ops.message_ids`, spec digest §6 "Idempotency"). */
export interface TaskBatchClaim extends TaskBatchRow {
  tenant_id: TenantId;
  agent_id: AgentId;
  principal_id: PrincipalId;
  message_id: string;
  task_id: TaskId;
  message_digest: string;
}

/** An event of the stream (`events.messages`). */
export interface TaskBatchEvent extends TaskBatchRow {
  tenant_id: TenantId;
  stream_id: string;
  event_id: string;
  stream_version: number;
  event_type: TaskEvent['type'];
  schema_version: number;
  data: TaskEvent['data'];
  metadata: EventMetadata;
}

/** The task's row of `read.task_view`, written only over an older version. */
export interface TaskBatchView extends TaskBatchRow {
  tenant_id: TenantId;
  task_id: TaskId;
  agent_id: string;
  owner_id: string;
  context_id: string;
  state: string;
  status_timestamp: string;
  version: number;
  task: PresentTask['task'];
}

/** The task's row of `ops.task_work`: there while `queued` or `leased`, removed when `idle`. */
export interface TaskBatchWork extends TaskBatchRow {
  tenant_id: TenantId;
  task_id: string;
  agent_id: string;
  status: WorkStatus;
  attempt: number;
  lease_epoch: number | null;
  worker_id: string | null;
  lease_expires_at: string | null;
  cancel_deadline: string | null;
}

/** A notice, sent at commit on {@link TaskBatch.channel}. */
export interface TaskBatchNotice extends TaskBatchRow {
  payload: string;
}

/** An audit record, chained in the batch's transaction by `audit.chain_records`. */
export interface TaskBatchAudit extends TaskBatchRow {
  tenant_id: SealedAuditEntry['tenantId'];
  record_id: SealedAuditEntry['recordId'];
  occurred_at: SealedAuditEntry['occurredAt'];
  principal_id: SealedAuditEntry['principalId'];
  credential_id: SealedAuditEntry['credentialId'];
  source_address: SealedAuditEntry['sourceAddress'];
  operation: SealedAuditEntry['operation'];
  binding: SealedAuditEntry['binding'];
  resource: SealedAuditEntry['resource'];
  outcome: SealedAuditEntry['outcome'];
  reason: SealedAuditEntry['reason'];
  trace_id: SealedAuditEntry['traceId'];
  /** The record's digest, lowercase hex. */
  digest: SealedAuditEntry['digest'];
}

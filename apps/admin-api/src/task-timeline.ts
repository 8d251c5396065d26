import type { TaskStateName } from '@lib/a2a-protocol';
import { traceIdOf } from '@lib/audit';
import type { StoredTaskEvent } from '@lib/event-store';
import { assertNever, TASK_EVENT_TYPES, type TaskEvent } from '@lib/task-domain';

/**
 * What an event says, in a few typed fields (never message or artifact content): the fields an event type
 * does not carry are absent.
 */
export interface EventSummary {
  /** TaskStatusUpdated: the new state. */
  state?: TaskStateName;
  /** The message the event carries (submitted, appended, replied, or a status message). */
  messageId?: string;
  /** Its role (`ROLE_USER`, `ROLE_AGENT`). */
  role?: string;
  /** How many parts the message or artifact chunk has. */
  parts?: number;
  /** ArtifactChunkAppended. */
  artifactId?: string;
  artifactName?: string;
  append?: boolean;
  lastChunk?: boolean;
  /** Lease events: the lease's epoch (fencing token) and the worker session it is (was) granted to. */
  leaseEpoch?: number;
  workerId?: string;
  /** TaskLeaseGranted: until when, and which attempt of the task it is. */
  expiresAt?: string;
  attempt?: number;
  /** TaskLeaseReleased: why the worker handed the task back. */
  reason?: string;
  /** TaskCancelRequested: who asked, and until when the worker may take to stop. */
  requestedBy?: string;
  deadline?: string;
  /** Push config events: the config, and where its deliveries go (scheme, host, port). */
  configId?: string;
  origin?: string;
}

/** One entry of a task's timeline (docs/admin.md "Tasks"). */
export interface TimelineEntry {
  /** The stream version of the event: the task's generation after it. */
  generation: number;
  eventId: string;
  type: string;
  schemaVersion: number;
  recordedAt: string;
  /** Who caused it: a caller (its principal), an agent worker (its session), the platform (its replica). */
  actor: { kind: string; id: string } | null;
  /** The principal of a caller's change; null for workers and the platform. */
  principalId: string | null;
  /** The binding (JSONRPC, HTTP+JSON, GRPC) or the component (worker, dispatcher, lease-sweeper). */
  binding: string | null;
  traceId: string | null;
  /** The request id of the call that caused it, where recorded. */
  requestId: string | null;
  summary: EventSummary;
}

const KNOWN: ReadonlySet<string> = new Set(TASK_EVENT_TYPES);

/** The timeline entry of a stored event: its metadata spelled out, its data summarised. */
export function timelineEntry(stored: StoredTaskEvent): TimelineEntry {
  const { event, metadata: meta } = stored;
  const actor = meta.actor ? { kind: meta.actor.kind, id: meta.actor.id } : null;
  return {
    generation: stored.generation,
    eventId: stored.eventId,
    type: event.type,
    schemaVersion: stored.schemaVersion,
    recordedAt: stored.recordedAt.toISOString(),
    actor,
    principalId: actor?.kind === 'caller' ? actor.id : null,
    binding: meta.binding ?? null,
    traceId: traceIdOf(meta.traceparent),
    requestId: meta.correlationId ?? null,
    summary: KNOWN.has(event.type) ? summarize(event) : {},
  };
}

/** The summary of an event of a known type. */
export function summarize(event: TaskEvent): EventSummary {
  switch (event.type) {
    case 'TaskSubmitted':
    case 'UserMessageAppended':
    case 'AgentMessageAppended':
    case 'AgentReplied': {
      const { messageId, role, parts } = event.data.message;
      return { messageId, role, parts: parts.length };
    }
    case 'TaskStatusUpdated': {
      const message = event.data.status.message;
      return {
        state: event.data.status.state,
        ...(message ? { messageId: message.messageId, role: message.role } : {}),
      };
    }
    case 'ArtifactChunkAppended': {
      const { artifact, append, lastChunk } = event.data;
      return {
        artifactId: artifact.artifactId,
        ...(artifact.name !== undefined ? { artifactName: artifact.name } : {}),
        parts: artifact.parts.length,
        append,
        lastChunk,
      };
    }
    case 'TaskCancelRequested':
      return { requestedBy: event.data.requestedBy, deadline: event.data.deadline };
    case 'TaskLeaseGranted': {
      const { leaseEpoch, workerId, expiresAt, attempt } = event.data;
      return { leaseEpoch, workerId, expiresAt, attempt };
    }
    case 'TaskLeaseExpired':
      return { leaseEpoch: event.data.leaseEpoch, workerId: event.data.workerId };
    case 'TaskLeaseReleased': {
      const { leaseEpoch, workerId, reason } = event.data;
      return { leaseEpoch, workerId, reason };
    }
    case 'PushConfigRegistered':
      return { configId: event.data.configId, origin: event.data.origin };
    case 'PushConfigRemoved':
      return { configId: event.data.configId };
    default:
      return assertNever(event);
  }
}

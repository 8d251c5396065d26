import type { Artifact, JsonObject, Message, TaskStatus } from '@lib/a2a-protocol';

/**
 * The task stream's events. Names are contracts: never renamed, only versioned (see README.md).
 * Where A2A names the fact (status, message, artifact chunk) the payload mirrors the protocol field-for-field.
 */
export type TaskEvent =
  | TaskSubmitted
  | UserMessageAppended
  | TaskStatusUpdated
  | AgentMessageAppended
  | ArtifactChunkAppended
  | TaskCancelRequested
  | TaskLeaseGranted
  | TaskLeaseExpired
  | TaskLeaseReleased
  | AgentReplied
  | PushConfigRegistered
  | PushConfigRemoved;

export type TaskEventType = TaskEvent['type'];

export interface TaskSubmitted {
  type: 'TaskSubmitted';
  data: {
    taskId: string;
    contextId: string;
    agentId: string;
    /** Principal that created the task (its owner). */
    ownerId: string;
    /** The first user message, with taskId and contextId filled in. */
    message: Message;
    /** Request-level metadata of the SendMessageRequest. */
    metadata?: JsonObject;
    submittedAt: string;
    /**
     * The agent may answer with a bare Message ({@link AgentReplied}) instead of a task (its profile declares
     * message replies, docs/adr/0009-message-replies.md): until its worker reports on the task, clients see
     * no task. Absent: the stream is a task from its first event.
     */
    mayReply?: true;
    /**
     * The media types the client accepts in the answer (`configuration.acceptedOutputModes`); absent when
     * it named none (any). A resend of the message must ask for the same (docs/conformance.md).
     */
    acceptedOutputModes?: string[];
  };
}

/** A client message continuing an interrupted task. */
export interface UserMessageAppended {
  type: 'UserMessageAppended';
  /** `acceptedOutputModes` as in {@link TaskSubmitted}. */
  data: { message: Message; acceptedOutputModes?: string[] };
}

export interface TaskStatusUpdated {
  type: 'TaskStatusUpdated';
  data: { status: TaskStatus; metadata?: JsonObject };
}

/** An agent message that is not a status message; it joins the task history. */
export interface AgentMessageAppended {
  type: 'AgentMessageAppended';
  data: { message: Message };
}

export interface ArtifactChunkAppended {
  type: 'ArtifactChunkAppended';
  data: { artifact: Artifact; append: boolean; lastChunk: boolean; metadata?: JsonObject };
}

export interface TaskCancelRequested {
  type: 'TaskCancelRequested';
  data: { requestedBy: string; deadline: string; metadata?: JsonObject };
}

export interface TaskLeaseGranted {
  type: 'TaskLeaseGranted';
  data: { leaseEpoch: number; workerId: string; expiresAt: string; attempt: number };
}

export interface TaskLeaseExpired {
  type: 'TaskLeaseExpired';
  data: { leaseEpoch: number; workerId: string };
}

/** The worker handed the task back unfinished (it is draining); the work is queued again, same attempt. */
export interface TaskLeaseReleased {
  type: 'TaskLeaseReleased';
  data: { leaseEpoch: number; workerId: string; reason: string };
}

/**
 * The agent answered the message that opened the stream with a bare Message instead of a task: the exchange
 * is over (no lease, no work) and no task is ever shown for it. The reply carries the stream's contextId.
 */
export interface AgentReplied {
  type: 'AgentReplied';
  data: { message: Message };
}

/**
 * A webhook was registered for the task's events (spec digest §10.10): the config applies to the events after
 * this one's generation (with an inline registration in SendMessage, to every event of the append that carries
 * it). Its URL, token and credentials are not in the log (the log and the Kafka feed are read by users'
 * systems): they are in `ops.push_configs`, written in the same transaction (docs/adr/0010-push-notifications.md).
 * Registering an id again replaces that config.
 */
export interface PushConfigRegistered {
  type: 'PushConfigRegistered';
  data: {
    configId: string;
    /** Where deliveries go, without path or secrets: the URL's scheme, host and port (`https://hooks.example`). */
    origin: string;
  };
}

/** A webhook was deleted: no event after this one is delivered to it. */
export interface PushConfigRemoved {
  type: 'PushConfigRemoved';
  data: { configId: string };
}

/** Registered event type names; a name here is never changed. */
export const TASK_EVENT_TYPES = [
  'TaskSubmitted',
  'UserMessageAppended',
  'TaskStatusUpdated',
  'AgentMessageAppended',
  'ArtifactChunkAppended',
  'TaskCancelRequested',
  'TaskLeaseGranted',
  'TaskLeaseExpired',
  'TaskLeaseReleased',
  'AgentReplied',
  'PushConfigRegistered',
  'PushConfigRemoved',
] as const satisfies readonly TaskEventType[];

/** Schema version of every event type written by this code. */
export const TASK_EVENT_SCHEMA_VERSION = 1;

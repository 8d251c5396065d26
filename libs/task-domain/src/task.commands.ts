import type { Artifact, JsonObject, Message, TaskStatus } from '@lib/a2a-protocol';

/** What a worker may report for a task it holds a lease on. */
export type WorkerUpdate =
  | { kind: 'status'; status: TaskStatus }
  | { kind: 'message'; message: Message }
  /** A bare Message answering the message that opened the stream, instead of a task. */
  | { kind: 'reply'; message: Message }
  | { kind: 'artifact'; artifact: Artifact; append: boolean; lastChunk: boolean };

/** What happens to a task whose worker vanished (per hosted agent). */
export interface LeasePolicy {
  onLeaseLost: 'redispatch' | 'fail';
  /** Dispatch attempts per user message before the task fails. */
  maxAttempts: number;
}

export type TaskCommand =
  | {
      type: 'SubmitTask';
      taskId: string;
      contextId: string;
      agentId: string;
      ownerId: string;
      message: Message;
      metadata?: JsonObject;
      /** The agent may answer with a bare Message instead of a task. */
      mayReply?: boolean;
      /** The request's `configuration.acceptedOutputModes`, when it names any. */
      acceptedOutputModes?: string[];
      now: Date;
    }
  | {
      type: 'AppendUserMessage';
      message: Message;
      /** The request's `configuration.acceptedOutputModes`, when it names any. */
      acceptedOutputModes?: string[];
      now: Date;
    }
  | { type: 'GrantLease'; workerId: string; leaseTtlMs: number; now: Date }
  | { type: 'ApplyWorkerUpdate'; leaseEpoch: number; update: WorkerUpdate; now: Date }
  | {
      type: 'RequestCancel';
      requestedBy: string;
      metadata?: JsonObject;
      cancelGraceMs: number;
      now: Date;
    }
  | { type: 'ReleaseLease'; leaseEpoch: number; reason: string; now: Date }
  | { type: 'ExpireLease'; leaseEpoch: number; policy: LeasePolicy; messageId: string; now: Date }
  | { type: 'EnforceCancelDeadline'; now: Date }
  /** A webhook for the task's later events (its secrets travel beside the events, never in them). */
  | { type: 'RegisterPushConfig'; configId: string; origin: string }
  | { type: 'RemovePushConfig'; configId: string };

export type TaskCommandType = TaskCommand['type'];

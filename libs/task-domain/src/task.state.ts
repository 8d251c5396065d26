import {
  isInterruptedState,
  isTerminalState,
  type Artifact,
  type JsonObject,
  type Message,
  type Task,
  type TaskStateName,
} from '@lib/a2a-protocol';
import type { TaskEvent } from './task.events';

export interface Lease {
  epoch: number;
  workerId: string;
  expiresAt: string;
}

/** Where the task's work stands on the platform side. */
export type WorkStatus =
  /** Accepted and durable; waiting for a worker. */
  | 'queued'
  /** A worker holds a lease. */
  | 'leased'
  /** Nothing to do: interrupted (waiting for the client) or terminal. */
  | 'idle';

/** How the agent answered the message that opened the stream (docs/adr/0009-message-replies.md). */
export type Answer =
  /** With a task: clients see it (GetTask, ListTasks, streams). */
  | { kind: 'task' }
  /** Not yet: the agent may still reply with a bare Message, and clients see no task meanwhile. */
  | { kind: 'pending' }
  /** With this bare Message: the exchange is over and no task is ever shown for it. */
  | { kind: 'reply'; message: Message };

const TASK_ANSWER: Answer = { kind: 'task' };
const PENDING_ANSWER: Answer = { kind: 'pending' };

export interface PresentTask {
  status: 'present';
  /** The task as A2A clients see it, history and artifacts included. */
  task: Task;
  agentId: string;
  ownerId: string;
  /** Stream version of the last event folded in: the task's generation. */
  version: number;
  work: WorkStatus;
  lease: Lease | null;
  /** Highest lease epoch ever granted (fencing tokens only grow). */
  lastLeaseEpoch: number;
  /** Dispatch attempts of the current user message. */
  attempt: number;
  cancel: { requestedBy: string; deadline: string } | null;
  answer: Answer;
  /** Ids of the task's registered webhooks, in registration order (spec digest §10.10). */
  pushConfigIds: readonly string[];
}

export type TaskAggregate = { status: 'absent'; version: 0 } | PresentTask;

export function initialTaskState(): TaskAggregate {
  return { status: 'absent', version: 0 };
}

/**
 * Folds one event into the state. Total and pure: never throws; ignores what it cannot apply (an event type
 * written by newer code included), while every event of a present task still counts one version.
 */
export function evolve(state: TaskAggregate, event: TaskEvent): TaskAggregate {
  if (event.type === 'TaskSubmitted') {
    if (state.status === 'present') {
      return { ...state, version: state.version + 1 };
    }
    const d = event.data;
    return {
      status: 'present',
      task: {
        id: d.taskId,
        contextId: d.contextId,
        status: { state: 'TASK_STATE_SUBMITTED', timestamp: d.submittedAt },
        history: [d.message],
        ...(d.metadata ? { metadata: d.metadata } : {}),
      },
      agentId: d.agentId,
      ownerId: d.ownerId,
      version: state.version + 1,
      work: 'queued',
      lease: null,
      lastLeaseEpoch: 0,
      attempt: 1,
      cancel: null,
      answer: d.mayReply ? PENDING_ANSWER : TASK_ANSWER,
      pushConfigIds: [],
    };
  }
  if (state.status === 'absent') {
    return state;
  }
  const next = applyToPresent(state, event);
  return { ...next, version: state.version + 1 };
}

function applyToPresent(state: PresentTask, event: TaskEvent): PresentTask {
  switch (event.type) {
    case 'TaskSubmitted':
      return state;
    case 'UserMessageAppended': {
      // The status message (e.g. the agent's question) precedes the user's reply in history.
      const { message: pending, ...status } = state.task.status;
      const history = [
        ...(state.task.history ?? []),
        ...(pending ? [pending] : []),
        event.data.message,
      ];
      return {
        ...state,
        task: { ...state.task, status, history },
        work: 'queued',
        attempt: 1,
      };
    }
    case 'TaskStatusUpdated': {
      const previous = state.task.status.message;
      const history = previous ? [...(state.task.history ?? []), previous] : state.task.history;
      const metadata = mergeMetadata(state.task.metadata, event.data.metadata);
      const task: Task = {
        ...state.task,
        status: event.data.status,
        ...(history ? { history } : {}),
        ...(metadata ? { metadata } : {}),
      };
      // Terminal and interrupted states end the current piece of work and its lease.
      const ended = endsWork(event.data.status.state);
      return {
        ...state,
        answer: answeredWithTask(state),
        task,
        work: ended ? 'idle' : state.work,
        lease: ended ? null : state.lease,
        cancel: ended ? null : state.cancel,
      };
    }
    case 'AgentMessageAppended':
      return {
        ...state,
        answer: answeredWithTask(state),
        task: { ...state.task, history: [...(state.task.history ?? []), event.data.message] },
      };
    case 'ArtifactChunkAppended':
      return {
        ...state,
        answer: answeredWithTask(state),
        task: {
          ...state.task,
          artifacts: applyArtifact(
            state.task.artifacts ?? [],
            event.data.artifact,
            event.data.append,
          ),
        },
      };
    case 'TaskCancelRequested':
      return {
        ...state,
        cancel: { requestedBy: event.data.requestedBy, deadline: event.data.deadline },
      };
    case 'TaskLeaseGranted':
      return {
        ...state,
        work: 'leased',
        lease: {
          epoch: event.data.leaseEpoch,
          workerId: event.data.workerId,
          expiresAt: event.data.expiresAt,
        },
        lastLeaseEpoch: Math.max(state.lastLeaseEpoch, event.data.leaseEpoch),
        attempt: event.data.attempt,
      };
    case 'TaskLeaseReleased':
      if (state.lease?.epoch !== event.data.leaseEpoch) {
        return state;
      }
      // Handed back, not failed: queued again as the same attempt.
      return { ...state, lease: null, work: 'queued' };
    case 'TaskLeaseExpired':
      if (state.lease?.epoch !== event.data.leaseEpoch) {
        return state;
      }
      // Still running: the work goes back to the queue; a decision that fails the task adds a status event.
      return { ...state, lease: null, work: 'queued', attempt: state.attempt + 1 };
    case 'AgentReplied':
      if (state.answer.kind !== 'pending') {
        return state;
      }
      // The exchange is over: nothing left to do, nobody holds it.
      return {
        ...state,
        answer: { kind: 'reply', message: event.data.message },
        work: 'idle',
        lease: null,
        cancel: null,
      };
    case 'PushConfigRegistered': {
      const { configId } = event.data;
      return state.pushConfigIds.includes(configId)
        ? state
        : { ...state, pushConfigIds: [...state.pushConfigIds, configId] };
    }
    case 'PushConfigRemoved':
      return {
        ...state,
        pushConfigIds: state.pushConfigIds.filter((id) => id !== event.data.configId),
      };
    default:
      // An event type this code does not know (written by a newer version): nothing to apply.
      return state;
  }
}

/** An update about the task (status, message, artifact) makes a pending answer a task. */
function answeredWithTask(state: PresentTask): Answer {
  return state.answer.kind === 'pending' ? TASK_ANSWER : state.answer;
}

/** Whether clients see the stream as a task (it is not an exchange answered, or to be answered, by a message). */
export function shownAsTask(state: PresentTask): boolean {
  return state.answer.kind === 'task';
}

function endsWork(state: TaskStateName): boolean {
  return isTerminalState(state) || isInterruptedState(state);
}

function mergeMetadata(
  current: JsonObject | undefined,
  update: JsonObject | undefined,
): JsonObject | undefined {
  if (!update) {
    return current;
  }
  return { ...(current ?? {}), ...update };
}

/** A2A chunked artifacts (§10.6): `append` adds parts to the artifact with the same id; otherwise replace. */
function applyArtifact(artifacts: Artifact[], artifact: Artifact, append: boolean): Artifact[] {
  const index = artifacts.findIndex((a) => a.artifactId === artifact.artifactId);
  if (index < 0) {
    return [...artifacts, artifact];
  }
  const existing = artifacts[index] as Artifact;
  const merged: Artifact = append
    ? {
        ...existing,
        ...withoutParts(artifact),
        parts: [...existing.parts, ...artifact.parts],
        ...mergedMetadata(existing.metadata, artifact.metadata),
      }
    : artifact;
  return artifacts.map((a, i) => (i === index ? merged : a));
}

function withoutParts(artifact: Artifact): Omit<Artifact, 'parts'> {
  const { parts: _parts, ...rest } = artifact;
  return rest;
}

function mergedMetadata(
  a: JsonObject | undefined,
  b: JsonObject | undefined,
): { metadata?: JsonObject } {
  const merged = mergeMetadata(a, b);
  return merged ? { metadata: merged } : {};
}

export function assertNever(value: never): never {
  throw new Error(`unexpected value: ${JSON.stringify(value)}`);
}

/** The messages of a task in order, used when dispatching (the last user message triggers the work). */
export function lastUserMessage(task: Task): Message | undefined {
  const history = task.history ?? [];
  for (let i = history.length - 1; i >= 0; i--) {
    const m = history[i];
    if (m?.role === 'ROLE_USER') {
      return m;
    }
  }
  return undefined;
}

/** Folds a whole stream, oldest event first. */
export function foldTask(
  events: readonly TaskEvent[],
  from: TaskAggregate = initialTaskState(),
): TaskAggregate {
  return events.reduce(evolve, from);
}

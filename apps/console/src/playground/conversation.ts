import type { StreamEvent } from './a2a-client';
import { isInterrupted, isTerminal, type Message, type Part } from './a2a-model';

/** What happened in a conversation, in order: what the user sent, what the streams carried, notices. */
export type LogItem =
  | { readonly kind: 'sent'; readonly message: Message }
  | { readonly kind: 'event'; readonly event: StreamEvent }
  | { readonly kind: 'notice'; readonly text: string };

/**
 * One conversation with one agent, kept in sessionStorage so that a reload shows it again and resumes its
 * open stream after `lastEventId` (no event missed, none shown twice).
 */
export interface Conversation {
  /** `<tenant>/<agent>`. */
  readonly agent: string;
  contextId?: string;
  /** The task the next message continues, and its last known state. */
  task?: { id: string; state: string };
  /** The SSE id of the last event received on the task's streams. */
  lastEventId?: string;
  /** A stream of the task was open and not yet ended (a reload resubscribes). */
  streaming: boolean;
  log: LogItem[];
}

/** What the timeline shows, derived from the log. */
export type Entry =
  | { readonly kind: 'user'; readonly parts: Part[] }
  | { readonly kind: 'agent'; readonly parts: Part[] }
  | {
      readonly kind: 'status';
      readonly taskId: string;
      readonly state: string;
      readonly parts: Part[];
    }
  | {
      readonly kind: 'artifact';
      readonly taskId: string;
      readonly artifactId: string;
      readonly name: string;
      parts: Part[];
    }
  | { readonly kind: 'notice'; readonly text: string };

/** Most log items kept: beyond, the oldest are dropped (and the timeline says so). */
const MAX_LOG = 2_000;

export function newConversation(agent: string): Conversation {
  return { agent, streaming: false, log: [] };
}

/** Whether the event was already received (its id is at or before the last one seen on this task). */
export function alreadySeen(conversation: Conversation, event: StreamEvent): boolean {
  const last = conversation.lastEventId;
  if (event.id === null || last === undefined || !/^\d+$/.test(event.id) || !/^\d+$/.test(last)) {
    return false;
  }
  return Number(event.id) <= Number(last);
}

/** Appends an item and advances the conversation's task, context and last event id. */
export function record(conversation: Conversation, item: LogItem): void {
  conversation.log.push(item);
  if (conversation.log.length > MAX_LOG) {
    conversation.log.splice(0, conversation.log.length - MAX_LOG, {
      kind: 'notice',
      text: 'Older events of this conversation are no longer shown.',
    });
  }
  if (item.kind !== 'event') {
    return;
  }
  const { id, response } = item.event;
  if (id !== null) {
    conversation.lastEventId = id;
  }
  const task = response.task;
  const status = response.statusUpdate;
  if (task) {
    conversation.contextId = task.contextId;
    conversation.task = { id: task.id, state: task.status.state };
  } else if (status) {
    conversation.contextId = status.contextId;
    conversation.task = { id: status.taskId, state: status.status.state };
  } else if (response.message?.contextId) {
    conversation.contextId = response.message.contextId;
  }
}

/** The task a new message continues: the conversation's task unless it has ended. */
export function continuedTask(conversation: Conversation): string | undefined {
  const task = conversation.task;
  return task && !isTerminal(task.state) ? task.id : undefined;
}

/** The task is waiting for work, not for the user: a stream of it should be followed. */
export function taskIsLive(conversation: Conversation): boolean {
  const task = conversation.task;
  return task !== undefined && !isTerminal(task.state) && !isInterrupted(task.state);
}

/** The timeline of a log: messages, statuses, artifacts (chunks appended in place), notices. */
export function timeline(log: readonly LogItem[]): Entry[] {
  const entries: Entry[] = [];
  const artifacts = new Map<string, Extract<Entry, { kind: 'artifact' }>>();
  const putArtifact = (
    taskId: string,
    artifact: { artifactId: string; name?: string; parts: Part[] },
    append: boolean,
  ): void => {
    const key = `${taskId}\u0000${artifact.artifactId}`;
    const existing = artifacts.get(key);
    if (existing) {
      existing.parts = append ? [...existing.parts, ...artifact.parts] : [...artifact.parts];
      return;
    }
    const entry = {
      kind: 'artifact' as const,
      taskId,
      artifactId: artifact.artifactId,
      name: artifact.name ?? artifact.artifactId,
      parts: [...artifact.parts],
    };
    artifacts.set(key, entry);
    entries.push(entry);
  };
  const seenTasks = new Set<string>();
  for (const item of log) {
    if (item.kind === 'sent') {
      entries.push({ kind: 'user', parts: item.message.parts });
      continue;
    }
    if (item.kind === 'notice') {
      entries.push(item);
      continue;
    }
    const { task, message, statusUpdate, artifactUpdate } = item.event.response;
    if (task) {
      // A snapshot of a task seen before repeats its earlier status message: only its state is news.
      entries.push({
        kind: 'status',
        taskId: task.id,
        state: task.status.state,
        parts: seenTasks.has(task.id) ? [] : (task.status.message?.parts ?? []),
      });
      seenTasks.add(task.id);
      for (const artifact of task.artifacts ?? []) {
        putArtifact(task.id, artifact, false);
      }
    } else if (statusUpdate) {
      entries.push({
        kind: 'status',
        taskId: statusUpdate.taskId,
        state: statusUpdate.status.state,
        parts: statusUpdate.status.message?.parts ?? [],
      });
    } else if (artifactUpdate) {
      putArtifact(artifactUpdate.taskId, artifactUpdate.artifact, artifactUpdate.append === true);
    } else if (message) {
      entries.push({ kind: 'agent', parts: message.parts });
    }
  }
  return entries;
}

/**
 * The parts of a log item that may carry agent UI (status messages, artifacts, direct messages), in order.
 * A snapshot of a task seen before (`seenTasks`, updated here) repeats what was already shown: none of it.
 */
export function agentParts(item: LogItem, seenTasks: Set<string>): Part[] {
  if (item.kind !== 'event') {
    return [];
  }
  const { task, message, statusUpdate, artifactUpdate } = item.event.response;
  const known = task !== undefined && seenTasks.has(task.id);
  if (task) {
    seenTasks.add(task.id);
  }
  return [
    ...(known ? [] : (task?.status.message?.parts ?? [])),
    ...(known ? [] : (task?.artifacts ?? []).flatMap((a) => a.parts)),
    ...(message?.parts ?? []),
    ...(statusUpdate?.status.message?.parts ?? []),
    ...(artifactUpdate?.artifact.parts ?? []),
  ];
}

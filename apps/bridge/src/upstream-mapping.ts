import type {
  Artifact,
  JsonObject,
  Message,
  Part,
  Task,
  TaskStateName,
  TaskStatus,
} from '@lib/a2a-protocol';
import type { ExecutionUpdate } from '@lib/worker-sdk';

/**
 * The metadata key under which the bridge records, on the status messages it publishes, which upstream task
 * a platform task is (docs/upstream.md "The mapping"). The log is the bridge's only memory: a later turn, or
 * another bridge after a crash, reads it back from the task.
 */
export const UPSTREAM_LINK_KEY = 'a2a-platform/upstream';

/** The upstream task of a platform task, and the client message last sent to it. */
export interface UpstreamLink {
  readonly taskId: string;
  readonly contextId: string;
  /** The platform's (and the client's) messageId of the message last sent upstream. */
  readonly messageId: string;
}

/** The upstream's answer as ProtoJSON (`StreamResponse` of the SDK, through its `toJSON`). */
export type UpstreamEvent =
  | { readonly task: Task }
  | { readonly message: Message }
  | { readonly statusUpdate: { taskId: string; contextId: string; status: TaskStatus } }
  | {
      readonly artifactUpdate: {
        taskId: string;
        contextId: string;
        artifact: Artifact;
        append?: boolean;
        lastChunk?: boolean;
      };
    };

const TERMINAL: ReadonlySet<TaskStateName> = new Set([
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_REJECTED',
]);
const INTERRUPTED: ReadonlySet<TaskStateName> = new Set([
  'TASK_STATE_INPUT_REQUIRED',
  'TASK_STATE_AUTH_REQUIRED',
]);

/** A state after which the assignment ends: terminal, or waiting for the client. */
export function endsAssignment(state: TaskStateName): boolean {
  return TERMINAL.has(state) || INTERRUPTED.has(state);
}

/** The link the task's messages carry, newest first (the status message, then history backwards). */
export function linkOf(task: Task): UpstreamLink | undefined {
  const messages = [
    ...(task.status.message ? [task.status.message] : []),
    ...[...(task.history ?? [])].reverse(),
  ];
  for (const message of messages) {
    const link = message.metadata?.[UPSTREAM_LINK_KEY];
    if (isLink(link)) {
      return link;
    }
  }
  return undefined;
}

function isLink(value: unknown): value is UpstreamLink {
  const link = value as Partial<Record<keyof UpstreamLink, unknown>> | null;
  return (
    typeof link === 'object' &&
    link !== null &&
    typeof link.taskId === 'string' &&
    typeof link.contextId === 'string' &&
    typeof link.messageId === 'string'
  );
}

/** Where the platform task lives: the ids every published message is rewritten to. */
export interface PlatformScope {
  readonly taskId: string;
  readonly contextId: string;
}

/** An upstream message as the platform publishes it: in the platform task, the link in its metadata. */
export function platformMessage(
  message: Message,
  scope: PlatformScope,
  link?: UpstreamLink,
): Message {
  const metadata: JsonObject = { ...message.metadata };
  if (link) {
    metadata[UPSTREAM_LINK_KEY] = { ...link };
  }
  return {
    ...message,
    taskId: scope.taskId,
    contextId: scope.contextId,
    role: 'ROLE_AGENT',
    ...(Object.keys(metadata).length > 0 ? { metadata } : {}),
  };
}

/** The client's message as the upstream is sent it: the same messageId, in the upstream's task if known. */
export function upstreamMessage(message: Message, link: UpstreamLink | undefined): Message {
  const { taskId: _platformTask, contextId: _platformContext, ...rest } = message;
  return {
    ...rest,
    role: 'ROLE_USER',
    ...(link ? { taskId: link.taskId, contextId: link.contextId } : {}),
  };
}

/** The status update of an upstream status, its message moved into the platform task. */
export function statusUpdate(
  status: TaskStatus,
  scope: PlatformScope,
  link: UpstreamLink | undefined,
): ExecutionUpdate {
  return {
    kind: 'status',
    status: {
      state: status.state,
      ...(status.message ? { message: platformMessage(status.message, scope, link) } : {}),
    },
  };
}

/** The artifact update of an upstream artifact (or chunk of one). */
export function artifactUpdate(
  artifact: Artifact,
  append: boolean | undefined,
  lastChunk: boolean | undefined,
): ExecutionUpdate {
  return {
    kind: 'artifact',
    artifact,
    ...(append ? { append: true } : {}),
    ...(lastChunk ? { lastChunk: true } : {}),
  };
}

/** A text part (for the bridge's own status messages). */
export function text(value: string): Part {
  return { text: value };
}

/** The upstream task id an event names, if any (a bare Message names none). */
export function taskIdOf(event: UpstreamEvent): string | undefined {
  if ('task' in event) {
    return event.task.id;
  }
  if ('statusUpdate' in event) {
    return event.statusUpdate.taskId;
  }
  if ('artifactUpdate' in event) {
    return event.artifactUpdate.taskId;
  }
  return undefined;
}

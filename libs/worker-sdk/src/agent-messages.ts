import type { Message, Part } from '@lib/a2a-protocol';
import { randomUUID } from 'node:crypto';

/** A text part. */
export function textPart(text: string): Part {
  return { text };
}

/** Where an agent message belongs: a task, or only a context (a reply, which belongs to no task). */
export interface MessageScope {
  readonly taskId?: string;
  readonly contextId: string;
}

/** A ROLE_AGENT message with a fresh message id. */
export function agentMessage(
  scope: MessageScope,
  content: string | Part[],
  newId: () => string = randomUUID,
): Message {
  return {
    messageId: newId(),
    ...(scope.taskId === undefined ? {} : { taskId: scope.taskId }),
    contextId: scope.contextId,
    role: 'ROLE_AGENT',
    parts: typeof content === 'string' ? [textPart(content)] : content,
  };
}

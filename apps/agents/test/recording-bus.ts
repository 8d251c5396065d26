import type { Artifact, Part, TaskStateName } from '@lib/a2a-protocol';
import {
  agentMessage,
  type ExecutionEventBus,
  type ExecutionUpdate,
  type MessageScope,
} from '@lib/worker-sdk';
import { joinedText } from '../src/message-text';

/** How an artifact's parts are shown after `artifact <id><flags>` in the lines (default: their JSON). */
export type DescribeParts = (artifact: Artifact) => string;

/**
 * An `ExecutionEventBus` for the example agents' unit tests: every call becomes the `ExecutionUpdate` the SDK
 * would publish (agent messages with the id `m`), kept in order with its line (see {@link updateLine}), and
 * resolves at once.
 */
export function recordingBus(
  describeParts?: DescribeParts,
  scope: MessageScope = { taskId: 't', contextId: 'c' },
): { bus: ExecutionEventBus; updates: ExecutionUpdate[]; lines: string[] } {
  const updates: ExecutionUpdate[] = [];
  const lines: string[] = [];
  const publish = (update: ExecutionUpdate): Promise<void> => {
    updates.push(update);
    lines.push(updateLine(update, describeParts));
    return Promise.resolve();
  };
  const message = (content: string | Part[], where: MessageScope = scope) =>
    agentMessage(where, content, () => 'm');
  const status = (state: TaskStateName, content?: string | Part[]): Promise<void> =>
    publish({
      kind: 'status',
      status: content === undefined ? { state } : { state, message: message(content) },
    });
  const bus: ExecutionEventBus = {
    working: (text) => status('TASK_STATE_WORKING', text),
    status,
    inputRequired: (text) => status('TASK_STATE_INPUT_REQUIRED', text),
    complete: (text) => status('TASK_STATE_COMPLETED', text),
    fail: (text) => status('TASK_STATE_FAILED', text),
    cancelled: () => status('TASK_STATE_CANCELED'),
    message: (parts) => publish({ kind: 'message', message: message(parts) }),
    reply: (content) =>
      publish({ kind: 'reply', message: message(content, { contextId: scope.contextId }) }),
    artifact: async ({ append, lastChunk, artifactId = 'generated', ...rest }) => {
      await publish({
        kind: 'artifact',
        artifact: { ...rest, artifactId },
        ...(append === undefined ? {} : { append }),
        ...(lastChunk === undefined ? {} : { lastChunk }),
      });
      return artifactId;
    },
    publish,
  };
  return { bus, updates, lines };
}

/**
 * An update as a short line: `WORKING text`, `message text`, `reply text`, and for an artifact
 * `artifact <id><+ when appended><! when the last chunk>` followed by what `describeParts` makes of it.
 */
export function updateLine(
  update: ExecutionUpdate,
  describeParts: DescribeParts = (artifact) => ` ${JSON.stringify(artifact.parts)}`,
): string {
  switch (update.kind) {
    case 'status': {
      const text = update.status.message ? joinedText(update.status.message) : '';
      return `${update.status.state.replace('TASK_STATE_', '')}${text ? ` ${text}` : ''}`;
    }
    case 'message':
    case 'reply':
      return `${update.kind} ${joinedText(update.message)}`;
    case 'artifact': {
      const flags = `${update.append ? '+' : ''}${update.lastChunk ? '!' : ''}`;
      return `artifact ${update.artifact.artifactId}${flags}${describeParts(update.artifact)}`;
    }
  }
}

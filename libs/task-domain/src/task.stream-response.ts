import type { StreamResponse } from '@lib/a2a-protocol';
import type { TaskEvent } from './task.events';
import { foldTask } from './task.state';

/** The task an event belongs to, as a stream of it needs to name it. */
export interface TaskRef {
  taskId: string;
  contextId: string;
}

/**
 * The A2A `StreamResponse` a client watching the task sees for one event (spec digest §4.2, §10.6), or null
 * for platform-internal facts (leases, cancel requests) and for client messages, which streams do not echo.
 * An agent's reply is the one `message` the client of an exchange got (docs/adr/0009-message-replies.md).
 * The same mapping feeds SSE streams, gRPC streams, the Kafka feed and push notifications.
 */
export function toStreamResponse(event: TaskEvent, ref: TaskRef): StreamResponse | null {
  switch (event.type) {
    case 'TaskSubmitted': {
      const state = foldTask([event]);
      return state.status === 'present' ? { task: state.task } : null;
    }
    case 'TaskStatusUpdated':
      return {
        statusUpdate: {
          taskId: ref.taskId,
          contextId: ref.contextId,
          status: event.data.status,
          ...(event.data.metadata ? { metadata: event.data.metadata } : {}),
        },
      };
    case 'AgentMessageAppended':
      return { message: event.data.message };
    case 'ArtifactChunkAppended':
      return {
        artifactUpdate: {
          taskId: ref.taskId,
          contextId: ref.contextId,
          artifact: event.data.artifact,
          ...(event.data.append ? { append: true } : {}),
          ...(event.data.lastChunk ? { lastChunk: true } : {}),
          ...(event.data.metadata ? { metadata: event.data.metadata } : {}),
        },
      };
    case 'UserMessageAppended':
    case 'TaskCancelRequested':
    case 'TaskLeaseGranted':
    case 'TaskLeaseExpired':
    case 'TaskLeaseReleased':
    case 'PushConfigRegistered':
    case 'PushConfigRemoved':
      return null;
    case 'AgentReplied':
      // The bare Message the client got (no task exists for a stream to follow; the Kafka feed shows it).
      return { message: event.data.message };
    default:
      // An event type written by newer code: nothing a client of this version can be shown.
      return null;
  }
}

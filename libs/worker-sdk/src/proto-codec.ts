import { a2aPb, type Message, type Task, type workerPb } from '@lib/a2a-protocol';
import type { ExecutionUpdate } from './agent-executor';

// The generated `toJSON` produces exactly the ProtoJSON shape that the model types describe.

/**
 * Updates produced together as one `PublishUpdate` request: a single update in the request's own `update`
 * field, several in `updates` (applied in order, as one change); in the trace `traceparent` names.
 */
export function toPublishUpdateRequest(
  taskId: string,
  leaseEpoch: number,
  updates: readonly ExecutionUpdate[],
  updateId: string,
  traceparent = '',
): workerPb.PublishUpdateRequest {
  const [only] = updates;
  if (updates.length === 1 && only) {
    return { taskId, leaseEpoch, updateId, traceparent, updates: [], ...toWireUpdate(only) };
  }
  return { taskId, leaseEpoch, updateId, traceparent, updates: updates.map(toWireUpdate) };
}

function toWireUpdate(update: ExecutionUpdate): workerPb.ExecutionUpdate {
  switch (update.kind) {
    case 'status':
      return { status: a2aPb.TaskStatus.fromJSON(update.status) };
    case 'message':
      return { message: a2aPb.Message.fromJSON(update.message) };
    case 'reply':
      return { reply: a2aPb.Message.fromJSON(update.message) };
    case 'artifact':
      return {
        artifact: {
          artifact: a2aPb.Artifact.fromJSON(update.artifact),
          append: update.append ?? false,
          lastChunk: update.lastChunk ?? false,
        },
      };
  }
}

/** The assignment's task in the model shape (an absent task becomes a bare one). */
export function taskOf(assignment: workerPb.Assignment): Task {
  const json = (assignment.task ? a2aPb.Task.toJSON(assignment.task) : {}) as Partial<Task>;
  return {
    ...json,
    id: json.id ?? assignment.taskId,
    contextId: json.contextId ?? assignment.contextId,
    status: { state: 'TASK_STATE_UNSPECIFIED', ...json.status },
  };
}

/** The user message the assignment is about: its `message`, else the last user message in history. */
export function userMessageOf(assignment: workerPb.Assignment, task: Task): Message | undefined {
  if (assignment.message) {
    return a2aPb.Message.toJSON(assignment.message) as Message;
  }
  return task.history?.findLast((m) => m.role === 'ROLE_USER');
}

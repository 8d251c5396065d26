import { a2aPb, type Message, type Task, type workerPb } from '@lib/a2a-protocol';
import type { ExecutionUpdate } from './agent-executor';

// The generated `toJSON` produces exactly the ProtoJSON shape that the model types describe.

/** The update as the wire request `PublishUpdate` takes. */
export function toPublishUpdateRequest(
  taskId: string,
  leaseEpoch: number,
  update: ExecutionUpdate,
  updateId: string,
): workerPb.PublishUpdateRequest {
  switch (update.kind) {
    case 'status':
      return { taskId, leaseEpoch, updateId, status: a2aPb.TaskStatus.fromJSON(update.status) };
    case 'message':
      return { taskId, leaseEpoch, updateId, message: a2aPb.Message.fromJSON(update.message) };
    case 'artifact':
      return {
        taskId,
        leaseEpoch,
        updateId,
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

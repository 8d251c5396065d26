/** Response shaping: what the read operations trim from a task before they answer. */
import { invalidParams } from '../errors';
import type { Task } from '../model';

/**
 * Trims `history` per `historyLength` (digest §10.5): unset → unchanged; 0 → the `history` key is removed;
 * N → the N most recent messages. A negative value is invalid params.
 */
export function applyHistoryLength(task: Task, historyLength: number | undefined): Task {
  if (historyLength === undefined) {
    return task;
  }
  if (historyLength < 0) {
    throw invalidParams([{ field: 'historyLength', description: 'must not be negative' }]);
  }
  const { history, ...rest } = task;
  if (historyLength === 0 || history === undefined) {
    return rest;
  }
  return { ...rest, history: history.slice(-historyLength) };
}

/** The task without its `artifacts` key, as ListTasks returns it unless `includeArtifacts` (digest §10.7). */
export function withoutArtifacts(task: Task): Task {
  const { artifacts: _artifacts, ...rest } = task;
  return rest;
}

/**
 * The A2A v1.0 model (ProtoJSON, spec digest §4) as the platform declares it (`libs/a2a-protocol`, a file of
 * types and constants only, so the browser bundle takes nothing from it but two state lists), and the
 * playground's reading of task states.
 */
import {
  INTERRUPTED_STATES,
  TERMINAL_STATES,
  type Message,
  type Task,
  type TaskArtifactUpdateEvent,
  type TaskStatusUpdateEvent,
} from '../../../../libs/a2a-protocol/src/model';

export type {
  AgentCard,
  AgentExtension,
  AgentInterface,
  AgentSkill,
  Artifact,
  JsonObject,
  JsonValue,
  Message,
  Part,
  Task,
  TaskArtifactUpdateEvent,
  TaskStatus,
  TaskStatusUpdateEvent,
} from '../../../../libs/a2a-protocol/src/model';

/** One event of a stream as the playground reads it (§4.2): exactly one member is set. */
export interface StreamResponse {
  task?: Task;
  message?: Message;
  statusUpdate?: TaskStatusUpdateEvent;
  artifactUpdate?: TaskArtifactUpdateEvent;
}

const TERMINAL = new Set<string>(TERMINAL_STATES);
const INTERRUPTED = new Set<string>(INTERRUPTED_STATES);

/** COMPLETED, FAILED, CANCELED, REJECTED: the task accepts nothing more (§10.3). */
export function isTerminal(state: string): boolean {
  return TERMINAL.has(state);
}

/** INPUT_REQUIRED, AUTH_REQUIRED: the task waits for the client. */
export function isInterrupted(state: string): boolean {
  return INTERRUPTED.has(state);
}

/** `TASK_STATE_INPUT_REQUIRED` → `input required`. */
export function stateLabel(state: string): string {
  return state
    .replace(/^TASK_STATE_/, '')
    .replace(/_/g, ' ')
    .toLowerCase();
}

/**
 * The parts of the A2A v1.0 model (ProtoJSON, spec digest §4) the playground reads and writes. The console is
 * built apart from the platform's libraries, so these are its own, narrower declarations.
 */

export interface Part {
  text?: string;
  raw?: string;
  url?: string;
  data?: unknown;
  mediaType?: string;
  filename?: string;
  metadata?: Record<string, unknown>;
}

export interface Message {
  messageId: string;
  role: 'ROLE_USER' | 'ROLE_AGENT';
  parts: Part[];
  contextId?: string;
  taskId?: string;
  metadata?: Record<string, unknown>;
  /** URIs of the extensions whose data the message carries. */
  extensions?: string[];
}

export interface TaskStatus {
  state: string;
  message?: Message;
  timestamp?: string;
}

export interface Artifact {
  artifactId: string;
  name?: string;
  description?: string;
  parts: Part[];
}

export interface Task {
  id: string;
  contextId: string;
  status: TaskStatus;
  artifacts?: Artifact[];
  history?: Message[];
}

export interface TaskStatusUpdateEvent {
  taskId: string;
  contextId: string;
  status: TaskStatus;
}

export interface TaskArtifactUpdateEvent {
  taskId: string;
  contextId: string;
  artifact: Artifact;
  append?: boolean;
  lastChunk?: boolean;
}

/** One event of a stream (§4.2): exactly one member is set. */
export interface StreamResponse {
  task?: Task;
  message?: Message;
  statusUpdate?: TaskStatusUpdateEvent;
  artifactUpdate?: TaskArtifactUpdateEvent;
}

export interface AgentInterface {
  url: string;
  protocolBinding: string;
  protocolVersion: string;
  tenant?: string;
}

export interface AgentExtension {
  uri?: string;
  description?: string;
  required?: boolean;
  params?: Record<string, unknown>;
}

export interface AgentSkill {
  id: string;
  name: string;
  description: string;
  tags: string[];
  examples?: string[];
}

export interface AgentCard {
  name: string;
  description: string;
  version: string;
  supportedInterfaces: AgentInterface[];
  capabilities: {
    streaming?: boolean;
    pushNotifications?: boolean;
    extendedAgentCard?: boolean;
    extensions?: AgentExtension[];
  };
  defaultInputModes: string[];
  defaultOutputModes: string[];
  skills: AgentSkill[];
  signatures?: { protected: string; signature: string }[];
}

const TERMINAL = new Set([
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_REJECTED',
]);
const INTERRUPTED = new Set(['TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_AUTH_REQUIRED']);

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

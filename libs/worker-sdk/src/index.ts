/** The public entry of `@lib/worker-sdk`: run an A2A agent as a worker of the platform. */
export type {
  AgentExecutor,
  ArtifactChunk,
  ExecutionEventBus,
  ExecutionUpdate,
  RequestContext,
} from './agent-executor';
export { agentMessage, textPart, type MessageScope } from './agent-messages';
export { AgentWorker, type AgentWorkerOptions, type WorkerState } from './agent-worker';
export {
  AGENT_PROFILES,
  EXAMPLE_AGENT_IDS,
  type AgentProfile,
  type AgentProfileSkill,
  type ExampleAgentId,
} from './example-profiles';
export { consoleWorkerLogger, type WorkerLogger } from './worker-logger';
export { WorkerError, type WorkerErrorReason } from './worker.errors';

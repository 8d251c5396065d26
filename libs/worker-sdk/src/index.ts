/** The public entry of `@lib/worker-sdk`: run an A2A agent as a worker of the platform. */
export {
  activatedA2uiVersion,
  isA2uiPart,
  readA2uiActions,
  readA2uiClientCapabilities,
  type A2uiAction,
  type A2uiClientCapabilities,
} from './a2ui/a2ui-client';
export {
  a2uiAgentMessage,
  a2uiPart,
  createSurface,
  deleteSurface,
  updateComponents,
  updateDataModel,
  type CreateSurfaceOptions,
} from './a2ui/a2ui-messages';
export {
  A2UI_BASIC_CATALOG_ID,
  A2UI_EXTENSION_URIS,
  A2UI_MEDIA_TYPES,
  A2UI_MESSAGE_VERSION,
  A2UI_VERSIONS,
  a2uiAgentExtensions,
  type A2uiComponent,
  type A2uiCreateSurface,
  type A2uiDeleteSurface,
  type A2uiServerCapabilities,
  type A2uiServerMessage,
  type A2uiUpdateComponents,
  type A2uiUpdateDataModel,
  type A2uiVersion,
} from './a2ui/a2ui-protocol';
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

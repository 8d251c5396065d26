/** The public entry of `@lib/a2a-protocol`: the A2A v1.0 model, ProtoJSON decoding and error mappings. */
export * from './agent-card.proto-json';
export * from './binding-errors';
export * from './errors';
export * as a2aPb from './generated/lf/a2a/v1/a2a';
export * as taskPb from './generated/platform/task/v1/task_service';
export * as workerPb from './generated/platform/worker/v1/worker';
export * from './grpc-status';
export * from './jcs';
export * from './json-rpc';
export * from './model';
export * from './proto-json';
export * from './task-commands';

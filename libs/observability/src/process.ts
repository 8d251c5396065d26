/**
 * `@lib/observability/process`: what a process that runs no Nest application needs (an example worker), without
 * the Nest-facing half of the library (`@lib/observability`: the ops server, health, drain, the Nest logger),
 * which would load the framework into it.
 */
export * from './fatal-errors';
export * from './log-context';
export * from './logging';
export * from './process-observability';
export * from './redaction';
export * from './span-names';
export * from './trace-context';
export * from './tracing';

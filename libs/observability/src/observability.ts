import { loadConfig, observabilitySchema, tracingSchema } from '@lib/config';
import { Module, type OnApplicationShutdown } from '@nestjs/common';
import { exitOnFatalError } from './fatal-errors';
import { createLogger, installLogger } from './logging';
import { otlpTracingSetup, startTracing, stopTracing } from './tracing';

/**
 * The first thing every process entry point (`apps/*\/src/main.ts`) does: its logs (pino: JSON lines, or
 * readable ones with LOG_FORMAT=pretty; every Nest logger writes to it), its traces (when an OTLP endpoint
 * is configured, docs/observability.md), and its end on a bug (logged at `fatal`, exit code 1).
 * `app` names the deployable in every line (`app`) and in the default service name (`a2a-<app>`).
 */
export function startObservability(app: string): void {
  const config = loadConfig(
    observabilitySchema.pick({ LOG_LEVEL: true, LOG_FORMAT: true }).merge(tracingSchema),
  );
  installLogger(createLogger({ app, level: config.LOG_LEVEL, format: config.LOG_FORMAT }));
  const tracing = otlpTracingSetup(app, config);
  if (tracing) {
    startTracing(tracing);
  }
  exitOnFatalError();
}

/** Sends the spans still buffered when the application shuts down. */
class TracingShutdown implements OnApplicationShutdown {
  async onApplicationShutdown(): Promise<void> {
    await stopTracing();
  }
}

/**
 * Imported by every app's root module: the process's spans are sent before it exits (its last shutdown
 * hook; a no-op with tracing off).
 */
@Module({ providers: [TracingShutdown] })
export class ObservabilityModule {}

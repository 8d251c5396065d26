import { loadConfig, observabilitySchema, tracingSchema } from '@lib/config';
import type { Logger } from 'pino';
import { exitOnFatalError } from './fatal-errors';
import { createLogger, installLogger } from './logging';
import { otlpTracing, startTracing } from './tracing';
import type * as TracingSdk from './tracing-sdk';

/**
 * The first thing a process entry point does: its logs (pino: JSON lines, or readable ones with
 * LOG_FORMAT=pretty), its traces (when an OTLP endpoint is configured, docs/observability.md), and its end on
 * a bug (logged at `fatal`, exit code 1). `app` names the deployable in every line (`app`) and in the default
 * service name (`a2a-<app>`). Returns the root logger. A process that runs no Nest application (an example
 * worker) calls this one and loads no framework; the others call `startObservability`.
 */
export function startProcessObservability(app: string): Logger {
  const config = loadConfig(
    observabilitySchema.pick({ LOG_LEVEL: true, LOG_FORMAT: true }).merge(tracingSchema),
  );
  const logger = createLogger({ app, level: config.LOG_LEVEL, format: config.LOG_FORMAT });
  installLogger(logger);
  const otlp = otlpTracing(app, config);
  if (otlp) {
    // The SDK is loaded here, by a process that traces, and by no other (./tracing-sdk).
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- see the line above
    const sdk = require('./tracing-sdk') as typeof TracingSdk;
    startTracing(sdk.registerProvider(sdk.otlpTracingSetup(otlp)));
  }
  exitOnFatalError();
  return logger;
}

import { loadConfig, observabilitySchema } from '@lib/config';
import { exitOnFatalError } from './fatal-errors';
import { createLogger, installLogger } from './logging';

/**
 * The first thing every process entry point (`apps/*\/src/main.ts`) does: its logs (pino: JSON lines, or
 * readable ones with LOG_FORMAT=pretty; every Nest logger writes to it) and its end on a bug (logged at
 * `fatal`, exit code 1). `app` names the deployable in every line (`app`).
 */
export function startObservability(app: string): void {
  const config = loadConfig(observabilitySchema.pick({ LOG_LEVEL: true, LOG_FORMAT: true }));
  installLogger(createLogger({ app, level: config.LOG_LEVEL, format: config.LOG_FORMAT }));
  exitOnFatalError();
}

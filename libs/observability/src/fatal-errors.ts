import { Logger } from '@nestjs/common';

/**
 * Makes a platform process end on a bug with one clear log line: an exception nobody caught, or a promise
 * rejection nobody handled, is logged with its stack under `processName` and the process exits with code 1
 * (a supervisor, Kubernetes or `npm start`'s own, starts it again). Faults of dependencies never get here:
 * every client of Postgres, Kafka and gRPC handles its own errors.
 */
export function exitOnFatalError(processName: string): void {
  const logger = new Logger(processName);
  const fatal = (kind: string, error: unknown): never => {
    const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
    logger.fatal(`${kind} (a bug; the process exits): ${detail}`);
    process.exit(1);
  };
  process.on('uncaughtException', (error) => fatal('uncaught exception', error));
  process.on('unhandledRejection', (reason) => fatal('unhandled promise rejection', reason));
}

import { rootLogger } from './logging';

/**
 * Makes a platform process end on a bug with one clear log line: an exception nobody caught, or a promise
 * rejection nobody handled, is logged at `fatal` with its stack and the process exits with code 1 (a
 * supervisor, Kubernetes or `npm start`'s own, starts it again). Faults of dependencies never get here:
 * every client of Postgres, Kafka and gRPC handles its own errors. The line is written synchronously, so
 * `process.exit` cannot lose it.
 */
export function exitOnFatalError(): void {
  const fatal = (kind: string, error: unknown): never => {
    rootLogger().fatal({ component: 'process', err: error }, `${kind} (a bug; the process exits)`);
    process.exit(1);
  };
  process.on('uncaughtException', (error) => fatal('uncaught exception', error));
  process.on('unhandledRejection', (reason) => fatal('unhandled promise rejection', reason));
}

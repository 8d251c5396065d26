import { rootLogger } from './logging';
import { stopTracing, tracingEnabled } from './tracing';

/** How long a process that must end waits for its buffered spans to be sent. */
const FLUSH_BEFORE_EXIT_MS = 2_000;

/**
 * Ends the process with `code` once its buffered spans are sent (at most a short while; at once when tracing
 * is off). Log lines need no flushing: they are written synchronously.
 */
export function exitProcess(code: number): void {
  if (!tracingEnabled()) {
    process.exit(code);
  }
  setTimeout(() => process.exit(code), FLUSH_BEFORE_EXIT_MS);
  void stopTracing()
    .catch(() => undefined)
    .finally(() => process.exit(code));
}

/**
 * Makes a platform process end on a bug with one clear log line: an exception nobody caught, or a promise
 * rejection nobody handled, is logged at `fatal` with its stack and the process exits with code 1 (a
 * supervisor, Kubernetes or `npm start`'s own, starts it again). Faults of dependencies never get here:
 * every client of Postgres, Kafka and gRPC handles its own errors. The line is written synchronously;
 * buffered spans get a short while to be sent ({@link exitProcess}).
 */
export function exitOnFatalError(): void {
  let ending = false;
  const fatal = (kind: string, error: unknown): void => {
    rootLogger().fatal({ component: 'process', err: error }, `${kind} (a bug; the process exits)`);
    if (!ending) {
      ending = true;
      exitProcess(1);
    }
  };
  process.on('uncaughtException', (error) => fatal('uncaught exception', error));
  process.on('unhandledRejection', (reason) => fatal('unhandled promise rejection', reason));
}

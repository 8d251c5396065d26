import type { INestApplicationContext, LoggerService } from '@nestjs/common';
import { lifecycle } from './lifecycle';
import type { OpsServer } from './ops-server';

/** After the drain, the close of every module gets this long before the process gives up and exits 1. */
const CLOSE_TIMEOUT_MS = 10_000;

export interface ShutdownOptions {
  /** SHUTDOWN_GRACE_MS: how long the drain may take. */
  graceMs: number;
  logger: LoggerService;
  /** What runs after the drain and before the modules close (the standalone process stops its workers). */
  beforeClose?: () => Promise<void>;
  /** What runs once everything else has closed (the standalone process stops its embedded Postgres). */
  afterClose?: () => Promise<void>;
}

/**
 * The graceful end of a process on SIGTERM or SIGINT (docs/deploy.md "Drain"), in place of Nest's own
 * shutdown hooks: readiness turns 503 at once and for good, every drain step runs (bounded by the grace),
 * then the modules close as usual and the process exits 0, logging how long it took. Signals after the
 * first change nothing (a Ctrl-C under npm arrives twice: from the terminal and forwarded by npm); a
 * shutdown that does not finish in time ends the process with 1.
 */
export function closeOnSignal(
  app: INestApplicationContext,
  ops: OpsServer,
  options: ShutdownOptions,
): void {
  const { graceMs, logger } = options;
  let signalled = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (signalled) {
      return;
    }
    signalled = true;
    const started = Date.now();
    logger.log(`${signal}: draining (grace ${graceMs} ms)`);
    const giveUp = setTimeout(() => {
      logger.error(`shutdown did not finish within ${graceMs + CLOSE_TIMEOUT_MS} ms; exiting`);
      process.exit(1);
    }, graceMs + CLOSE_TIMEOUT_MS);
    giveUp.unref();
    void (async () => {
      const reports = await lifecycle.drain(graceMs);
      for (const { step, ms, outcome } of reports) {
        logger.log(`drain step ${step}: ${outcome} in ${ms} ms`);
      }
      await options.beforeClose?.();
      await app.close();
      await ops.close();
      await options.afterClose?.();
      logger.log(`shut down in ${Date.now() - started} ms`);
    })().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error(
          `shutdown failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
        );
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

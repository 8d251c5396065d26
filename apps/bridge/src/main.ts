import { bridgeSchema, loadConfig, postgresSchema, upstreamSchema } from '@lib/config';
import { createPool } from '@lib/event-store';
import { exitProcess, fieldLogger, startObservability } from '@lib/observability';
import { UpstreamStore } from '@lib/upstream';
import { Bridge } from './bridge';

const log = fieldLogger('Bridge');

/** The bridge: serves the agents imported from existing A2A servers (`node dist/apps/bridge/src/main.js`). */
async function main(): Promise<number> {
  const config = loadConfig(postgresSchema.merge(upstreamSchema).merge(bridgeSchema));
  const key = config.UPSTREAM_SECRETS_KEY;
  if (!key) {
    log.error(
      'UPSTREAM_SECRETS_KEY is required: the key the admin API sealed the upstream secrets with',
    );
    return 1;
  }
  const pool = createPool(config.POSTGRES_URL, { max: 2, applicationName: 'a2a-bridge:upstreams' });
  const bridge = new Bridge({ ...config, UPSTREAM_SECRETS_KEY: key }, new UpstreamStore(pool), log);
  let signals = 0;
  const stop = (): void => {
    signals += 1;
    if (signals > 1) {
      process.exit(130);
    }
    void bridge.shutdown();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  if (process.send) {
    // Started by a supervisor (`npm start`) with an IPC channel: its closing means the supervisor is gone.
    process.once('disconnect', () => process.exit(0));
  }
  log.info('bridge ready');
  await bridge.run();
  await pool.end();
  return 0;
}

startObservability('bridge');
main().then(
  (code) => exitProcess(code),
  (error: unknown) => {
    log.error('bridge failed', { err: error });
    exitProcess(1);
  },
);

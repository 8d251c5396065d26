import { loadConfig, observabilitySchema } from '@lib/config';
import { prepareSchema } from '@lib/event-store';
import { OpsServer, startObservability, startupReport } from '@lib/observability';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import 'reflect-metadata';
import { bridgeConfigFromEnv, BridgeModule } from './bridge.module';

/** The bridge: serves the agents imported from existing A2A servers (docs/upstream.md). */
async function bootstrap(): Promise<void> {
  const logger = new Logger('Bridge');
  const config = bridgeConfigFromEnv();
  const observability = loadConfig(observabilitySchema);
  const ops = await OpsServer.start(observability);
  await prepareSchema(config.POSTGRES_URL, config.SCHEMA_MIGRATION, startupReport(logger));
  const app = await NestFactory.createApplicationContext(BridgeModule.forRoot(config));
  await app.init();
  ops.serve(app, { graceMs: observability.SHUTDOWN_GRACE_MS, logger });
  if (process.send) {
    // Started by a supervisor (`npm start`) with an IPC channel: its closing means the supervisor is gone.
    process.once('disconnect', () => process.exit(0));
  }
  logger.log(`bridge ready; ops endpoints on ${ops.url} (/livez, /readyz, /metrics)`);
}

startObservability('bridge');
bootstrap().catch((error: unknown) => {
  new Logger('Bridge').fatal(error);
  process.exit(1);
});

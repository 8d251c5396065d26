import { loadConfig, observabilitySchema } from '@lib/config';
import { prepareSchema } from '@lib/event-store';
import { OpsServer, startObservability, startupReport } from '@lib/observability';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import 'reflect-metadata';
import { relayConfigFromEnv, RelayModule } from './relay.module';

async function bootstrap(): Promise<void> {
  const logger = new Logger('Relay');
  const config = relayConfigFromEnv();
  const observability = loadConfig(observabilitySchema);
  const ops = await OpsServer.start(observability);
  await prepareSchema(
    config.POSTGRES_URL,
    config.SCHEMA_MIGRATION,
    startupReport(new Logger('Relay')),
  );
  const app = await NestFactory.createApplicationContext(RelayModule.forRoot(config));
  await app.init();
  ops.serve(app, { graceMs: observability.SHUTDOWN_GRACE_MS, logger });
  logger.log(`relay ready; ops endpoints on ${ops.url} (/livez, /readyz, /metrics)`);
}

startObservability('relay');
bootstrap().catch((error: unknown) => {
  new Logger('Relay').fatal(error);
  process.exit(1);
});

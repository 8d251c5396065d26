import { ingressSchema, loadConfig, observabilitySchema } from '@lib/config';
import { prepareSchema } from '@lib/event-store';
import { OpsServer, startObservability, startupReport } from '@lib/observability';
import { loadSigningKey } from '@lib/signing';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import 'reflect-metadata';
import { pushDispatcherConfigFromEnv, PushDispatcherModule } from './push-dispatcher.module';
import { PUSH_SIGNING_KEY } from './tokens';

async function bootstrap(): Promise<void> {
  const config = pushDispatcherConfigFromEnv();
  // Receivers verify signatures against the ingress JWK Set: the dispatcher must sign with that very key.
  const { AGENT_CARD_SIGNING_KEY_FILE } = loadConfig(
    ingressSchema.pick({ AGENT_CARD_SIGNING_KEY_FILE: true }),
  );
  const key = loadSigningKey(AGENT_CARD_SIGNING_KEY_FILE);
  if (!key) {
    throw new Error(
      'AGENT_CARD_SIGNING_KEY_FILE is required: webhooks are signed with the key the ingress publishes',
    );
  }
  const observability = loadConfig(observabilitySchema);
  const ops = await OpsServer.start(observability);
  await prepareSchema(
    config.POSTGRES_URL,
    config.SCHEMA_MIGRATION,
    startupReport(new Logger('PushDispatcher')),
  );
  // No HTTP server: operators list and redrive deliveries through the admin API.
  const app = await NestFactory.createApplicationContext(
    PushDispatcherModule.forRoot(config, { provide: PUSH_SIGNING_KEY, useValue: key }),
  );
  await app.init();
  const logger = new Logger('PushDispatcher');
  ops.serve(app, { graceMs: observability.SHUTDOWN_GRACE_MS, logger });
  logger.log(`push dispatcher ready; ops endpoints on ${ops.url} (/livez, /readyz, /metrics)`);
}

startObservability('push-dispatcher');
bootstrap().catch((error: unknown) => {
  new Logger('PushDispatcher').fatal(error);
  process.exit(1);
});

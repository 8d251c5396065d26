import { ingressSchema, loadConfig } from '@lib/config';
import { migrate, whenDatabaseReachable } from '@lib/event-store';
import { startObservability } from '@lib/observability';
import { loadSigningKey } from '@lib/signing';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import 'reflect-metadata';
import { PushDispatcherModule, pushDispatcherConfigFromEnv } from './push-dispatcher.module';
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
  await whenDatabaseReachable(
    () => migrate(config.POSTGRES_URL),
    (message) => new Logger('PushDispatcher').warn(message),
  );
  // No HTTP server: operators list and redrive deliveries through the admin API.
  const app = await NestFactory.createApplicationContext(
    PushDispatcherModule.forRoot(config, { provide: PUSH_SIGNING_KEY, useValue: key }),
  );
  app.enableShutdownHooks();
  new Logger('PushDispatcher').log('push dispatcher ready');
}

startObservability('push-dispatcher');
bootstrap().catch((error: unknown) => {
  new Logger('PushDispatcher').fatal(error);
  process.exit(1);
});

import { migrate, whenDatabaseReachable } from '@lib/event-store';
import { startObservability } from '@lib/observability';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import 'reflect-metadata';
import { RelayModule, relayConfigFromEnv } from './relay.module';

async function bootstrap(): Promise<void> {
  const config = relayConfigFromEnv();
  await whenDatabaseReachable(
    () => migrate(config.POSTGRES_URL),
    (message) => new Logger('Relay').warn(message),
  );
  const app = await NestFactory.createApplicationContext(RelayModule.forRoot(config));
  app.enableShutdownHooks();
  await app.init();
}

startObservability('relay');
bootstrap().catch((error: unknown) => {
  new Logger('Relay').fatal(error);
  process.exit(1);
});

import { migrate, whenDatabaseReachable } from '@lib/event-store';
import { exitOnFatalError } from '@lib/observability';
import { NestFactory } from '@nestjs/core';
import 'reflect-metadata';
import { RelayModule, relayConfigFromEnv } from './relay.module';

async function bootstrap(): Promise<void> {
  const config = relayConfigFromEnv();
  await whenDatabaseReachable(
    () => migrate(config.POSTGRES_URL),
    (message) => console.warn(message),
  );
  const app = await NestFactory.createApplicationContext(RelayModule.forRoot(config));
  app.enableShutdownHooks();
  await app.init();
}

exitOnFatalError('Relay');
bootstrap().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

import { migrate } from '@lib/event-store';
import { NestFactory } from '@nestjs/core';
import 'reflect-metadata';
import { RelayModule, relayConfigFromEnv } from './relay.module';

async function bootstrap(): Promise<void> {
  const config = relayConfigFromEnv();
  await migrate(config.POSTGRES_URL);
  const app = await NestFactory.createApplicationContext(RelayModule.forRoot(config));
  app.enableShutdownHooks();
  await app.init();
}

bootstrap().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

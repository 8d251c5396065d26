import { migrate } from '@lib/event-store';
import { NestFactory } from '@nestjs/core';
import 'reflect-metadata';
import { TaskServiceModule, taskServiceConfigFromEnv } from './task-service.module';

async function bootstrap(): Promise<void> {
  const config = taskServiceConfigFromEnv();
  await migrate(config.POSTGRES_URL);
  const app = await NestFactory.createApplicationContext(TaskServiceModule.forRoot(config));
  app.enableShutdownHooks();
  await app.init();
}

bootstrap().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

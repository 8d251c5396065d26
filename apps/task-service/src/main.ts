import { migrate, whenDatabaseReachable } from '@lib/event-store';
import { startObservability } from '@lib/observability';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import 'reflect-metadata';
import { TaskServiceModule, taskServiceConfigFromEnv } from './task-service.module';

async function bootstrap(): Promise<void> {
  const config = taskServiceConfigFromEnv();
  await whenDatabaseReachable(
    () => migrate(config.POSTGRES_URL),
    (message) => new Logger('TaskService').warn(message),
  );
  const app = await NestFactory.createApplicationContext(TaskServiceModule.forRoot(config));
  app.enableShutdownHooks();
  await app.init();
}

startObservability('task-service');
bootstrap().catch((error: unknown) => {
  new Logger('TaskService').fatal(error);
  process.exit(1);
});

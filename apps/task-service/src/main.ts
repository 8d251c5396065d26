import { migrate, whenDatabaseReachable } from '@lib/event-store';
import { exitOnFatalError } from '@lib/observability';
import { NestFactory } from '@nestjs/core';
import 'reflect-metadata';
import { TaskServiceModule, taskServiceConfigFromEnv } from './task-service.module';

async function bootstrap(): Promise<void> {
  const config = taskServiceConfigFromEnv();
  await whenDatabaseReachable(
    () => migrate(config.POSTGRES_URL),
    (message) => console.warn(message),
  );
  const app = await NestFactory.createApplicationContext(TaskServiceModule.forRoot(config));
  app.enableShutdownHooks();
  await app.init();
}

exitOnFatalError('TaskService');
bootstrap().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

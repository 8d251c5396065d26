import { loadConfig, observabilitySchema } from '@lib/config';
import { prepareSchema } from '@lib/event-store';
import { OpsServer, startObservability, startupReport } from '@lib/observability';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import 'reflect-metadata';
import { taskServiceConfigFromEnv, TaskServiceModule } from './task-service.module';

async function bootstrap(): Promise<void> {
  const logger = new Logger('TaskService');
  const config = taskServiceConfigFromEnv();
  const observability = loadConfig(observabilitySchema);
  const ops = await OpsServer.start(observability);
  await prepareSchema(
    config.POSTGRES_URL,
    config.SCHEMA_MIGRATION,
    startupReport(new Logger('TaskService')),
  );
  const app = await NestFactory.createApplicationContext(TaskServiceModule.forRoot(config));
  await app.init();
  ops.serve(app, { graceMs: observability.SHUTDOWN_GRACE_MS, logger });
  logger.log(`task-service ready; ops endpoints on ${ops.url} (/livez, /readyz, /metrics)`);
}

startObservability('task-service');
bootstrap().catch((error: unknown) => {
  new Logger('TaskService').fatal(error);
  process.exit(1);
});

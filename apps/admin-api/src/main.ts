import { loadConfig, observabilitySchema } from '@lib/config';
import { prepareSchema } from '@lib/event-store';
import { drainHttpApp, OpsServer, startObservability, startupReport } from '@lib/observability';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import 'reflect-metadata';
import { adminApiConfigFromEnv, AdminApiModule } from './admin-api.module';
import { serveConsole } from './console';

async function bootstrap(): Promise<void> {
  const logger = new Logger('AdminApi');
  const config = adminApiConfigFromEnv();
  const observability = loadConfig(observabilitySchema);
  const ops = await OpsServer.start(observability);
  await prepareSchema(
    config.POSTGRES_URL,
    config.SCHEMA_MIGRATION,
    startupReport(new Logger('AdminApi')),
  );
  // Bodies are read by the admin routes themselves (JsonBodyMiddleware), as in the standalone process.
  const app = await NestFactory.create(AdminApiModule.forRoot(config), { bodyParser: false });
  drainHttpApp(app, 'admin-http');
  serveConsole(app, config.ADMIN_CONSOLE_DIR);
  await app.listen(config.ADMIN_API_PORT, config.ADMIN_API_HOST);
  ops.serve(app, { graceMs: observability.SHUTDOWN_GRACE_MS, logger });
  logger.log(
    `admin API ready: http://${config.ADMIN_API_HOST}:${config.ADMIN_API_PORT}/admin/v1/openapi.json, web console at /console/; ops endpoints on ${ops.url}`,
  );
}

startObservability('admin-api');
bootstrap().catch((error: unknown) => {
  new Logger('AdminApi').fatal(error);
  process.exit(1);
});

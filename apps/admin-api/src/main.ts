import { migrate, whenDatabaseReachable } from '@lib/event-store';
import { startObservability } from '@lib/observability';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import 'reflect-metadata';
import { AdminApiModule, adminApiConfigFromEnv } from './admin-api.module';

async function bootstrap(): Promise<void> {
  const config = adminApiConfigFromEnv();
  await whenDatabaseReachable(
    () => migrate(config.POSTGRES_URL),
    (message) => new Logger('AdminApi').warn(message),
  );
  // Bodies are read by the admin routes themselves (JsonBodyMiddleware), as in the standalone process.
  const app = await NestFactory.create(AdminApiModule.forRoot(config), { bodyParser: false });
  app.enableShutdownHooks();
  await app.listen(config.ADMIN_API_PORT, config.ADMIN_API_HOST);
  new Logger('AdminApi').log(
    `admin API ready: http://${config.ADMIN_API_HOST}:${config.ADMIN_API_PORT}/admin/v1/openapi.json`,
  );
}

startObservability('admin-api');
bootstrap().catch((error: unknown) => {
  new Logger('AdminApi').fatal(error);
  process.exit(1);
});

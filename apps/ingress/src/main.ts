import { loadConfig, observabilitySchema } from '@lib/config';
import { prepareSchema } from '@lib/event-store';
import { drainHttpApp, OpsServer, startObservability, startupReport } from '@lib/observability';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import 'reflect-metadata';
import { ingressConfigFromEnv, IngressModule } from './ingress.module';

async function bootstrap(): Promise<void> {
  const logger = new Logger('Ingress');
  const config = ingressConfigFromEnv();
  const observability = loadConfig(observabilitySchema);
  const ops = await OpsServer.start(observability);
  await prepareSchema(config.POSTGRES_URL, config.SCHEMA_MIGRATION, startupReport(logger));
  const app = await NestFactory.create(IngressModule.forRoot(config), { bodyParser: false });
  drainHttpApp(app, 'ingress-http');
  await app.listen(config.INGRESS_PORT, config.INGRESS_HOST);
  ops.serve(app, { graceMs: observability.SHUTDOWN_GRACE_MS, logger });
  logger.log(`ingress ready; ops endpoints on ${ops.url} (/livez, /readyz, /metrics)`);
}

startObservability('ingress');
bootstrap().catch((error: unknown) => {
  new Logger('Ingress').fatal(error);
  process.exit(1);
});

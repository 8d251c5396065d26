import { startObservability } from '@lib/observability';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import 'reflect-metadata';
import { IngressModule, ingressConfigFromEnv } from './ingress.module';

async function bootstrap(): Promise<void> {
  const config = ingressConfigFromEnv();
  const app = await NestFactory.create(IngressModule.forRoot(config), { bodyParser: false });
  app.enableShutdownHooks();
  await app.listen(config.INGRESS_PORT, config.INGRESS_HOST);
}

startObservability('ingress');
bootstrap().catch((error: unknown) => {
  new Logger('Ingress').fatal(error);
  process.exit(1);
});

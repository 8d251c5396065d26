import { exitOnFatalError } from '@lib/observability';
import { NestFactory } from '@nestjs/core';
import 'reflect-metadata';
import { IngressModule, ingressConfigFromEnv } from './ingress.module';

async function bootstrap(): Promise<void> {
  const config = ingressConfigFromEnv();
  const app = await NestFactory.create(IngressModule.forRoot(config), { bodyParser: false });
  app.enableShutdownHooks();
  await app.listen(config.INGRESS_PORT, config.INGRESS_HOST);
}

exitOnFatalError('Ingress');
bootstrap().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

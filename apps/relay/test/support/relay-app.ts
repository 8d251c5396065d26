/** The relay in-process, as `main.ts` composes it, for integration tests. */
import { loadConfig, postgresSchema, relaySchema, type RelayConfig } from '@lib/config';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { RelayModule } from '../../src/relay.module';
import { RelayService } from '../../src/relay.service';

/** A relay configuration from explicit values (defaults as in libs/config for everything else). */
export function relayConfig(values: {
  POSTGRES_URL: string;
  KAFKA_BROKERS: string;
  TASK_EVENTS_TOPIC: string;
  RELAY_NAME: string;
  RELAY_BATCH_SIZE?: string;
  RELAY_IDLE_POLL_MS?: string;
}): RelayConfig {
  return loadConfig(postgresSchema.merge(relaySchema), values);
}

export interface InProcessRelay {
  app: INestApplicationContext;
  service: RelayService;
  /** Graceful shutdown (what SIGTERM does in the process): finishes the batch in flight, releases the lock. */
  close(): Promise<void>;
}

export async function startRelay(config: RelayConfig): Promise<InProcessRelay> {
  const app = await NestFactory.createApplicationContext(RelayModule.forRoot(config), {
    logger: ['error', 'warn'],
  });
  await app.init();
  let closed = false;
  return {
    app,
    service: app.get(RelayService),
    async close() {
      if (!closed) {
        closed = true;
        await app.close();
      }
    },
  };
}

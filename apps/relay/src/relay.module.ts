import {
  kafkaClientRules,
  loadConfig,
  postgresSchema,
  relaySchema,
  type RelayConfig,
} from '@lib/config';
import { createPool } from '@lib/event-store';
import { closedLast, ObservabilityModule, OpsModule } from '@lib/observability';
import { Logger, Module, type DynamicModule } from '@nestjs/common';
import { KafkajsTaskEventPublisher } from './kafkajs.publisher';
import { RelayOps } from './relay-ops';
import { RelayService } from './relay.service';
import { TaskEventPublisher } from './task-event-publisher';
import { RELAY_CONFIG, RELAY_PG_POOL } from './tokens';

/** The relay's configuration from the process's environment, or from `env` (tests). */
export function relayConfigFromEnv(env?: Record<string, string | undefined>): RelayConfig {
  return loadConfig(postgresSchema.merge(relaySchema).superRefine(kafkaClientRules), env);
}

/** Composition root of the relay: the committed log → the Kafka task-event feed. */
@Module({})
export class RelayModule {
  static forRoot(config: RelayConfig): DynamicModule {
    return {
      module: RelayModule,
      imports: [OpsModule, ObservabilityModule],
      providers: [
        { provide: RELAY_CONFIG, useValue: config },
        ...closedLast(RELAY_PG_POOL, () =>
          createPool(config.POSTGRES_URL, {
            max: 3,
            applicationName: 'a2a-relay:pool',
            warn: (message) => Logger.warn(message, 'RelayPool'),
          }),
        ),
        { provide: TaskEventPublisher, useClass: KafkajsTaskEventPublisher },
        RelayService,
        RelayOps,
      ],
      exports: [RelayService],
    };
  }
}

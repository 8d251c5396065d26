import {
  kafkaClientRules,
  kafkaClientSchema,
  loadConfig,
  postgresSchema,
  pushDispatcherSchema,
  relaySchema,
  type PushDispatcherConfig,
} from '@lib/config';
import { createPool } from '@lib/event-store';
import { closedLast, ObservabilityModule, OpsModule } from '@lib/observability';
import { PushAllowlist, WebhookSender } from '@lib/push';
import type { SigningKey } from '@lib/signing';
import { Logger, Module, type DynamicModule, type Provider } from '@nestjs/common';
import { DeliveryStore } from './delivery-store';
import { FeedConsumer } from './feed-consumer';
import { LaneQueue } from './lane-queue';
import { LaneRunner } from './lane-runner';
import { PushDispatcherOps } from './push-dispatcher-ops';
import { Reconciler } from './reconciler';
import { PUSH_CONFIG, PUSH_PG_POOL, PUSH_SIGNING_KEY } from './tokens';

/** The push dispatcher's configuration from the process's environment, or from `env` (tests). */
export function pushDispatcherConfigFromEnv(
  env?: Record<string, string | undefined>,
): PushDispatcherConfig {
  return loadConfig(
    postgresSchema
      .merge(kafkaClientSchema)
      .merge(relaySchema.pick({ TASK_EVENTS_TOPIC: true }))
      .merge(pushDispatcherSchema)
      .superRefine(kafkaClientRules),
    env,
  );
}

/**
 * Composition root of the push dispatcher (docs/adr/0010-push-notifications.md): the feed consumer that
 * derives deliveries, the lane runner that sends them (BullMQ), and the reconciler that rebuilds Redis from
 * Postgres; operators list and redrive deliveries through the admin API. `signingKey` provides
 * PUSH_SIGNING_KEY: the agent-card key, whose JWK Set the ingress publishes; `imports` are the modules it
 * needs.
 */
@Module({})
export class PushDispatcherModule {
  static forRoot(
    config: PushDispatcherConfig,
    signingKey: Provider,
    imports: DynamicModule[] = [],
  ): DynamicModule {
    return {
      module: PushDispatcherModule,
      imports: [OpsModule, ObservabilityModule, ...imports],
      providers: [
        { provide: PUSH_CONFIG, useValue: config },
        ...closedLast(PUSH_PG_POOL, () =>
          createPool(config.POSTGRES_URL, {
            max: config.POSTGRES_POOL_SIZE,
            applicationName: 'a2a-push-dispatcher:pool',
            warn: (message) => Logger.warn(message, 'PushPool'),
          }),
        ),
        signingKey,
        {
          provide: WebhookSender,
          useFactory: (key: SigningKey) =>
            new WebhookSender({
              signingKey: key,
              allowlist: new PushAllowlist(config.PUSH_ALLOWLIST),
              connectTimeoutMs: config.PUSH_CONNECT_TIMEOUT_MS,
              responseTimeoutMs: config.PUSH_RESPONSE_TIMEOUT_MS,
              bodyTimeoutMs: config.PUSH_BODY_TIMEOUT_MS,
              responseBodyLimitBytes: config.PUSH_RESPONSE_BODY_LIMIT_BYTES,
              retryAfterCapMs: config.PUSH_BACKOFF_CAP_MS,
            }),
          inject: [PUSH_SIGNING_KEY],
        },
        DeliveryStore,
        LaneQueue,
        LaneRunner,
        FeedConsumer,
        Reconciler,
        PushDispatcherOps,
      ],
      exports: [DeliveryStore, Reconciler],
    };
  }
}

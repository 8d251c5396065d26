import { AuditWriter } from '@lib/audit';
import {
  bridgeSchema,
  loadConfig,
  postgresSchema,
  upstreamSchema,
  type BridgeConfig,
} from '@lib/config';
import { createPool } from '@lib/event-store';
import {
  fieldLogger,
  lifecycle,
  ObservabilityModule,
  OpsModule,
  OpsRegistrations,
} from '@lib/observability';
import { UpstreamStore } from '@lib/upstream';
import {
  Inject,
  Injectable,
  Logger,
  Module,
  type DynamicModule,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import type { Pool } from 'pg';
import { Bridge } from './bridge';
import { BRIDGE_CONFIG, BRIDGE_PG_POOL } from './tokens';

/** The bridge's configuration; UPSTREAM_SECRETS_KEY is required. */
export function bridgeConfigFromEnv(): BridgeConfig & { UPSTREAM_SECRETS_KEY: string } {
  const config = loadConfig(postgresSchema.merge(upstreamSchema).merge(bridgeSchema));
  const key = config.UPSTREAM_SECRETS_KEY;
  if (!key) {
    throw new Error(
      'invalid configuration: UPSTREAM_SECRETS_KEY is required (the key the admin API sealed the upstream secrets with)',
    );
  }
  return {
    ...config,
    UPSTREAM_SECRETS_KEY: key,
    WORKER_TARGET: workerTarget(config.WORKER_TARGET),
  };
}

/**
 * WORKER_TARGET as a gRPC target: a comma-separated list of IPv4 `address:port` (every task-service replica,
 * as the drill resolves a Service) is dialled as one `ipv4:` target; anything else is used as it is.
 */
export function workerTarget(value: string): string {
  const parts = value.split(',');
  return parts.length > 1 && parts.every((part) => /^\d{1,3}(\.\d{1,3}){3}:\d+$/.test(part.trim()))
    ? `ipv4:${parts.map((part) => part.trim()).join(',')}`
    : value;
}

/**
 * What the bridge tells the ops listener: ready once it read the imported agents (a database outage later
 * keeps the workers it runs serving); its drain hands every worker's tasks back (`ReleaseLease`).
 */
@Injectable()
class BridgeOps extends OpsRegistrations {
  constructor(private readonly bridge: Bridge) {
    super();
  }

  protected register(): (() => void)[] {
    return [
      lifecycle.addReadinessCheck('imported-agents', () =>
        this.bridge.readOnce
          ? Promise.resolve()
          : Promise.reject(new Error('the imported agents were not read yet')),
      ),
      lifecycle.addDrainStep('bridge-workers', () => this.bridge.shutdown()),
    ];
  }
}

/** Runs the bridge's loop with the application; at its close, the workers stop and the pool ends. */
@Injectable()
class BridgeRunner implements OnApplicationBootstrap, OnApplicationShutdown {
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly bridge: Bridge,
    private readonly audit: AuditWriter,
    @Inject(BRIDGE_PG_POOL) private readonly pool: Pool,
  ) {}

  onApplicationBootstrap(): void {
    this.running = this.bridge.run();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.bridge.shutdown();
    await this.running;
    await this.audit.close();
    await this.pool.end();
  }
}

/** Composition root of the bridge: the imported agents, each served by a worker calling its upstream. */
@Module({})
export class BridgeModule {
  static forRoot(config: BridgeConfig & { UPSTREAM_SECRETS_KEY: string }): DynamicModule {
    return {
      module: BridgeModule,
      imports: [OpsModule, ObservabilityModule],
      providers: [
        { provide: BRIDGE_CONFIG, useValue: config },
        {
          provide: BRIDGE_PG_POOL,
          useFactory: () =>
            createPool(config.POSTGRES_URL, {
              max: 2,
              applicationName: 'a2a-bridge:upstreams',
              warn: (message) => Logger.warn(message, 'BridgePool'),
            }),
        },
        {
          provide: AuditWriter,
          useFactory: (pool: Pool) => new AuditWriter(pool),
          inject: [BRIDGE_PG_POOL],
        },
        {
          provide: Bridge,
          useFactory: (pool: Pool, audit: AuditWriter) =>
            new Bridge(config, new UpstreamStore(pool), fieldLogger('Bridge'), (entry) =>
              audit.record(entry),
            ),
          inject: [BRIDGE_PG_POOL, AuditWriter],
        },
        BridgeOps,
        BridgeRunner,
      ],
    };
  }
}

import { AuditLog, AuditWriter } from '@lib/audit';
import {
  adminApiSchema,
  loadConfig,
  postgresSchema,
  pushDispatcherSchema,
  quotaSchema,
  type AdminApiConfig,
} from '@lib/config';
import { createPool, pingPostgres } from '@lib/event-store';
import { lifecycle, ObservabilityModule, OpsModule, OpsRegistrations } from '@lib/observability';
import { PushDeliveryStore } from '@lib/push';
import { AgentStore, CredentialStore, IssuerStore, quotaRedis, TenantStore } from '@lib/tenancy';
import { UpstreamStore } from '@lib/upstream';
import { WorkerSessionStore, WorkQueue } from '@lib/work-queue';
import {
  Inject,
  Logger,
  Module,
  type DynamicModule,
  type MiddlewareConsumer,
  type NestModule,
  type OnApplicationShutdown,
} from '@nestjs/common';
import type { Redis } from 'ioredis';
import type { Pool } from 'pg';
import { AdminAudit } from './admin-audit';
import { AdminAuditInterceptor } from './admin-audit.interceptor';
import { AdminAuthenticator } from './admin-auth';
import { AgentsController } from './agents.controller';
import { AuditController } from './audit.controller';
import {
  AdminKeysController,
  ApiKeysController,
  WorkerCredentialsController,
} from './credentials.controller';
import { IssuersController } from './issuers.controller';
import { JsonBodyMiddleware } from './json-body.middleware';
import { OpenApiController } from './openapi.controller';
import { PushDeliveriesController } from './push-deliveries.controller';
import { PushLanes } from './push-lanes';
import { TaskAdminStore } from './task-admin.store';
import { TaskChangeFeed } from './task-changes';
import { TasksController } from './tasks.controller';
import { TenantUsageReader } from './tenant-usage';
import { TenantsController } from './tenants.controller';
import { ADMIN_CONFIG, ADMIN_PG_POOL, ADMIN_REDIS } from './tokens';
import { UpstreamImporter } from './upstream-importer';
import { UpstreamSyncSchedule } from './upstream-sync';
import { UpstreamsController } from './upstreams.controller';
import { WhoAmIController } from './whoami.controller';
import { WorkersController } from './workers.controller';

export function adminApiConfigFromEnv(): AdminApiConfig {
  return loadConfig(
    postgresSchema
      .merge(adminApiSchema)
      .merge(quotaSchema)
      .merge(pushDispatcherSchema.pick({ PUSH_QUEUE_PREFIX: true })),
  );
}

/** The controllers of the admin API: every route under `/admin/v1`. */
export const ADMIN_CONTROLLERS = [
  TenantsController,
  AgentsController,
  UpstreamsController,
  ApiKeysController,
  WorkerCredentialsController,
  AdminKeysController,
  IssuersController,
  AuditController,
  PushDeliveriesController,
  WorkersController,
  TasksController,
  WhoAmIController,
];

class AdminConnectionsCloser implements OnApplicationShutdown {
  constructor(
    @Inject(ADMIN_PG_POOL) private readonly pool: Pool,
    @Inject(ADMIN_REDIS) private readonly redis: Redis,
    private readonly audit: AuditWriter,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await this.audit.close();
    await this.pool.end();
    this.redis.disconnect();
  }
}

/**
 * What the admin API tells the ops listener (docs/deploy.md): Postgres as a shared dependency (never a reason
 * to be unready: the console is served whatever the database does). On drain, the live task-change streams end (their clients reconnect to another replica).
 */
class AdminOps extends OpsRegistrations {
  constructor(
    @Inject(ADMIN_PG_POOL) private readonly pool: Pool,
    private readonly changes: TaskChangeFeed,
  ) {
    super();
  }

  protected register(): (() => void)[] {
    return [
      lifecycle.addDependency('postgres', 'admin-api', () => pingPostgres(this.pool)),
      lifecycle.addDrainStep('admin-task-changes', () => {
        this.changes.endAll();
        return Promise.resolve();
      }),
    ];
  }
}

/**
 * Composition root of the admin API (`/admin/v1`, OpenAPI at `/admin/v1/openapi.json`): tenants, agents,
 * credentials, issuers, audit, webhook deliveries, connected workers, tasks and their live changes. Runs as its own deployable (main.ts) and inside the
 * standalone process.
 */
@Module({})
export class AdminApiModule implements NestModule {
  static forRoot(config: AdminApiConfig): DynamicModule {
    return {
      module: AdminApiModule,
      imports: [OpsModule, ObservabilityModule],
      controllers: [...ADMIN_CONTROLLERS, OpenApiController],
      providers: [
        { provide: ADMIN_CONFIG, useValue: config },
        {
          provide: ADMIN_PG_POOL,
          useFactory: () =>
            createPool(config.POSTGRES_URL, {
              max: Math.min(4, config.POSTGRES_POOL_SIZE),
              applicationName: 'a2a-admin:pool',
              warn: (message) => Logger.warn(message, 'AdminPool'),
            }),
        },
        {
          provide: ADMIN_REDIS,
          useFactory: () => quotaRedis(config.REDIS_URL, 'a2a-admin:redis'),
        },
        AdminConnectionsCloser,
        AdminOps,
        {
          provide: TenantStore,
          useFactory: (pool: Pool) => new TenantStore(pool),
          inject: [ADMIN_PG_POOL],
        },
        {
          provide: AgentStore,
          useFactory: (pool: Pool) => new AgentStore(pool),
          inject: [ADMIN_PG_POOL],
        },
        {
          provide: CredentialStore,
          useFactory: (pool: Pool) => new CredentialStore(pool),
          inject: [ADMIN_PG_POOL],
        },
        {
          provide: IssuerStore,
          useFactory: (pool: Pool) =>
            new IssuerStore(pool, { allowInsecureLoopback: config.OIDC_ALLOW_INSECURE_LOOPBACK }),
          inject: [ADMIN_PG_POOL],
        },
        {
          provide: AuditWriter,
          useFactory: (pool: Pool) => new AuditWriter(pool),
          inject: [ADMIN_PG_POOL],
        },
        {
          provide: AuditLog,
          useFactory: (pool: Pool) => new AuditLog(pool),
          inject: [ADMIN_PG_POOL],
        },
        {
          provide: PushDeliveryStore,
          useFactory: (pool: Pool) => new PushDeliveryStore(pool),
          inject: [ADMIN_PG_POOL],
        },
        {
          provide: UpstreamImporter,
          useFactory: (pool: Pool, agents: AgentStore, credentials: CredentialStore) =>
            new UpstreamImporter(config, agents, credentials, new UpstreamStore(pool)),
          inject: [ADMIN_PG_POOL, AgentStore, CredentialStore],
        },
        UpstreamSyncSchedule,
        PushLanes,
        TaskAdminStore,
        TaskChangeFeed,
        {
          provide: WorkQueue,
          useFactory: (pool: Pool) => new WorkQueue(pool),
          inject: [ADMIN_PG_POOL],
        },
        {
          provide: WorkerSessionStore,
          useFactory: (pool: Pool) => new WorkerSessionStore(pool),
          inject: [ADMIN_PG_POOL],
        },
        TenantUsageReader,
        AdminAudit,
        AdminAuditInterceptor,
        AdminAuthenticator,
      ],
    };
  }

  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(JsonBodyMiddleware).forRoutes(...ADMIN_CONTROLLERS);
  }
}

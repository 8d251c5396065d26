import {
  ALL_PLATFORM_FEATURES,
  ingressSchema,
  loadConfig,
  oidcSchema,
  postgresSchema,
  quotaSchema,
  type PlatformFeatures,
} from '@lib/config';
import { createPool } from '@lib/event-store';
import { closedLast, ObservabilityModule, OpsModule } from '@lib/observability';
import { ConfigChanges } from '@lib/tenancy';
import {
  Logger,
  Module,
  type DynamicModule,
  type MiddlewareConsumer,
  type NestModule,
  type Provider,
} from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { A2aAudit } from './auth/a2a-audit';
import { ApiKeyAuthenticator } from './auth/api-key.authenticator';
import { BearerAuthenticator } from './auth/bearer.authenticator';
import { TenantQuotas } from './auth/tenant-quotas';
import { AgentCardController } from './cards/agent-card.controller';
import { AgentCardKeys } from './cards/agent-card.keys';
import { PublicOrigins } from './cards/agent-cards';
import { AgentRegistry } from './cards/agent-registry';
import { SignedAgentCards } from './cards/signed-agent-cards';
import { AgentDirectoryController } from './directory/agent-directory.controller';
import { A2aGateway } from './gateway/a2a-gateway';
import { A2aGrpcServer } from './grpc/a2a-grpc.server';
import { FrameworkErrorsFilter } from './http/framework-errors.filter';
import { InboundCallMiddleware } from './http/inbound-call.middleware';
import { IngressOps } from './ingress-ops';
import { JsonRpcRoute } from './jsonrpc/json-rpc.route';
import { A2aOperations } from './operations/a2a-operations';
import { TaskServiceOperations } from './operations/task-service.operations';
import { RestController } from './rest/rest.controller';
import { TaskEventFeed } from './streaming/task-event-feed';
import {
  INGRESS_CONFIG,
  INGRESS_FEATURES,
  INGRESS_PG_POOL,
  type IngressModuleConfig,
} from './tokens';

export function ingressConfigFromEnv(): IngressModuleConfig {
  return loadConfig(postgresSchema.merge(ingressSchema).merge(quotaSchema).merge(oidcSchema));
}

/** Composition root of the ingress: A2A bindings and agent cards over the operations port. */
@Module({})
export class IngressModule implements NestModule {
  /**
   * `operations`: how the bindings reach the task-service; by default over gRPC (TASK_SERVICE_URLS). A process
   * that also hosts the task-service passes an in-process provider, with `imports` that make it resolvable,
   * and may add `local` providers (`LocalCommits`: the changes it commits, for the stream feed). `features`:
   * what the platform around it offers (the standalone process without Kafka or Redis offers less).
   */
  static forRoot(
    config: IngressModuleConfig,
    operations: Provider = { provide: A2aOperations, useClass: TaskServiceOperations },
    imports: DynamicModule[] = [],
    local: Provider[] = [],
    features: PlatformFeatures = ALL_PLATFORM_FEATURES,
  ): DynamicModule {
    return {
      module: IngressModule,
      imports: [OpsModule, ObservabilityModule, ...imports],
      controllers: [AgentCardController, AgentDirectoryController, RestController],
      providers: [
        { provide: INGRESS_CONFIG, useValue: config },
        { provide: INGRESS_FEATURES, useValue: features },
        { provide: APP_FILTER, useClass: FrameworkErrorsFilter },
        ...closedLast(INGRESS_PG_POOL, () =>
          createPool(config.POSTGRES_URL, {
            max: config.POSTGRES_POOL_SIZE,
            applicationName: 'a2a-ingress:pool',
            warn: (message) => Logger.warn(message, 'IngressPool'),
          }),
        ),
        operations,
        {
          provide: ConfigChanges,
          useFactory: () =>
            new ConfigChanges(config.POSTGRES_URL, 'a2a-ingress:config', (message) =>
              Logger.warn(message, 'IngressConfigChanges'),
            ),
        },
        ApiKeyAuthenticator,
        BearerAuthenticator,
        A2aAudit,
        TenantQuotas,
        AgentRegistry,
        PublicOrigins,
        AgentCardKeys,
        SignedAgentCards,
        A2aGateway,
        JsonRpcRoute,
        TaskEventFeed,
        A2aGrpcServer,
        IngressOps,
        ...local,
      ],
      // The key that signs cards also signs webhooks (the push dispatcher in the standalone process).
      exports: [AgentCardKeys],
    };
  }

  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(InboundCallMiddleware).forRoutes(RestController);
  }
}

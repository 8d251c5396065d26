import {
  ALL_PLATFORM_FEATURES,
  loadConfig,
  postgresSchema,
  taskServiceSchema,
  type PlatformFeatures,
  type TaskServiceConfig,
} from '@lib/config';
import { createPool } from '@lib/event-store';
import { closedLast, ObservabilityModule, OpsModule } from '@lib/observability';
import { ConfigChanges } from '@lib/tenancy';
import { WorkerSessionStore, WorkQueue } from '@lib/work-queue';
import { Logger, Module, type DynamicModule } from '@nestjs/common';
import type { Pool } from 'pg';
import { AgentDirectory } from './agent-directory';
import { Clock, IdGenerator, RandomIds, SystemClock } from './clock';
import { CancelTaskHandler } from './commands/cancel-task.handler';
import { PushConfigHandler } from './commands/push-config.handler';
import { SendMessageHandler } from './commands/send-message.handler';
import { Dispatcher } from './dispatch/dispatcher';
import { LeaseSweeper } from './dispatch/lease-sweeper';
import { WorkPoll } from './dispatch/work-poll';
import { WorkerRegistry } from './dispatch/worker-registry';
import { GrpcServers } from './grpc/grpc-servers';
import { WorkerServiceBinding } from './grpc/worker-service.binding';
import { NoticeBus } from './notice-bus';
import { GetTaskQuery } from './queries/get-task.query';
import { ListTasksQuery } from './queries/list-tasks.query';
import { PushConfigs } from './queries/push-configs';
import { TaskViews } from './queries/task-views';
import { ServiceAudit } from './service-audit';
import { TaskCommands } from './task-commands';
import { TaskServiceOps } from './task-service-ops';
import { PG_POOL, TASK_SERVICE_CONFIG, TASK_SERVICE_FEATURES } from './tokens';
import { TaskDecisions } from './write/task-decisions';
import { PostgresTaskStore, TaskStore } from './write/task-store';
import { TaskWatch } from './write/task-watch';
import { AuditSink, TaskWriter } from './write/task-writer';

export function taskServiceConfigFromEnv(): TaskServiceConfig {
  return loadConfig(postgresSchema.merge(taskServiceSchema));
}

/** Composition root of the task-service: the write side, workers' gRPC API, dispatch and leases. */
@Module({})
export class TaskServiceModule {
  /** `features`: what the platform around it offers (the standalone process without Kafka or Redis offers less). */
  static forRoot(
    config: TaskServiceConfig,
    features: PlatformFeatures = ALL_PLATFORM_FEATURES,
  ): DynamicModule {
    return {
      module: TaskServiceModule,
      imports: [OpsModule, ObservabilityModule],
      providers: [
        { provide: TASK_SERVICE_CONFIG, useValue: config },
        { provide: TASK_SERVICE_FEATURES, useValue: features },
        ...closedLast(PG_POOL, () =>
          createPool(config.POSTGRES_URL, {
            max: config.POSTGRES_POOL_SIZE,
            applicationName: 'a2a-task-service:pool',
            warn: (message) => Logger.warn(message, 'TaskServicePool'),
          }),
        ),
        { provide: Clock, useClass: SystemClock },
        { provide: IdGenerator, useClass: RandomIds },
        NoticeBus,
        { provide: TaskStore, useClass: PostgresTaskStore },
        TaskWriter,
        TaskWatch,
        { provide: WorkQueue, useFactory: (pool: Pool) => new WorkQueue(pool), inject: [PG_POOL] },
        TaskDecisions,
        TaskViews,
        {
          provide: ConfigChanges,
          useFactory: () =>
            new ConfigChanges(config.POSTGRES_URL, 'a2a-task-service:config', (message) =>
              Logger.warn(message, 'TaskServiceConfigChanges'),
            ),
        },
        AgentDirectory,
        ServiceAudit,
        { provide: AuditSink, useExisting: ServiceAudit },
        SendMessageHandler,
        CancelTaskHandler,
        PushConfigHandler,
        PushConfigs,
        GetTaskQuery,
        ListTasksQuery,
        Dispatcher,
        LeaseSweeper,
        WorkPoll,
        {
          provide: WorkerSessionStore,
          useFactory: (pool: Pool) => new WorkerSessionStore(pool),
          inject: [PG_POOL],
        },
        WorkerRegistry,
        WorkerServiceBinding,
        TaskCommands,
        GrpcServers,
        TaskServiceOps,
      ],
      exports: [GrpcServers, PG_POOL, TaskCommands, TaskWriter],
    };
  }
}

import type { PlatformConfig } from '@lib/config';
import { Module, type DynamicModule, type Provider } from '@nestjs/common';
// The standalone process is the one place that composes other apps' modules (ARCHITECTURE.md).
import { IngressModule } from '../../ingress/src/ingress.module';
import { A2aOperations } from '../../ingress/src/operations/a2a-operations';
import { RelayModule } from '../../relay/src/relay.module';
import { TaskCommandController } from '../../task-service/src/grpc/task-command.controller';
import { TaskServiceModule } from '../../task-service/src/task-service.module';
import { InProcessOperations } from './in-process-operations';

/** Every deployable in one process: the local default (`npm start`). */
@Module({})
export class StandaloneModule {
  static forRoot(config: PlatformConfig): DynamicModule {
    const taskService = TaskServiceModule.forRoot(config);
    // The ingress calls the task-service of this process directly (ADR 0007).
    const operations: Provider = {
      provide: A2aOperations,
      useFactory: (commands: TaskCommandController) => new InProcessOperations(commands),
      inject: [TaskCommandController],
    };
    return {
      module: StandaloneModule,
      imports: [
        taskService,
        IngressModule.forRoot(config, operations, [taskService]),
        ...(config.START_RELAY ? [RelayModule.forRoot(config)] : []),
      ],
    };
  }
}

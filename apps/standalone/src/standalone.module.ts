import type { PlatformConfig } from '@lib/config';
import { Module, type DynamicModule } from '@nestjs/common';
// The standalone process is the one place that composes other apps' modules (ARCHITECTURE.md).
import { IngressModule } from '../../ingress/src/ingress.module';
import { RelayModule } from '../../relay/src/relay.module';
import { TaskServiceModule } from '../../task-service/src/task-service.module';

/** Every deployable in one process: the local default (`npm start`). */
@Module({})
export class StandaloneModule {
  static forRoot(config: PlatformConfig): DynamicModule {
    return {
      module: StandaloneModule,
      imports: [
        TaskServiceModule.forRoot(config),
        IngressModule.forRoot(config),
        ...(config.START_RELAY ? [RelayModule.forRoot(config)] : []),
      ],
    };
  }
}

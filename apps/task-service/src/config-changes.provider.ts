import type { TaskServiceConfig } from '@lib/config';
import { ConfigChanges } from '@lib/tenancy';
import {
  Inject,
  Injectable,
  Logger,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import { TASK_SERVICE_CONFIG } from './tokens';

/** The task-service's ear for configuration changes: agent settings and worker credentials are re-read. */
@Injectable()
export class TaskServiceConfigChanges
  extends ConfigChanges
  implements OnModuleInit, OnModuleDestroy
{
  constructor(@Inject(TASK_SERVICE_CONFIG) config: TaskServiceConfig) {
    super(config.POSTGRES_URL, 'a2a-task-service:config', (message) =>
      Logger.warn(message, TaskServiceConfigChanges.name),
    );
  }

  onModuleInit(): Promise<void> {
    return this.start();
  }

  onModuleDestroy(): Promise<void> {
    return this.stop();
  }
}

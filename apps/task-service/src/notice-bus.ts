import type { TaskServiceConfig } from '@lib/config';
import { NoticeListener } from '@lib/event-store';
import {
  Inject,
  Injectable,
  Logger,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import { TASK_SERVICE_CONFIG } from './tokens';

/** This replica's LISTEN connection for cross-replica notices, bound to the Nest lifecycle. */
@Injectable()
export class NoticeBus extends NoticeListener implements OnModuleInit, OnModuleDestroy {
  constructor(@Inject(TASK_SERVICE_CONFIG) config: TaskServiceConfig) {
    const logger = new Logger(NoticeBus.name);
    super(config.POSTGRES_URL, {
      applicationName: 'a2a-task-service:listen',
      warn: (message) => logger.warn(message),
      info: (message) => logger.log(message),
    });
  }

  async onModuleInit(): Promise<void> {
    await this.start();
  }

  async onModuleDestroy(): Promise<void> {
    await this.stop();
  }
}

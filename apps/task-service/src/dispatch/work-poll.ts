import type { TaskServiceConfig } from '@lib/config';
import { WorkQueue, type WorkScan } from '@lib/work-queue';
import {
  Inject,
  Injectable,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { TASK_SERVICE_CONFIG } from '../tokens';
import { Dispatcher } from './dispatcher';
import { LeaseSweeper } from './lease-sweeper';

/**
 * The replica's one poll of the work queue, every `SWEEP_INTERVAL_MS`: a single statement
 * ({@link WorkQueue.scan}) asks which agents hosted here have queued work, the dispatcher's fallback for lost
 * notices and failed claims, and whether a lease or a cancel deadline is overdue, the lease sweeper's cue.
 * An idle replica wakes once per interval and sends one statement (ADR 0018).
 */
@Injectable()
export class WorkPoll implements OnApplicationBootstrap, OnModuleDestroy {
  private timer: NodeJS.Timeout | null = null;
  private polling: Promise<void> | null = null;

  constructor(
    private readonly work: WorkQueue,
    private readonly dispatcher: Dispatcher,
    private readonly sweeper: LeaseSweeper,
    @Inject(TASK_SERVICE_CONFIG) private readonly config: TaskServiceConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => {
      this.polling ??= this.poll().finally(() => {
        this.polling = null;
      });
    }, this.config.SWEEP_INTERVAL_MS);
    this.timer.unref();
  }

  async onModuleDestroy(): Promise<void> {
    if (this.timer) {
      clearInterval(this.timer);
    }
    await this.polling;
  }

  private async poll(): Promise<void> {
    let scan: WorkScan;
    try {
      scan = await this.work.scan(this.dispatcher.hostedAgents());
    } catch (error) {
      this.dispatcher.pollFailed(error);
      this.sweeper.sweepFailed(error);
      return;
    }
    this.dispatcher.queuedWorkFound(scan.queued);
    this.sweeper.polled(scan.overdue);
  }
}

import type { AdminApiConfig } from '@lib/config';
import {
  LANE_JOB_OPTIONS,
  LANE_QUEUE,
  redriveJobId,
  type DeliveryRecord,
  type Lane,
} from '@lib/push';
import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import type * as BullMq from 'bullmq';
import type { Redis } from 'ioredis';
import { ADMIN_CONFIG, ADMIN_REDIS } from './tokens';

/** How long a redrive waits for Redis to take the lane job before it answers anyway. */
const WAKE_TIMEOUT_MS = 2_000;

/**
 * Wakes the push dispatcher for a redriven delivery: a job for its lane on the dispatcher's BullMQ queue
 * (REDIS_URL, PUSH_QUEUE_PREFIX), which whichever replica takes it runs at once. Redis only schedules: while it
 * cannot take the job, the delivery stays pending in Postgres and the dispatcher's reconciler schedules it
 * (PUSH_RECONCILE_INTERVAL_MS).
 */
@Injectable()
export class PushLanes implements OnModuleDestroy {
  private readonly logger = new Logger(PushLanes.name);
  /** Made by the first redrive: BullMQ's 218 modules load in an admin API that redrives (ADR 0017). */
  private queue: BullMq.Queue<Lane> | null = null;

  constructor(
    @Inject(ADMIN_CONFIG) private readonly config: AdminApiConfig,
    @Inject(ADMIN_REDIS) private readonly redis: Redis,
  ) {}

  private laneQueue(): BullMq.Queue<Lane> {
    if (!this.queue) {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use, see above
      const { Queue } = require('bullmq') as typeof BullMq;
      this.queue = new Queue<Lane>(LANE_QUEUE, {
        connection: this.redis,
        prefix: this.config.PUSH_QUEUE_PREFIX,
        defaultJobOptions: LANE_JOB_OPTIONS,
      });
      this.queue.on('error', () => undefined);
    }
    return this.queue;
  }

  /**
   * Schedules the lane of a delivery just made pending again, waiting at most {@link WAKE_TIMEOUT_MS} (a queue
   * whose connection has not been ready since the start waits for Redis); never throws, a failure is logged.
   */
  async wake(delivery: DeliveryRecord): Promise<void> {
    const lane: Lane = {
      tenantId: delivery.tenantId,
      taskId: delivery.taskId,
      configId: delivery.configId,
    };
    const added = this.laneQueue().add('lane', lane, {
      jobId: redriveJobId(delivery.deliveryId, Date.now()),
    });
    // A job added after the answer is still right: the lane runs once more.
    added.catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no answer within ${WAKE_TIMEOUT_MS} ms`)),
        WAKE_TIMEOUT_MS,
      );
    });
    try {
      await Promise.race([added, late]);
    } catch (error) {
      this.logger.warn(
        `delivery ${delivery.deliveryId} is pending again, but its lane job was not scheduled (Redis: ` +
          `${String(error)}); the push dispatcher's reconciler will schedule it`,
      );
    } finally {
      clearTimeout(timer);
    }
  }

  async onModuleDestroy(): Promise<void> {
    await this.queue?.close().catch(() => undefined);
  }
}

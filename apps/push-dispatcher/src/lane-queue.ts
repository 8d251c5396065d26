import type { PushDispatcherConfig } from '@lib/config';
import { attemptJobId, LANE_JOB_OPTIONS, LANE_QUEUE, type Lane } from '@lib/push';
import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type { OpenHead } from './delivery-store';
import { PUSH_CONFIG } from './tokens';

// The queue's contract is shared with the admin API's redrive (`@lib/push` lane-jobs).
export { attemptJobId, LANE_QUEUE };

/** A request to drive a lane: deliver its open deliveries, oldest first, from `at` on. */
export interface LaneRun {
  lane: Lane;
  /**
   * The job's id: `a-<delivery>-<attempts>` for "the next attempt of this delivery", so that whoever
   * schedules it (the feed consumer, a retry, the reconciler) schedules it once. BullMQ ignores an id it holds.
   */
  jobId: string;
  at?: Date;
}

/**
 * The run that picks a lane up again when its head is due: after its backoff (the attempt's own job), or
 * after a claim whose run may have died (`c-…`: a claim is not an attempt to schedule, and its end must not
 * take the id of the retry the claiming run may schedule earlier).
 */
export function headRun(head: OpenHead): LaneRun {
  return {
    lane: head.lane,
    jobId:
      head.state === 'pending'
        ? attemptJobId(head.deliveryId, head.attempts)
        : `c-${head.deliveryId}-${head.attempts}`,
    at: head.due,
  };
}

/**
 * A Redis connection of the dispatcher that survives its server: errors are left to the commands that hit
 * them (no unhandled `error` event), and reconnects back off up to two seconds. A worker's commands wait
 * for the reconnect (BullMQ requires it); a producer's fail at once (`producer`), so that its caller goes on.
 */
export function redisConnection(url: string, role: string, producer = false): Redis {
  const redis = new Redis(url, {
    connectionName: `a2a-push-dispatcher:${role}`,
    retryStrategy: (times) => Math.min(2_000, 100 * 2 ** Math.min(times, 5)),
    ...(producer
      ? { maxRetriesPerRequest: 1, enableOfflineQueue: false }
      : { maxRetriesPerRequest: null }),
  });
  redis.on('error', () => undefined);
  return redis;
}

/**
 * Schedules lane runs on BullMQ. Redis is not the truth (the rows in `ops.push_deliveries` are): a run that
 * cannot be scheduled is left to the reconciler, which schedules every open lane again from Postgres.
 */
@Injectable()
export class LaneQueue implements OnModuleDestroy {
  private readonly logger = new Logger(LaneQueue.name);
  private readonly connection: Redis;
  private readonly queue: Queue<Lane>;
  /** Failures to schedule since the last success, reported once per outage. */
  private failing = 0;

  constructor(@Inject(PUSH_CONFIG) config: PushDispatcherConfig) {
    // A producer does not wait for a Redis that is away: the caller goes on and the reconciler catches up.
    this.connection = redisConnection(config.REDIS_URL, 'queue', true);
    this.queue = new Queue<Lane>(LANE_QUEUE, {
      connection: this.connection,
      prefix: config.PUSH_QUEUE_PREFIX,
      defaultJobOptions: LANE_JOB_OPTIONS,
    });
    this.queue.on('error', () => undefined);
  }

  /** Redis answers (for readiness): a PING on the queue's connection. */
  async ping(): Promise<void> {
    await this.connection.ping();
  }

  /** Schedules the runs; returns false (and logs once per outage) when Redis could not take them. */
  async schedule(runs: readonly LaneRun[]): Promise<boolean> {
    if (runs.length === 0) {
      return true;
    }
    const now = Date.now();
    try {
      await this.queue.addBulk(
        runs.map((run) => ({
          name: 'lane',
          data: run.lane,
          opts: {
            jobId: run.jobId,
            ...(run.at && run.at.getTime() > now ? { delay: run.at.getTime() - now } : {}),
          },
        })),
      );
      if (this.failing > 0) {
        this.logger.log(`Redis takes lane jobs again (${this.failing} scheduling failures)`);
        this.failing = 0;
      }
      return true;
    } catch (error) {
      if (this.failing++ === 0) {
        this.logger.warn(
          `cannot schedule lane jobs, Redis: ${String(error)}; the reconciler will schedule them`,
        );
      }
      return false;
    }
  }

  async onModuleDestroy(): Promise<void> {
    await this.queue.close().catch(() => undefined);
    this.connection.disconnect();
  }
}

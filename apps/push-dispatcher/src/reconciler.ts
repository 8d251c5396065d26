import type { PushDispatcherConfig } from '@lib/config';
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import type { Pool } from 'pg';
import { DeliveryStore } from './delivery-store';
import { headRun, LaneQueue } from './lane-queue';
import { PUSH_CONFIG, PUSH_PG_POOL } from './tokens';

/** Key of the advisory lock that lets one replica at a time reconcile. */
const RECONCILE_LOCK = 0x70757368; // "push"
/** Lane jobs added per call to Redis. */
const CHUNK = 1_000;

/**
 * Rebuilds Redis from Postgres: at start and every PUSH_RECONCILE_INTERVAL_MS, schedules the next attempt of
 * the head of every lane with an open delivery, due when its backoff or its claim ends. A job BullMQ still
 * holds has the same id and is not added twice; a job Redis lost (`FLUSHALL`, a restart without persistence)
 * comes back, and its claim keeps it from being sent twice. One replica at a time (advisory lock).
 */
@Injectable()
export class Reconciler implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(Reconciler.name);
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(
    @Inject(PUSH_CONFIG) private readonly config: PushDispatcherConfig,
    @Inject(PUSH_PG_POOL) private readonly pool: Pool,
    private readonly store: DeliveryStore,
    private readonly lanes: LaneQueue,
  ) {}

  onApplicationBootstrap(): void {
    const tick = (): void => {
      this.running = this.reconcile()
        .then(() => undefined)
        .catch((error: unknown) => this.logger.warn(`reconciling failed: ${String(error)}`))
        .finally(() => {
          this.running = null;
          this.timer = setTimeout(tick, this.config.PUSH_RECONCILE_INTERVAL_MS);
        });
    };
    tick();
  }

  /**
   * One pass, if no other replica is in one: the number of lanes scheduled, or null when another replica
   * holds the lock.
   */
  async reconcile(): Promise<number | null> {
    const client = await this.pool.connect();
    try {
      const locked = await client.query<{ locked: boolean }>(
        'SELECT pg_try_advisory_lock($1) AS locked',
        [RECONCILE_LOCK],
      );
      if (!locked.rows[0]?.locked) {
        return null;
      }
      try {
        const heads = await this.store.openHeads();
        for (let start = 0; start < heads.length; start += CHUNK) {
          await this.lanes.schedule(heads.slice(start, start + CHUNK).map(headRun));
        }
        return heads.length;
      } finally {
        await client.query('SELECT pg_advisory_unlock($1)', [RECONCILE_LOCK]);
      }
    } finally {
      client.release();
    }
  }

  async onModuleDestroy(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
    }
    await this.running;
    if (this.timer) {
      clearTimeout(this.timer);
    }
  }
}

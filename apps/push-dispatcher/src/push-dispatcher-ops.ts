import { pingPostgres } from '@lib/event-store';
import { lifecycle, metrics, OpsRegistrations } from '@lib/observability';
import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { DeliveryStore } from './delivery-store';
import { FeedConsumer } from './feed-consumer';
import { LaneQueue } from './lane-queue';
import { PUSH_PG_POOL } from './tokens';

/**
 * What the push dispatcher tells the ops listener (docs/deploy.md): Postgres, Redis, and Kafka (its feed
 * consumer is in its group) as shared dependencies, which never make it unready; at each scrape, the
 * deliveries still open. Attempts and dead
 * letters are counted where they happen (LaneRunner). Its drain is its close: the consumer leaves the group
 * and lane jobs in flight finish.
 */
@Injectable()
export class PushDispatcherOps extends OpsRegistrations {
  constructor(
    @Inject(PUSH_PG_POOL) private readonly pool: Pool,
    private readonly store: DeliveryStore,
    private readonly feed: FeedConsumer,
    private readonly lanes: LaneQueue,
  ) {
    super();
  }

  protected register(): (() => void)[] {
    return [
      lifecycle.addDependency('postgres', 'push-dispatcher', () => pingPostgres(this.pool)),
      lifecycle.addDependency('redis', 'push-dispatcher', () => this.lanes.ping()),
      lifecycle.addDependency('kafka', 'push-dispatcher', () =>
        this.feed.joined
          ? Promise.resolve()
          : Promise.reject(new Error('the feed consumer is not in its group')),
      ),
      metrics.addSource(async () => metrics.pushBacklog.set(await this.store.backlog())),
    ];
  }
}

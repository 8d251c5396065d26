import { pingPostgres } from '@lib/event-store';
import { lifecycle, OpsRegistrations } from '@lib/observability';
import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { RelayService } from './relay.service';
import { RELAY_PG_POOL } from './tokens';

/**
 * What the relay tells the ops listener (docs/deploy.md): Postgres, and Kafka as its last round found it
 * (a round that failed is retried), as shared dependencies, which never make it unready. Its lag and
 * throughput are set where it publishes; its drain is its close (the batch in flight is published and
 * checkpointed first).
 */
@Injectable()
export class RelayOps extends OpsRegistrations {
  constructor(
    @Inject(RELAY_PG_POOL) private readonly pool: Pool,
    private readonly relay: RelayService,
  ) {
    super();
  }

  protected register(): (() => void)[] {
    return [
      lifecycle.addDependency('postgres', 'relay', () => pingPostgres(this.pool)),
      lifecycle.addDependency('kafka', 'relay', () =>
        this.relay.failure === null
          ? Promise.resolve()
          : Promise.reject(new Error(`the relay is retrying: ${this.relay.failure}`)),
      ),
    ];
  }
}

import { pingPostgres } from '@lib/event-store';
import { lifecycle, metrics, OpsRegistrations } from '@lib/observability';
import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { A2aGrpcServer } from './grpc/a2a-grpc.server';
import { TaskEventFeed } from './streaming/task-event-feed';
import { INGRESS_PG_POOL } from './tokens';

/**
 * What the ingress tells the ops listener (docs/deploy.md): Postgres as a shared dependency (its outage is
 * answered with 503 + Retry-After, never by going unready); on drain, every
 * stream ends (clients resume on another replica by generation) and the A2A gRPC server takes no new call
 * while its unary calls finish; the open streams are counted at each scrape. The HTTP server's own drain is
 * registered where it is created (main.ts, the standalone process).
 */
@Injectable()
export class IngressOps extends OpsRegistrations {
  constructor(
    @Inject(INGRESS_PG_POOL) private readonly pool: Pool,
    private readonly feed: TaskEventFeed,
    private readonly grpc: A2aGrpcServer,
  ) {
    super();
  }

  protected register(): (() => void)[] {
    return [
      lifecycle.addDependency('postgres', 'ingress', () => pingPostgres(this.pool)),
      lifecycle.addDrainStep('ingress-streams', () => {
        this.feed.closeAll();
        return Promise.resolve();
      }),
      lifecycle.addDrainStep('ingress-grpc', (deadline) => this.grpc.stop(deadline)),
      metrics.addSource(() => {
        metrics.streamSubscribers.set(this.feed.size);
        return Promise.resolve();
      }),
    ];
  }
}

import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { PG_POOL } from '../tokens';
import type { WorkerSession } from './worker-session';

/** How long a replica's rows stay fresh without a refresh, in refresh intervals. */
export const STALE_AFTER_REFRESHES = 3;

/**
 * `ops.worker_sessions`: the worker sessions of each replica, as the admin API shows them. A replica
 * replaces all of its rows in one statement ({@link replace}).
 */
@Injectable()
export class WorkerSessionStore {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  /**
   * Makes `replicaId`'s rows exactly `sessions` (inserted or refreshed, fresh for `staleAfterMs`; its other
   * rows deleted), and deletes the rows of any replica that have been stale for more than `retainStaleMs`.
   * One statement.
   */
  async replace(
    replicaId: string,
    sessions: readonly WorkerSession[],
    staleAfterMs: number,
    retainStaleMs: number,
  ): Promise<void> {
    await this.pool.query({
      name: 'worker-sessions.replace',
      text: `WITH live AS (
               SELECT * FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::int[],
                                    $8::timestamptz[], $9::timestamptz[])
                 AS u(session_id, tenant_id, agent_id, identity, capacity, in_flight, connected_at,
                      last_heartbeat_at)
             ), written AS (
               INSERT INTO ops.worker_sessions AS s (session_id, tenant_id, agent_id, replica_id, identity,
                      capacity, in_flight, connected_at, last_heartbeat_at, last_seen_at, stale_after)
               SELECT session_id, tenant_id, agent_id, $1, identity, capacity, in_flight, connected_at,
                      last_heartbeat_at, now(), now() + $10 * interval '1 millisecond'
                 FROM live
               ON CONFLICT (session_id) DO UPDATE SET
                 replica_id = EXCLUDED.replica_id, in_flight = EXCLUDED.in_flight,
                 last_heartbeat_at = EXCLUDED.last_heartbeat_at, last_seen_at = EXCLUDED.last_seen_at,
                 stale_after = EXCLUDED.stale_after
             ), closed AS (
               DELETE FROM ops.worker_sessions
                WHERE replica_id = $1 AND session_id <> ALL ($2::text[])
             )
             DELETE FROM ops.worker_sessions
              WHERE stale_after < now() - $11 * interval '1 millisecond' AND replica_id <> $1`,
      values: [
        replicaId,
        sessions.map((s) => s.workerId),
        sessions.map((s) => s.agent.tenantId),
        sessions.map((s) => s.agent.agentId),
        sessions.map((s) => s.identity.slice(0, 256)),
        sessions.map((s) => s.capacity),
        sessions.map((s) => s.inflight.size),
        sessions.map((s) => s.connectedAt),
        sessions.map((s) => s.lastHeartbeatAt),
        staleAfterMs,
        retainStaleMs,
      ],
    });
  }
}

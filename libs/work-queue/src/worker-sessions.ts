import type { AgentRef, TenantId } from '@lib/ids';
import type { Pool } from 'pg';
import type { HeldLease } from './work-queue';

/** How long a replica's rows stay fresh without a refresh, in refresh intervals. */
export const STALE_AFTER_REFRESHES = 3;

/** What a replica writes of one of its worker sessions. */
export interface LiveWorkerSession {
  readonly workerId: string;
  readonly agent: AgentRef;
  /** What the worker calls itself. */
  readonly identity: string;
  readonly capacity: number;
  /** The leases the replica counts against the session's capacity. */
  readonly inflight: ReadonlyMap<string, number>;
  readonly connectedAt: Date;
  readonly lastHeartbeatAt: Date | null;
}

/** A worker session connected to a task-service replica, as that replica last wrote it. */
export interface WorkerSessionRow {
  sessionId: string;
  tenantId: TenantId;
  agentId: string;
  /** What the worker calls itself. */
  identity: string;
  /** The task-service replica (REPLICA_ID) the session is connected to. */
  replicaId: string;
  capacity: number;
  /** Leases the replica counts against the session's capacity. */
  inFlight: number;
  connectedAt: string;
  lastHeartbeatAt: string | null;
  /** When the replica last wrote the session. */
  lastSeenAt: string;
  /** The replica has missed three refreshes: it is probably gone, and so is the session. */
  stale: boolean;
}

/** A worker session and the leases it holds. */
export interface ConnectedWorker extends WorkerSessionRow {
  leases: HeldLease[];
}

/**
 * `ops.worker_sessions`: the worker sessions of each replica, written by the task-service's worker registry
 * and shown to operators by the admin API; nothing else reads it. A replica replaces all of its rows in one
 * statement ({@link replace}).
 */
export class WorkerSessionStore {
  constructor(private readonly pool: Pool) {}

  /**
   * Makes `replicaId`'s rows exactly `sessions` (inserted or refreshed, fresh for `staleAfterMs`; its other
   * rows deleted), and deletes the rows of any replica that have been stale for more than `retainStaleMs`.
   * One statement.
   */
  async replace(
    replicaId: string,
    sessions: readonly LiveWorkerSession[],
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

  /**
   * The tenant's worker sessions (of one agent, when given), by agent and connection time (their leases are
   * the work queue's: `WorkQueue.leasesBySession`).
   */
  async list(tenantId: TenantId, agentId?: string): Promise<WorkerSessionRow[]> {
    const result = await this.pool.query<{
      session_id: string;
      agent_id: string;
      identity: string;
      replica_id: string;
      capacity: number;
      in_flight: number;
      connected_at: Date;
      last_heartbeat_at: Date | null;
      last_seen_at: Date;
      stale: boolean;
    }>({
      name: 'worker-sessions.list',
      text: `SELECT session_id, agent_id, identity, replica_id, capacity, in_flight, connected_at,
                    last_heartbeat_at, last_seen_at, stale_after < now() AS stale
               FROM ops.worker_sessions
              WHERE tenant_id = $1 AND ($2::text IS NULL OR agent_id = $2)
              ORDER BY agent_id, connected_at, session_id`,
      values: [tenantId, agentId ?? null],
    });
    return result.rows.map((row) => ({
      sessionId: row.session_id,
      tenantId,
      agentId: row.agent_id,
      identity: row.identity,
      replicaId: row.replica_id,
      capacity: row.capacity,
      inFlight: row.in_flight,
      connectedAt: row.connected_at.toISOString(),
      lastHeartbeatAt: row.last_heartbeat_at?.toISOString() ?? null,
      lastSeenAt: row.last_seen_at.toISOString(),
      stale: row.stale,
    }));
  }
}

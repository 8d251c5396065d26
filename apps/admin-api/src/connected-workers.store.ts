import type { TenantId } from '@lib/tenancy';
import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { ADMIN_PG_POOL } from './tokens';

/** A lease a worker session holds (`ops.task_work`). */
export interface HeldLease {
  taskId: string;
  leaseEpoch: number;
  expiresAt: string;
}

/** A worker session connected to a task-service replica, as that replica last wrote it. */
export interface ConnectedWorker {
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
  leases: HeldLease[];
  connectedAt: string;
  lastHeartbeatAt: string | null;
  /** When the replica last wrote the session. */
  lastSeenAt: string;
  /** The replica has missed three refreshes: it is probably gone, and so is the session. */
  stale: boolean;
}

/** The admin API's read of `ops.worker_sessions` and the leases of `ops.task_work`. */
@Injectable()
export class ConnectedWorkersStore {
  constructor(@Inject(ADMIN_PG_POOL) private readonly pool: Pool) {}

  /** The tenant's worker sessions (of one agent, when given), by agent and connection time. */
  async list(tenantId: TenantId, agentId?: string): Promise<ConnectedWorker[]> {
    const result = await this.pool.query<{
      session_id: string;
      agent_id: string;
      identity: string;
      replica_id: string;
      capacity: number;
      in_flight: number;
      leases: { taskId: string; leaseEpoch: string | number; expiresAt: string }[];
      connected_at: Date;
      last_heartbeat_at: Date | null;
      last_seen_at: Date;
      stale: boolean;
    }>({
      name: 'admin-workers.list',
      text: `WITH leases AS (
               SELECT worker_id,
                      json_agg(json_build_object('taskId', task_id, 'leaseEpoch', lease_epoch,
                                                 'expiresAt', lease_expires_at)
                               ORDER BY lease_expires_at) AS leases
                 FROM ops.task_work
                WHERE tenant_id = $1 AND status = 'leased' AND ($2::text IS NULL OR agent_id = $2)
                GROUP BY worker_id)
             SELECT s.session_id, s.agent_id, s.identity, s.replica_id, s.capacity, s.in_flight,
                    s.connected_at, s.last_heartbeat_at, s.last_seen_at, s.stale_after < now() AS stale,
                    coalesce(l.leases, '[]') AS leases
               FROM ops.worker_sessions s
               LEFT JOIN leases l ON l.worker_id = s.session_id
              WHERE s.tenant_id = $1 AND ($2::text IS NULL OR s.agent_id = $2)
              ORDER BY s.agent_id, s.connected_at, s.session_id`,
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
      leases: row.leases.map((lease) => ({
        taskId: lease.taskId,
        leaseEpoch: Number(lease.leaseEpoch),
        expiresAt: new Date(lease.expiresAt).toISOString(),
      })),
      connectedAt: row.connected_at.toISOString(),
      lastHeartbeatAt: row.last_heartbeat_at ? row.last_heartbeat_at.toISOString() : null,
      lastSeenAt: row.last_seen_at.toISOString(),
      stale: row.stale,
    }));
  }
}

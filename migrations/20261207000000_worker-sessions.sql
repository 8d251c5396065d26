-- Up Migration

-- The worker sessions connected to each task-service replica, for the admin API's connected workers
-- (docs/admin.md "Workers"). Sessions live in the memory of the replica that holds them; that replica writes
-- all of its sessions in one statement every WORKER_SESSIONS_REFRESH_MS, and soon after a registration or a
-- disconnect (never on the path of a request or a heartbeat). A replica that dies leaves its rows behind:
-- `stale_after` (three refreshes after `last_seen_at`) passes, and any replica's refresh deletes the rows that
-- have been stale for longer than WORKER_SESSIONS_RETAIN_STALE_MS. Leases are not copied here: they are read
-- from ops.task_work (worker_id = session_id).
CREATE TABLE ops.worker_sessions (
  session_id text PRIMARY KEY,
  tenant_id text NOT NULL,
  agent_id text NOT NULL,
  replica_id text NOT NULL,
  -- What the worker calls itself (its hello's identity), for operators.
  identity text NOT NULL,
  capacity integer NOT NULL,
  in_flight integer NOT NULL,
  connected_at timestamptz NOT NULL,
  last_heartbeat_at timestamptz,
  last_seen_at timestamptz NOT NULL,
  stale_after timestamptz NOT NULL
);
CREATE INDEX worker_sessions_tenant ON ops.worker_sessions (tenant_id, agent_id, connected_at);
CREATE INDEX worker_sessions_replica ON ops.worker_sessions (replica_id);
CREATE INDEX worker_sessions_stale ON ops.worker_sessions (stale_after);

-- Down Migration

DROP TABLE ops.worker_sessions;

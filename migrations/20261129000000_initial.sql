-- Up Migration

CREATE SCHEMA IF NOT EXISTS events;
CREATE SCHEMA IF NOT EXISTS read;
CREATE SCHEMA IF NOT EXISTS ops;

-- The append-only event log: the source of truth for every task.
CREATE TABLE events.messages (
  global_position bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  event_id uuid NOT NULL UNIQUE,
  tenant_id text NOT NULL,
  stream_id text NOT NULL,
  stream_version integer NOT NULL CHECK (stream_version > 0),
  event_type text NOT NULL,
  schema_version smallint NOT NULL,
  data jsonb NOT NULL,
  metadata jsonb NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  transaction_id xid8 NOT NULL DEFAULT pg_current_xact_id(),
  UNIQUE (tenant_id, stream_id, stream_version)
);
CREATE INDEX messages_transaction_position ON events.messages (transaction_id, global_position);

CREATE FUNCTION events.refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'events.messages is append-only: % refused', TG_OP
    USING ERRCODE = 'insufficient_privilege';
END;
$$;
CREATE TRIGGER messages_append_only BEFORE UPDATE OR DELETE ON events.messages
  FOR EACH ROW EXECUTE FUNCTION events.refuse_change();
CREATE TRIGGER messages_no_truncate BEFORE TRUNCATE ON events.messages
  FOR EACH STATEMENT EXECUTE FUNCTION events.refuse_change();

-- One row per stream with its current version: the optimistic-concurrency guard that keeps versions gap-free.
CREATE TABLE events.streams (
  tenant_id text NOT NULL,
  stream_id text NOT NULL,
  version integer NOT NULL CHECK (version > 0),
  PRIMARY KEY (tenant_id, stream_id)
);

-- Tenants, hosted agents and credentials (plain tables, not event-sourced).
CREATE TABLE ops.tenants (
  tenant_id text PRIMARY KEY,
  display_name text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE ops.agents (
  tenant_id text NOT NULL REFERENCES ops.tenants (tenant_id),
  agent_id text NOT NULL,
  -- The agent's own part of its card: name, description, version, skills, modes, provider.
  profile jsonb NOT NULL,
  on_lease_lost text NOT NULL DEFAULT 'redispatch' CHECK (on_lease_lost IN ('redispatch', 'fail')),
  max_attempts integer NOT NULL DEFAULT 3 CHECK (max_attempts > 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, agent_id)
);

CREATE TABLE ops.api_keys (
  key_id text PRIMARY KEY,
  tenant_id text NOT NULL REFERENCES ops.tenants (tenant_id),
  principal_id text NOT NULL,
  key_hash text NOT NULL,
  scopes text[] NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz,
  UNIQUE (tenant_id, key_hash)
);

CREATE TABLE ops.worker_credentials (
  credential_id text PRIMARY KEY,
  tenant_id text NOT NULL,
  agent_id text NOT NULL,
  secret_hash text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz,
  FOREIGN KEY (tenant_id, agent_id) REFERENCES ops.agents (tenant_id, agent_id)
);

-- Inline projection of task streams: what GetTask and ListTasks read.
CREATE TABLE read.task_view (
  tenant_id text NOT NULL,
  task_id text NOT NULL,
  agent_id text NOT NULL,
  owner_id text NOT NULL,
  context_id text NOT NULL,
  state text NOT NULL,
  status_timestamp timestamptz NOT NULL,
  version integer NOT NULL,
  task jsonb NOT NULL,
  PRIMARY KEY (tenant_id, task_id)
);
CREATE INDEX task_view_listing
  ON read.task_view (tenant_id, agent_id, owner_id, status_timestamp DESC, task_id DESC);
CREATE INDEX task_view_context ON read.task_view (tenant_id, context_id);

-- Work to hand to agent workers: a row exists while the task is queued or leased (inline, same transaction).
CREATE TABLE ops.task_work (
  tenant_id text NOT NULL,
  task_id text NOT NULL,
  agent_id text NOT NULL,
  status text NOT NULL CHECK (status IN ('queued', 'leased')),
  queued_at timestamptz NOT NULL,
  attempt integer NOT NULL,
  lease_epoch bigint,
  worker_id text,
  lease_expires_at timestamptz,
  cancel_deadline timestamptz,
  PRIMARY KEY (tenant_id, task_id)
);
CREATE INDEX task_work_queue ON ops.task_work (tenant_id, agent_id, queued_at) WHERE status = 'queued';
CREATE INDEX task_work_leases ON ops.task_work (lease_expires_at) WHERE status = 'leased';
CREATE INDEX task_work_cancels ON ops.task_work (cancel_deadline) WHERE cancel_deadline IS NOT NULL;

-- SendMessage idempotency: one task per (tenant, hosted agent, caller, messageId).
CREATE TABLE ops.message_ids (
  tenant_id text NOT NULL,
  agent_id text NOT NULL,
  principal_id text NOT NULL,
  message_id text NOT NULL,
  task_id text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, agent_id, principal_id, message_id)
);

-- Down Migration

DROP SCHEMA ops CASCADE;
DROP SCHEMA read CASCADE;
DROP SCHEMA events CASCADE;

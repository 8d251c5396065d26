-- Up Migration

-- The webhooks registered for tasks (spec digest §10.10, docs/adr/0010-push-notifications.md). Each
-- registration and removal is an event of the task's stream (`PushConfigRegistered`, `PushConfigRemoved`);
-- the URL and the secrets (token, credentials) are here instead, written in the same transaction, because the
-- log and the Kafka feed are read by users' systems. A config applies to the events of its task with
-- from_generation < generation (< to_generation once removed): which webhook gets which event follows from
-- the log and this table alone. Registering an id again replaces the config (and revives a removed one).
CREATE TABLE ops.push_configs (
  tenant_id text NOT NULL,
  task_id text NOT NULL,
  config_id text NOT NULL,
  url text NOT NULL,
  token text,
  -- AuthenticationInfo as the client sent it ({"scheme": …, "credentials": …}).
  authentication jsonb,
  from_generation integer NOT NULL CHECK (from_generation >= 0),
  to_generation integer CHECK (to_generation > from_generation),
  created_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (tenant_id, task_id, config_id)
);

-- One row per (event, webhook) to deliver, derived from the committed log by the push dispatcher (it reads the
-- Kafka feed and inserts these before it commits its offsets; a replay inserts nothing twice). The row is the
-- durable receipt: a delivery is sent only by whoever claimed it (`sending`, until `claimed_until`), at most one
-- 2xx is recorded, and only the oldest open row of a (task, config) lane may be claimed, so a webhook gets a
-- task's events in generation order. `body` is the StreamResponse ProtoJSON exactly as signed and sent, on
-- every attempt and every redrive.
CREATE TABLE ops.push_deliveries (
  -- UUIDv5 of (event id, config id): the same on every attempt (X-A2A-Delivery-Id, the receiver's dedupe key).
  delivery_id uuid PRIMARY KEY,
  tenant_id text NOT NULL,
  task_id text NOT NULL,
  config_id text NOT NULL,
  generation integer NOT NULL CHECK (generation > 0),
  event_id uuid NOT NULL,
  body text NOT NULL,
  state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sending', 'delivered', 'dead')),
  attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  next_attempt_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  claimed_until timestamptz,
  last_status integer,
  last_error text,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  finished_at timestamptz,
  UNIQUE (tenant_id, task_id, config_id, generation)
);
-- Open rows: the heads of lanes to claim, and what the reconciler re-schedules after Redis lost its jobs.
CREATE INDEX push_deliveries_open ON ops.push_deliveries (tenant_id, task_id, config_id, generation)
  WHERE state IN ('pending', 'sending');
-- The operator's listing of a tenant's deliveries, newest first.
CREATE INDEX push_deliveries_tenant ON ops.push_deliveries (tenant_id, created_at DESC, delivery_id);

-- Down Migration

DROP TABLE ops.push_deliveries;
DROP TABLE ops.push_configs;

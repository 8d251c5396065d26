-- Up Migration

-- Where each relay (by name) has published the log up to, in (transaction id, global position) order.
CREATE TABLE ops.relay_checkpoints (
  relay_name text PRIMARY KEY,
  last_transaction_id xid8 NOT NULL,
  last_position bigint NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- Down Migration

DROP TABLE ops.relay_checkpoints;

-- Up Migration

-- The audit log (issue 12, libs/audit/README.md): who did what to which resource, through which binding, with
-- what outcome. One hash chain per tenant: a record's hash is SHA-256 over the previous record's hash and the
-- canonical JSON of its own fields, seq and tenant included, so an edit, a deletion or a reordering breaks the
-- chain where it was made. Records no tenant can be told for (a failed authentication before the tenant is
-- known, platform admin actions) form the reserved chain '_platform'. No column holds free-form content: no
-- secret, token or message can be written here.
CREATE SCHEMA IF NOT EXISTS audit;

CREATE TABLE audit.records (
  tenant_id text NOT NULL,
  -- The record's position in its tenant's chain: 1, 2, 3, … without gaps.
  seq bigint NOT NULL CHECK (seq > 0),
  record_id uuid NOT NULL UNIQUE,
  occurred_at timestamptz NOT NULL,
  principal_id text,
  credential_id text,
  source_address text,
  operation text NOT NULL,
  binding text NOT NULL CHECK (binding IN ('JSONRPC', 'HTTP+JSON', 'GRPC', 'ADMIN', 'WORKER')),
  resource text,
  outcome text NOT NULL CHECK (outcome IN ('ok', 'denied', 'unauthenticated', 'failed')),
  -- The error reason of a failed or denied operation (PERMISSION_DENIED, TASK_NOT_FOUND, …).
  reason text,
  trace_id text,
  prev_hash bytea NOT NULL CHECK (octet_length(prev_hash) = 32),
  hash bytea NOT NULL CHECK (octet_length(hash) = 32),
  PRIMARY KEY (tenant_id, seq)
);
-- The operator's filters; every listing is newest first by seq within the tenant (the primary key).
CREATE INDEX records_occurred ON audit.records (tenant_id, occurred_at);
CREATE INDEX records_principal ON audit.records (tenant_id, principal_id, seq);
CREATE INDEX records_operation ON audit.records (tenant_id, operation, seq);
CREATE INDEX records_resource ON audit.records (tenant_id, resource, seq) WHERE resource IS NOT NULL;
CREATE INDEX records_not_ok ON audit.records (tenant_id, outcome, seq) WHERE outcome <> 'ok';

-- The end of each tenant's chain, locked by every writer that appends to it (one chain, whatever the number
-- of writers). It also tells `audit verify` where the chain ends, so deleting its last records is seen.
CREATE TABLE audit.chain_heads (
  tenant_id text PRIMARY KEY,
  seq bigint NOT NULL CHECK (seq >= 0),
  hash bytea NOT NULL CHECK (octet_length(hash) = 32)
);

-- Records are never changed and heads never move back, except by a tenant purge, which sets
-- `audit.allow_purge` to 'on' in its transaction. This only stops mistakes: whoever can set the setting or
-- disable the triggers can edit the tables, so the evidence is the chain, not these triggers.
CREATE FUNCTION audit.refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF coalesce(current_setting('audit.allow_purge', true), '') = 'on' THEN
    IF TG_OP = 'DELETE' THEN
      RETURN OLD;
    END IF;
    RETURN NEW;
  END IF;
  IF TG_TABLE_NAME = 'chain_heads' AND TG_OP = 'UPDATE' THEN
    IF NEW.tenant_id = OLD.tenant_id AND NEW.seq > OLD.seq THEN
      RETURN NEW;
    END IF;
  END IF;
  RAISE EXCEPTION 'audit.% is append-only: % refused', TG_TABLE_NAME, TG_OP
    USING ERRCODE = 'insufficient_privilege';
END;
$$;
CREATE TRIGGER records_append_only BEFORE UPDATE OR DELETE ON audit.records
  FOR EACH ROW EXECUTE FUNCTION audit.refuse_change();
CREATE TRIGGER records_no_truncate BEFORE TRUNCATE ON audit.records
  FOR EACH STATEMENT EXECUTE FUNCTION audit.refuse_change();
CREATE TRIGGER chain_heads_forward_only BEFORE UPDATE OR DELETE ON audit.chain_heads
  FOR EACH ROW EXECUTE FUNCTION audit.refuse_change();
CREATE TRIGGER chain_heads_no_truncate BEFORE TRUNCATE ON audit.chain_heads
  FOR EACH STATEMENT EXECUTE FUNCTION audit.refuse_change();

-- Down Migration

DROP SCHEMA audit CASCADE;

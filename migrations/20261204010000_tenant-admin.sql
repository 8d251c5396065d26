-- Up Migration

-- Operating tenants through the admin API (issue 12): tenant status and quotas, agents' worker policy, API
-- key scopes, expiry and labels, platform-admin keys, OIDC issuers, and the notice that tells every replica
-- to drop what it cached of them.

-- A suspended tenant's calls are refused (PERMISSION_DENIED); `deleting` is the first step of a purge.
ALTER TABLE ops.tenants
  ADD COLUMN status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended', 'deleting')),
  ADD COLUMN status_changed_at timestamptz,
  -- Quotas; null: the platform's defaults (TENANT_DEFAULT_* settings).
  ADD COLUMN requests_per_second integer CHECK (requests_per_second > 0),
  ADD COLUMN max_active_tasks integer CHECK (max_active_tasks > 0);

-- The worker policy beside on_lease_lost and max_attempts; null: the platform's default.
ALTER TABLE ops.agents
  ADD COLUMN lease_ttl_ms integer CHECK (lease_ttl_ms BETWEEN 1000 AND 3600000),
  ADD COLUMN max_concurrency integer CHECK (max_concurrency > 0),
  ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now();

-- Keys made before scopes were enforced keep what every client key could do then.
UPDATE ops.api_keys SET scopes = '{a2a:message:send,a2a:tasks:read,a2a:tasks:cancel,a2a:push-config}'
 WHERE scopes = '{}';
ALTER TABLE ops.api_keys
  ALTER COLUMN scopes SET DEFAULT '{a2a:message:send,a2a:tasks:read,a2a:tasks:cancel,a2a:push-config}',
  ADD COLUMN label text NOT NULL DEFAULT '',
  ADD COLUMN expires_at timestamptz;

ALTER TABLE ops.worker_credentials
  ADD COLUMN label text NOT NULL DEFAULT '';

-- Operators of the whole platform (scope platform:admin); tenant admins are API keys with tenant:admin.
CREATE TABLE ops.admin_keys (
  key_id text PRIMARY KEY,
  principal_id text NOT NULL,
  key_hash text NOT NULL UNIQUE,
  label text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz,
  revoked_at timestamptz
);

-- OIDC issuers whose bearer tokens a tenant's clients may present.
CREATE TABLE ops.oidc_issuers (
  tenant_id text NOT NULL REFERENCES ops.tenants (tenant_id),
  issuer_id text NOT NULL,
  issuer text NOT NULL,
  audience text NOT NULL,
  jwks_url text NOT NULL,
  principal_claim text NOT NULL DEFAULT 'sub',
  scopes_claim text NOT NULL DEFAULT 'scope',
  -- External scope → platform scopes.
  scope_map jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, issuer_id),
  UNIQUE (tenant_id, issuer)
);

-- The event log stays append-only, except for the one tenant a purge transaction names (the second step of
-- deleting a tenant: `SET LOCAL a2a.purge_tenant`); updates and truncation stay refused.
CREATE OR REPLACE FUNCTION events.refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' AND OLD.tenant_id = current_setting('a2a.purge_tenant', true) THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION 'events.messages is append-only: % refused', TG_OP
    USING ERRCODE = 'insufficient_privilege';
END;
$$;

-- Any change to what authentication, routing or cards read tells every replica to drop its caches.
CREATE FUNCTION ops.notify_config_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('a2a_config', '{"k":"config"}');
  RETURN NULL;
END
$$;

CREATE TRIGGER tenants_changed AFTER INSERT OR UPDATE OR DELETE ON ops.tenants
  FOR EACH STATEMENT EXECUTE FUNCTION ops.notify_config_changed();
CREATE TRIGGER agents_changed AFTER INSERT OR UPDATE OR DELETE ON ops.agents
  FOR EACH STATEMENT EXECUTE FUNCTION ops.notify_config_changed();
CREATE TRIGGER api_keys_changed AFTER INSERT OR UPDATE OR DELETE ON ops.api_keys
  FOR EACH STATEMENT EXECUTE FUNCTION ops.notify_config_changed();
CREATE TRIGGER worker_credentials_changed AFTER INSERT OR UPDATE OR DELETE ON ops.worker_credentials
  FOR EACH STATEMENT EXECUTE FUNCTION ops.notify_config_changed();
CREATE TRIGGER admin_keys_changed AFTER INSERT OR UPDATE OR DELETE ON ops.admin_keys
  FOR EACH STATEMENT EXECUTE FUNCTION ops.notify_config_changed();
CREATE TRIGGER oidc_issuers_changed AFTER INSERT OR UPDATE OR DELETE ON ops.oidc_issuers
  FOR EACH STATEMENT EXECUTE FUNCTION ops.notify_config_changed();

-- Down Migration

DROP TRIGGER oidc_issuers_changed ON ops.oidc_issuers;
DROP TRIGGER admin_keys_changed ON ops.admin_keys;
DROP TRIGGER worker_credentials_changed ON ops.worker_credentials;
DROP TRIGGER api_keys_changed ON ops.api_keys;
DROP TRIGGER agents_changed ON ops.agents;
DROP TRIGGER tenants_changed ON ops.tenants;
DROP FUNCTION ops.notify_config_changed();
CREATE OR REPLACE FUNCTION events.refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'events.messages is append-only: % refused', TG_OP
    USING ERRCODE = 'insufficient_privilege';
END;
$$;
DROP TABLE ops.oidc_issuers;
DROP TABLE ops.admin_keys;
ALTER TABLE ops.worker_credentials DROP COLUMN label;
ALTER TABLE ops.api_keys DROP COLUMN expires_at, DROP COLUMN label,
  ALTER COLUMN scopes SET DEFAULT '{}';
ALTER TABLE ops.agents DROP COLUMN updated_at, DROP COLUMN max_concurrency, DROP COLUMN lease_ttl_ms;
ALTER TABLE ops.tenants DROP COLUMN max_active_tasks, DROP COLUMN requests_per_second,
  DROP COLUMN status_changed_at, DROP COLUMN status;

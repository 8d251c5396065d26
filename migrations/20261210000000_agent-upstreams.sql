-- Up Migration

-- Agents imported from existing A2A servers (docs/upstream.md): where the bridge calls each one, the card it
-- was imported from, and the secrets it needs, sealed with UPSTREAM_SECRETS_KEY (AES-256-GCM, bound to the
-- agent): the headers sent upstream, and the secret of the worker credential the bridge registers with. The
-- admin API returns only the headers' names and when they were set. Deleting the agent deletes its upstream.
CREATE TABLE ops.agent_upstreams (
  tenant_id text NOT NULL,
  agent_id text NOT NULL,
  card_url text NOT NULL,
  binding text NOT NULL CHECK (binding IN ('JSONRPC', 'HTTP+JSON', 'GRPC')),
  -- The URL of the chosen interface, and its tenant (sent with every call; empty when none).
  endpoint text NOT NULL,
  endpoint_tenant text NOT NULL DEFAULT '',
  streaming boolean NOT NULL,
  -- The upstream card as last read, and whether it was signed and a signature verified.
  card jsonb NOT NULL,
  card_signed boolean NOT NULL,
  card_verified boolean NOT NULL,
  -- Sealed JSON object of header name to value; NULL when none.
  headers_sealed bytea,
  header_names text[] NOT NULL DEFAULT '{}',
  headers_set_at timestamptz,
  -- OAuth 2 client credentials (RFC 6749 §4.4) the bridge gets its bearer tokens with: the token URL, client id
  -- and scope in clear, the client secret sealed; NULL when none.
  oauth2 jsonb,
  oauth2_secret_sealed bytea,
  worker_credential_id text NOT NULL,
  worker_secret_sealed bytea NOT NULL,
  -- Grows with every change the bridge must pick up (a new card, binding or header).
  version integer NOT NULL DEFAULT 1,
  imported_at timestamptz NOT NULL DEFAULT now(),
  synced_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, agent_id),
  FOREIGN KEY (tenant_id, agent_id) REFERENCES ops.agents (tenant_id, agent_id) ON DELETE CASCADE
);

-- Down Migration

DROP TABLE ops.agent_upstreams;

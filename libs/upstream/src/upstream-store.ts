import { agentIdOf, tenantIdOf, type AgentRef } from '@lib/tenancy';
import type { Pool } from 'pg';
import type { SecretBox } from './secret-box';
import type { UpstreamBinding } from './upstream-card';

/** What the admin API shows of an imported agent's upstream: never a secret, only header names. */
export interface UpstreamSummary {
  readonly cardUrl: string;
  readonly binding: UpstreamBinding;
  readonly endpoint: string;
  readonly streaming: boolean;
  readonly cardSigned: boolean;
  readonly cardVerified: boolean;
  readonly headerNames: readonly string[];
  readonly headersSetAt: string | null;
  /** OAuth 2 client credentials, without the secret. */
  readonly oauth2: OAuth2Client | null;
  readonly workerCredentialId: string;
  readonly version: number;
  readonly importedAt: string;
  readonly syncedAt: string;
}

/** Where and as whom the bridge gets bearer tokens for an upstream (RFC 6749 §4.4); the secret apart. */
export interface OAuth2Client {
  readonly tokenUrl: string;
  readonly clientId: string;
  readonly scope?: string;
}

/** An upstream as the bridge reads it: where to call, and the sealed secrets. */
export interface UpstreamRow extends UpstreamSummary {
  readonly ref: AgentRef;
  readonly endpointTenant: string;
  /** The upstream card (ProtoJSON) as last read. */
  readonly card: Record<string, unknown>;
  readonly headersSealed: Buffer | null;
  readonly oauth2SecretSealed: Buffer | null;
  readonly workerSecretSealed: Buffer;
}

/** What an import or a sync writes. `headers` undefined keeps the stored ones. */
export interface UpstreamWrite {
  readonly cardUrl: string;
  readonly binding: UpstreamBinding;
  readonly endpoint: string;
  readonly endpointTenant: string;
  readonly streaming: boolean;
  readonly card: Record<string, unknown>;
  readonly cardSigned: boolean;
  readonly cardVerified: boolean;
  readonly headers?: { readonly sealed: Buffer | null; readonly names: readonly string[] };
  /** Written with the headers (an import); undefined keeps the stored ones (a sync). */
  readonly oauth2?: { readonly client: OAuth2Client; readonly sealedSecret: Buffer } | null;
  readonly workerCredentialId: string;
  readonly workerSecretSealed: Buffer;
}

interface Row {
  tenant_id: string;
  agent_id: string;
  card_url: string;
  binding: UpstreamBinding;
  endpoint: string;
  endpoint_tenant: string;
  streaming: boolean;
  card: Record<string, unknown>;
  card_signed: boolean;
  card_verified: boolean;
  headers_sealed: Buffer | null;
  header_names: string[];
  headers_set_at: Date | null;
  oauth2: OAuth2Client | null;
  oauth2_secret_sealed: Buffer | null;
  worker_credential_id: string;
  worker_secret_sealed: Buffer;
  version: number;
  imported_at: Date;
  synced_at: Date;
}

const COLUMNS = `tenant_id, agent_id, card_url, binding, endpoint, endpoint_tenant, streaming, card, card_signed,
  card_verified, headers_sealed, header_names, headers_set_at, oauth2, oauth2_secret_sealed, worker_credential_id,
  worker_secret_sealed,
  version, imported_at, synced_at`;

/** The context a sealed value of the agent is bound to (see SecretBox). */
export function sealContext(
  ref: AgentRef,
  what: 'headers' | 'worker-secret' | 'oauth2-secret',
): string {
  return `${ref.tenantId}/${ref.agentId}:${what}`;
}

/** The headers an upstream is sent, opened from the row (none when it has none). */
export function openHeaders(box: SecretBox, row: UpstreamRow): Record<string, string> {
  return row.headersSealed
    ? (JSON.parse(box.open(row.headersSealed, sealContext(row.ref, 'headers'))) as Record<
        string,
        string
      >)
    : {};
}

/**
 * `ops.agent_upstreams`: the A2A servers imported agents forward to. The admin API writes it; the bridge
 * reads it, and serves a change (its `version` grows) within its poll.
 */
export class UpstreamStore {
  constructor(private readonly pool: Pool) {}

  /**
   * Writes the upstream of an agent that exists. The version grows only when something the bridge uses
   * changed; `changed` says whether it did.
   */
  async put(ref: AgentRef, write: UpstreamWrite): Promise<{ row: UpstreamRow; changed: boolean }> {
    const keepHeaders = write.headers === undefined;
    const result = await this.pool.query<Row & { changed: boolean }>(
      `WITH before AS (
         SELECT version FROM ops.agent_upstreams WHERE tenant_id = $1 AND agent_id = $2
       )
       INSERT INTO ops.agent_upstreams AS u (tenant_id, agent_id, card_url, binding, endpoint, endpoint_tenant,
           streaming, card, card_signed, card_verified, headers_sealed, header_names, headers_set_at,
           worker_credential_id, worker_secret_sealed, oauth2, oauth2_secret_sealed)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, CASE WHEN $13 THEN NULL ELSE now() END,
           $14, $15, $16, $17)
       ON CONFLICT (tenant_id, agent_id) DO UPDATE SET
         card_url = EXCLUDED.card_url, binding = EXCLUDED.binding, endpoint = EXCLUDED.endpoint,
         endpoint_tenant = EXCLUDED.endpoint_tenant, streaming = EXCLUDED.streaming, card = EXCLUDED.card,
         card_signed = EXCLUDED.card_signed, card_verified = EXCLUDED.card_verified,
         headers_sealed = CASE WHEN $13 THEN u.headers_sealed ELSE EXCLUDED.headers_sealed END,
         header_names = CASE WHEN $13 THEN u.header_names ELSE EXCLUDED.header_names END,
         headers_set_at = CASE WHEN $13 THEN u.headers_set_at ELSE now() END,
         oauth2 = CASE WHEN $13 THEN u.oauth2 ELSE EXCLUDED.oauth2 END,
         oauth2_secret_sealed = CASE WHEN $13 THEN u.oauth2_secret_sealed ELSE EXCLUDED.oauth2_secret_sealed END,
         worker_credential_id = EXCLUDED.worker_credential_id,
         worker_secret_sealed = EXCLUDED.worker_secret_sealed,
         version = u.version + CASE
           WHEN (u.binding, u.endpoint, u.endpoint_tenant, u.streaming, u.card, u.worker_secret_sealed)
                IS DISTINCT FROM (EXCLUDED.binding, EXCLUDED.endpoint, EXCLUDED.endpoint_tenant,
                                  EXCLUDED.streaming, EXCLUDED.card, EXCLUDED.worker_secret_sealed)
                OR NOT $13 THEN 1 ELSE 0 END,
         synced_at = now()
       RETURNING ${COLUMNS.split(',')
         .map((c) => `u.${c.trim()}`)
         .join(', ')},
         u.version IS DISTINCT FROM (SELECT version FROM before) AS changed`,
      [
        ref.tenantId,
        ref.agentId,
        write.cardUrl,
        write.binding,
        write.endpoint,
        write.endpointTenant,
        write.streaming,
        JSON.stringify(write.card),
        write.cardSigned,
        write.cardVerified,
        write.headers?.sealed ?? null,
        write.headers?.names ?? [],
        keepHeaders,
        write.workerCredentialId,
        write.workerSecretSealed,
        write.oauth2 ? JSON.stringify(write.oauth2.client) : null,
        write.oauth2?.sealedSecret ?? null,
      ],
    );
    const row = result.rows[0];
    if (!row) {
      throw new Error(`the upstream of ${ref.tenantId}/${ref.agentId} was not written`);
    }
    return { row: rowOf(row), changed: row.changed };
  }

  async get(ref: AgentRef): Promise<UpstreamRow | undefined> {
    const result = await this.pool.query<Row>(
      `SELECT ${COLUMNS} FROM ops.agent_upstreams WHERE tenant_id = $1 AND agent_id = $2`,
      [ref.tenantId, ref.agentId],
    );
    const row = result.rows[0];
    return row ? rowOf(row) : undefined;
  }

  /** The imported agents whose card was last read more than `intervalMs` ago. */
  async dueForSync(intervalMs: number): Promise<AgentRef[]> {
    const result = await this.pool.query<{ tenant_id: string; agent_id: string }>(
      `SELECT tenant_id, agent_id FROM ops.agent_upstreams
        WHERE synced_at < now() - make_interval(secs => $1 / 1000.0)
        ORDER BY synced_at`,
      [intervalMs],
    );
    return result.rows.map((row) => ({
      tenantId: tenantIdOf(row.tenant_id),
      agentId: agentIdOf(row.agent_id),
    }));
  }

  /**
   * Every imported agent of every tenant with its version: what the bridge serves, read without the cards and
   * secrets (it loads a row only when it is new or changed).
   */
  async versions(): Promise<{ ref: AgentRef; version: number }[]> {
    const result = await this.pool.query<{ tenant_id: string; agent_id: string; version: number }>(
      'SELECT tenant_id, agent_id, version FROM ops.agent_upstreams ORDER BY tenant_id, agent_id',
    );
    return result.rows.map((row) => ({
      ref: { tenantId: tenantIdOf(row.tenant_id), agentId: agentIdOf(row.agent_id) },
      version: row.version,
    }));
  }
}

/** The admin API's view of a row. */
export function summaryOf(row: UpstreamRow): UpstreamSummary {
  return {
    cardUrl: row.cardUrl,
    binding: row.binding,
    endpoint: row.endpoint,
    streaming: row.streaming,
    cardSigned: row.cardSigned,
    cardVerified: row.cardVerified,
    headerNames: row.headerNames,
    headersSetAt: row.headersSetAt,
    oauth2: row.oauth2,
    workerCredentialId: row.workerCredentialId,
    version: row.version,
    importedAt: row.importedAt,
    syncedAt: row.syncedAt,
  };
}

function rowOf(row: Row): UpstreamRow {
  return {
    ref: { tenantId: tenantIdOf(row.tenant_id), agentId: agentIdOf(row.agent_id) },
    cardUrl: row.card_url,
    binding: row.binding,
    endpoint: row.endpoint,
    endpointTenant: row.endpoint_tenant,
    streaming: row.streaming,
    card: row.card,
    cardSigned: row.card_signed,
    cardVerified: row.card_verified,
    headersSealed: row.headers_sealed,
    headerNames: row.header_names,
    headersSetAt: row.headers_set_at?.toISOString() ?? null,
    oauth2: row.oauth2,
    oauth2SecretSealed: row.oauth2_secret_sealed,
    workerCredentialId: row.worker_credential_id,
    workerSecretSealed: row.worker_secret_sealed,
    version: row.version,
    importedAt: row.imported_at.toISOString(),
    syncedAt: row.synced_at.toISOString(),
  };
}

import { CLIENT_SCOPES, TENANT_SCOPES } from '@lib/authz';
import {
  agentIdOf,
  credentialIdOf,
  principalIdOf,
  tenantIdOf,
  type AgentId,
  type AgentRef,
  type CredentialId,
  type PrincipalId,
  type TenantId,
} from '@lib/ids';
import { randomBytes } from 'node:crypto';
import type { Pool } from 'pg';
import { z } from 'zod';
import { hashSecret } from '../secrets';
import { isForeignKeyViolation, NotFound, parseInput } from './admin-errors';

export const issueApiKeySchema = z
  .object({
    principalId: z
      .string()
      // eslint-disable-next-line no-control-regex -- the control characters are what the class excludes
      .regex(/^[^\s\u0000-\u001f\u007f]{1,256}$/, 'no white space or control characters, 1 to 256')
      .refine((id) => !id.includes(':'), 'must not contain ":" (reserved for OIDC principals)'),
    scopes: z
      .array(z.enum(TENANT_SCOPES))
      .min(1)
      .max(16)
      .default([...CLIENT_SCOPES]),
    label: z.string().max(256).default(''),
    expiresAt: z
      .string()
      .datetime({ offset: true })
      .refine((at) => Date.parse(at) > Date.now(), 'must be in the future')
      .optional(),
  })
  .strict();

export const issueAdminKeySchema = z
  .object({
    principalId: issueApiKeySchema.shape.principalId,
    label: z.string().max(256).default(''),
    expiresAt: issueApiKeySchema.shape.expiresAt,
  })
  .strict();

export const issueWorkerCredentialSchema = z
  .object({ label: z.string().max(256).default('') })
  .strict();

export interface ApiKeyRecord {
  keyId: CredentialId;
  tenantId: TenantId;
  principalId: PrincipalId;
  scopes: string[];
  label: string;
  /** What identifies the key in logs and listings: the start of the secret, which is `<prefix>_<random>`. */
  prefix: string;
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
}

/**
 * An unrevoked API key as authentication reads it (by the hash of its secret): whom it names, what it allows,
 * until when, and whether its tenant is active.
 */
export interface ApiKeyGrant {
  tenantId: TenantId;
  keyId: CredentialId;
  principalId: PrincipalId;
  scopes: string[];
  expiresAt: Date | null;
  /** `active`, or `suspended` / `deleting`: the key then opens nothing. */
  tenantStatus: string;
}

/** Who an admin credential (an admin key, or a tenant API key with `tenant:admin`) names. */
export interface AdminGrant {
  principalId: PrincipalId;
  credentialId: CredentialId;
  /** The tenant of a tenant API key; null for an admin key (platform-wide). */
  tenantId: TenantId | null;
}

/** A platform-admin key (scope `platform:admin`). */
export interface AdminKeyRecord {
  keyId: CredentialId;
  principalId: PrincipalId;
  label: string;
  prefix: string;
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
}

export interface WorkerCredentialRecord {
  credentialId: CredentialId;
  tenantId: TenantId;
  agentId: AgentId;
  label: string;
  prefix: string;
  createdAt: string;
  revokedAt: string | null;
}

/** A credential as issued: the secret is in this answer only, and stored as a hash. */
export interface Issued<T> {
  credential: T;
  secret: string;
}

/** A new credential id: `<kind>-` and 16 random hex digits. */
function newId(kind: string): string {
  return `${kind}-${randomBytes(8).toString('hex')}`;
}

/** The secret of a credential: its public prefix, then 32 random bytes. */
function newSecretFor(prefix: string): string {
  return `${prefix}_${randomBytes(32).toString('base64url')}`;
}

/** `a2a_<key id>` for API keys, `a2aa_<key id>` for admin keys, `a2aw_<credential id>` for workers. */
const keyPrefix = (keyId: string) => `a2a_${keyId}`;
const adminPrefix = (keyId: string) => `a2aa_${keyId}`;
const workerPrefix = (credentialId: string) => `a2aw_${credentialId}`;

interface ApiKeyRow {
  key_id: string;
  tenant_id: string;
  principal_id: string;
  scopes: string[];
  label: string;
  created_at: Date;
  expires_at: Date | null;
  revoked_at: Date | null;
}

interface GrantRow {
  tenant_id: string;
  key_id: string;
  principal_id: string;
  scopes: string[];
  expires_at: Date | null;
  status: string;
}

interface WorkerRow {
  credential_id: string;
  tenant_id: string;
  agent_id: string;
  label: string;
  created_at: Date;
  revoked_at: Date | null;
}

interface AdminKeyRow {
  key_id: string;
  principal_id: string;
  label: string;
  created_at: Date;
  expires_at: Date | null;
  revoked_at: Date | null;
}

const ADMIN_COLUMNS = 'key_id, principal_id, label, created_at, expires_at, revoked_at';
const KEY_COLUMNS =
  'key_id, tenant_id, principal_id, scopes, label, created_at, expires_at, revoked_at';
const WORKER_COLUMNS = 'credential_id, tenant_id, agent_id, label, created_at, revoked_at';

/**
 * `ops.api_keys`, `ops.admin_keys` and `ops.worker_credentials`, read and written only here (the
 * authenticators look credentials up through it): credentials are stored as hashes of their secrets,
 * identified by an id that is also the secret's public prefix, and revoked (never deleted) so listings and
 * audit keep naming them. A revocation is effective on every replica within a second (ConfigChanges).
 */
export class CredentialStore {
  constructor(private readonly pool: Pool) {}

  /** Issues an API key; `secret` only for the demo seed and tests (an operator-chosen secret). */
  async issueApiKey(
    tenantId: TenantId,
    input: unknown,
    fixed?: { keyId: string; secret: string },
  ): Promise<Issued<ApiKeyRecord>> {
    const spec = parseInput(issueApiKeySchema, input, 'API key');
    const keyId = fixed?.keyId ?? newId('key');
    const secret = fixed?.secret ?? newSecretFor(keyPrefix(keyId));
    const result = await this.pool
      .query<ApiKeyRow>(
        `INSERT INTO ops.api_keys (key_id, tenant_id, principal_id, key_hash, scopes, label, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (key_id) DO UPDATE
           SET key_hash = EXCLUDED.key_hash, principal_id = EXCLUDED.principal_id,
               scopes = EXCLUDED.scopes, label = EXCLUDED.label, expires_at = EXCLUDED.expires_at,
               revoked_at = NULL
           WHERE ops.api_keys.tenant_id = EXCLUDED.tenant_id
         RETURNING ${KEY_COLUMNS}`,
        [
          keyId,
          tenantId,
          spec.principalId,
          hashSecret(secret),
          spec.scopes,
          spec.label,
          spec.expiresAt ?? null,
        ],
      )
      .catch((error: unknown) => {
        throw isForeignKeyViolation(error) ? new NotFound(`no tenant ${tenantId}`) : error;
      });
    const row = result.rows[0];
    if (!row) {
      throw new NotFound(`no API key ${keyId} in tenant ${tenantId}`);
    }
    return { credential: apiKeyOf(row), secret };
  }

  async listApiKeys(tenantId: TenantId): Promise<ApiKeyRecord[]> {
    const result = await this.pool.query<ApiKeyRow>(
      `SELECT ${KEY_COLUMNS} FROM ops.api_keys WHERE tenant_id = $1 ORDER BY created_at, key_id`,
      [tenantId],
    );
    return result.rows.map(apiKeyOf);
  }

  /** The unrevoked API key of `tenantId` whose secret has the hash `keyHash`, if any. */
  async findApiKey(tenantId: TenantId, keyHash: string): Promise<ApiKeyGrant | null> {
    const result = await this.pool.query<GrantRow>({
      name: 'api-keys.authenticate',
      text: `SELECT k.tenant_id, k.key_id, k.principal_id, k.scopes, k.expires_at, t.status
               FROM ops.api_keys k JOIN ops.tenants t ON t.tenant_id = k.tenant_id
              WHERE k.tenant_id = $1 AND k.key_hash = $2 AND k.revoked_at IS NULL`,
      values: [tenantId, keyHash],
    });
    const row = result.rows[0];
    return row ? grantOf(row) : null;
  }

  /**
   * The unrevoked API keys of any tenant whose secret has the hash `keyHash` (one, unless the same secret was
   * registered in several tenants), by tenant: for a caller that names no tenant.
   */
  async findApiKeysAnywhere(keyHash: string): Promise<ApiKeyGrant[]> {
    const result = await this.pool.query<GrantRow>({
      name: 'api-keys.authenticate-anywhere',
      text: `SELECT k.tenant_id, k.key_id, k.principal_id, k.scopes, k.expires_at, t.status
               FROM ops.api_keys k JOIN ops.tenants t ON t.tenant_id = k.tenant_id
              WHERE k.key_hash = $1 AND k.revoked_at IS NULL
              ORDER BY k.tenant_id`,
      values: [keyHash],
    });
    return result.rows.map(grantOf);
  }

  /**
   * The admin credential whose secret has the hash `keyHash`: a live admin key, or a live API key with
   * `tenant:admin` of an active tenant; null when there is none.
   */
  async findAdminCredential(keyHash: string): Promise<AdminGrant | null> {
    const result = await this.pool.query<{
      principal_id: string;
      credential_id: string;
      tenant_id: string | null;
    }>({
      name: 'admin.authenticate',
      text: `SELECT principal_id, key_id AS credential_id, NULL AS tenant_id FROM ops.admin_keys
              WHERE key_hash = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())
             UNION ALL
             SELECT k.principal_id, k.key_id, k.tenant_id FROM ops.api_keys k
               JOIN ops.tenants t ON t.tenant_id = k.tenant_id AND t.status = 'active'
              WHERE k.key_hash = $1 AND k.revoked_at IS NULL
                AND (k.expires_at IS NULL OR k.expires_at > now()) AND 'tenant:admin' = ANY (k.scopes)`,
      values: [keyHash],
    });
    const row = result.rows[0];
    return row
      ? {
          principalId: principalIdOf(row.principal_id),
          credentialId: credentialIdOf(row.credential_id),
          tenantId: row.tenant_id === null ? null : tenantIdOf(row.tenant_id),
        }
      : null;
  }

  /** Revokes the key (idempotent: a revoked key stays revoked at its first revocation time). */
  async revokeApiKey(tenantId: TenantId, keyId: string): Promise<ApiKeyRecord> {
    const result = await this.pool.query<ApiKeyRow>(
      `UPDATE ops.api_keys SET revoked_at = coalesce(revoked_at, now())
        WHERE tenant_id = $1 AND key_id = $2 RETURNING ${KEY_COLUMNS}`,
      [tenantId, keyId],
    );
    const row = result.rows[0];
    if (!row) {
      throw new NotFound(`no API key ${keyId} in tenant ${tenantId}`);
    }
    return apiKeyOf(row);
  }

  /** Issues a platform-admin key. */
  async issueAdminKey(input: unknown): Promise<Issued<AdminKeyRecord>> {
    const spec = parseInput(issueAdminKeySchema, input, 'admin key');
    const keyId = newId('adm');
    const secret = newSecretFor(adminPrefix(keyId));
    const result = await this.pool.query<AdminKeyRow>(
      `INSERT INTO ops.admin_keys (key_id, principal_id, key_hash, label, expires_at)
       VALUES ($1, $2, $3, $4, $5) RETURNING ${ADMIN_COLUMNS}`,
      [keyId, spec.principalId, hashSecret(secret), spec.label, spec.expiresAt ?? null],
    );
    const row = result.rows[0];
    if (!row) {
      throw new Error('the admin key was not stored');
    }
    return { credential: adminKeyOf(row), secret };
  }

  async listAdminKeys(): Promise<AdminKeyRecord[]> {
    const result = await this.pool.query<AdminKeyRow>(
      `SELECT ${ADMIN_COLUMNS} FROM ops.admin_keys ORDER BY created_at, key_id`,
    );
    return result.rows.map(adminKeyOf);
  }

  async revokeAdminKey(keyId: string): Promise<AdminKeyRecord> {
    const result = await this.pool.query<AdminKeyRow>(
      `UPDATE ops.admin_keys SET revoked_at = coalesce(revoked_at, now())
        WHERE key_id = $1 RETURNING ${ADMIN_COLUMNS}`,
      [keyId],
    );
    const row = result.rows[0];
    if (!row) {
      throw new NotFound(`no admin key ${keyId}`);
    }
    return adminKeyOf(row);
  }

  /** Issues a worker credential bound to (tenant, agent); `fixed` as for {@link issueApiKey}. */
  async issueWorkerCredential(
    agent: AgentRef,
    input: unknown,
    fixed?: { credentialId: string; secret: string },
  ): Promise<Issued<WorkerCredentialRecord>> {
    const spec = parseInput(issueWorkerCredentialSchema, input, 'worker credential');
    const credentialId = fixed?.credentialId ?? newId('wkr');
    const secret = fixed?.secret ?? newSecretFor(workerPrefix(credentialId));
    const result = await this.pool
      .query<WorkerRow>(
        `INSERT INTO ops.worker_credentials (credential_id, tenant_id, agent_id, secret_hash, label)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (credential_id) DO UPDATE
           SET secret_hash = EXCLUDED.secret_hash, label = EXCLUDED.label, revoked_at = NULL
           WHERE ops.worker_credentials.tenant_id = EXCLUDED.tenant_id
             AND ops.worker_credentials.agent_id = EXCLUDED.agent_id
         RETURNING ${WORKER_COLUMNS}`,
        [credentialId, agent.tenantId, agent.agentId, hashSecret(secret), spec.label],
      )
      .catch((error: unknown) => {
        throw isForeignKeyViolation(error)
          ? new NotFound(`no agent ${agent.agentId} in tenant ${agent.tenantId}`)
          : error;
      });
    const row = result.rows[0];
    if (!row) {
      throw new NotFound(`no worker credential ${credentialId} of agent ${agent.agentId}`);
    }
    return { credential: workerOf(row), secret };
  }

  /** The (tenant, agent) and id of the unrevoked worker credential whose secret has the hash `secretHash`. */
  async findWorkerCredential(
    secretHash: string,
  ): Promise<(AgentRef & { credentialId: CredentialId }) | null> {
    const result = await this.pool.query<{
      tenant_id: string;
      agent_id: string;
      credential_id: string;
    }>(
      `SELECT tenant_id, agent_id, credential_id FROM ops.worker_credentials
        WHERE secret_hash = $1 AND revoked_at IS NULL`,
      [secretHash],
    );
    const row = result.rows[0];
    return row
      ? {
          tenantId: tenantIdOf(row.tenant_id),
          agentId: agentIdOf(row.agent_id),
          credentialId: credentialIdOf(row.credential_id),
        }
      : null;
  }

  async listWorkerCredentials(agent: AgentRef): Promise<WorkerCredentialRecord[]> {
    const result = await this.pool.query<WorkerRow>(
      `SELECT ${WORKER_COLUMNS} FROM ops.worker_credentials
        WHERE tenant_id = $1 AND agent_id = $2 ORDER BY created_at, credential_id`,
      [agent.tenantId, agent.agentId],
    );
    return result.rows.map(workerOf);
  }

  /**
   * Revokes a worker credential: new registrations and updates with it are refused within a second; a session
   * it opened is ended by the task-service on its next call.
   */
  async revokeWorkerCredential(
    agent: AgentRef,
    credentialId: string,
  ): Promise<WorkerCredentialRecord> {
    const result = await this.pool.query<WorkerRow>(
      `UPDATE ops.worker_credentials SET revoked_at = coalesce(revoked_at, now())
        WHERE tenant_id = $1 AND agent_id = $2 AND credential_id = $3 RETURNING ${WORKER_COLUMNS}`,
      [agent.tenantId, agent.agentId, credentialId],
    );
    const row = result.rows[0];
    if (!row) {
      throw new NotFound(`no worker credential ${credentialId} of agent ${agent.agentId}`);
    }
    return workerOf(row);
  }
}

function apiKeyOf(row: ApiKeyRow): ApiKeyRecord {
  return {
    keyId: credentialIdOf(row.key_id),
    tenantId: tenantIdOf(row.tenant_id),
    principalId: principalIdOf(row.principal_id),
    scopes: row.scopes,
    label: row.label,
    prefix: keyPrefix(row.key_id),
    createdAt: row.created_at.toISOString(),
    expiresAt: row.expires_at?.toISOString() ?? null,
    revokedAt: row.revoked_at?.toISOString() ?? null,
  };
}

function grantOf(row: GrantRow): ApiKeyGrant {
  return {
    tenantId: tenantIdOf(row.tenant_id),
    keyId: credentialIdOf(row.key_id),
    principalId: principalIdOf(row.principal_id),
    scopes: row.scopes,
    expiresAt: row.expires_at,
    tenantStatus: row.status,
  };
}

function adminKeyOf(row: AdminKeyRow): AdminKeyRecord {
  return {
    keyId: credentialIdOf(row.key_id),
    principalId: principalIdOf(row.principal_id),
    label: row.label,
    prefix: adminPrefix(row.key_id),
    createdAt: row.created_at.toISOString(),
    expiresAt: row.expires_at?.toISOString() ?? null,
    revokedAt: row.revoked_at?.toISOString() ?? null,
  };
}

function workerOf(row: WorkerRow): WorkerCredentialRecord {
  return {
    credentialId: credentialIdOf(row.credential_id),
    tenantId: tenantIdOf(row.tenant_id),
    agentId: agentIdOf(row.agent_id),
    label: row.label,
    prefix: workerPrefix(row.credential_id),
    createdAt: row.created_at.toISOString(),
    revokedAt: row.revoked_at?.toISOString() ?? null,
  };
}

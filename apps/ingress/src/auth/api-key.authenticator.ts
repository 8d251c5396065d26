import { A2aError } from '@lib/a2a-protocol';
import {
  ConfigChanges,
  credentialIdOf,
  hashSecret,
  principalIdOf,
  type CredentialId,
  type PrincipalId,
  type TenantId,
} from '@lib/tenancy';
import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { INGRESS_PG_POOL } from '../tokens';

/** Header carrying the tenant API key; declared in every agent card's security schemes. */
export const API_KEY_HEADER = 'X-API-Key';

/** Who a credential says the caller is, and what it lets them do. */
export interface Identity {
  principalId: PrincipalId;
  /** Null for the anonymous principal of an ANONYMOUS_AGENTS agent. */
  credentialId: CredentialId | null;
  scopes: readonly string[];
}

interface StoredKey {
  identity: Identity;
  expiresAt: Date | null;
  tenantStatus: string;
}

/** A cache entry's life when no change notice drops it first (notices are hints; see ConfigChanges). */
const CACHE_TTL_MS = 5_000;
/** Most keys remembered at once (a flood of wrong keys must not grow memory). */
const CACHE_SIZE = 10_000;

/**
 * Authenticates API keys against the hashes stored for the tenant the request is routed to. A key of another
 * tenant is simply unknown here, so it fails like a wrong key. A revoked or expired key, or any key of a
 * tenant that is not active, stops working on every replica as soon as the change notice arrives.
 */
@Injectable()
export class ApiKeyAuthenticator {
  private readonly cache = new Map<string, { key: StoredKey | null; until: number }>();

  constructor(
    @Inject(INGRESS_PG_POOL) private readonly pool: Pool,
    changes: ConfigChanges,
  ) {
    changes.subscribe(() => this.cache.clear());
  }

  async authenticate(tenantId: TenantId, apiKey: string | undefined): Promise<Identity> {
    if (!apiKey) {
      throw new A2aError('UNAUTHENTICATED', `missing ${API_KEY_HEADER} header`);
    }
    const hash = hashSecret(apiKey);
    const cacheKey = `${tenantId}\u0000${hash}`;
    const cached = this.cache.get(cacheKey);
    let key: StoredKey | null;
    if (cached && cached.until > Date.now()) {
      key = cached.key;
    } else {
      key = await this.lookUp(tenantId, hash);
      if (this.cache.size >= CACHE_SIZE) {
        this.cache.clear();
      }
      this.cache.set(cacheKey, { key, until: Date.now() + CACHE_TTL_MS });
    }
    if (!key) {
      throw new A2aError('UNAUTHENTICATED', 'invalid API key');
    }
    if (key.expiresAt !== null && key.expiresAt.getTime() <= Date.now()) {
      throw new A2aError('UNAUTHENTICATED', 'the API key has expired');
    }
    if (key.tenantStatus !== 'active') {
      throw new A2aError('PERMISSION_DENIED', `tenant ${tenantId} is ${key.tenantStatus}`);
    }
    return key.identity;
  }

  private async lookUp(tenantId: TenantId, hash: string): Promise<StoredKey | null> {
    const result = await this.pool.query<{
      key_id: string;
      principal_id: string;
      scopes: string[];
      expires_at: Date | null;
      status: string;
    }>({
      name: 'api-keys.authenticate',
      text: `SELECT k.key_id, k.principal_id, k.scopes, k.expires_at, t.status
               FROM ops.api_keys k JOIN ops.tenants t ON t.tenant_id = k.tenant_id
              WHERE k.tenant_id = $1 AND k.key_hash = $2 AND k.revoked_at IS NULL`,
      values: [tenantId, hash],
    });
    const row = result.rows[0];
    return row
      ? {
          identity: {
            principalId: principalIdOf(row.principal_id),
            credentialId: credentialIdOf(row.key_id),
            scopes: row.scopes,
          },
          expiresAt: row.expires_at,
          tenantStatus: row.status,
        }
      : null;
  }
}

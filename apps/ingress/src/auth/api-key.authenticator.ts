import { A2aError } from '@lib/a2a-protocol';
import { hashSecret } from '@lib/tenancy';
import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { INGRESS_PG_POOL } from '../tokens';

/** Header carrying the tenant API key; declared in every agent card's security schemes. */
export const API_KEY_HEADER = 'X-API-Key';

export interface Principal {
  tenantId: string;
  principalId: string;
  scopes: string[];
}

const CACHE_TTL_MS = 5_000;

/**
 * Authenticates API keys against the hashes stored for the tenant the request is routed to. A key of another
 * tenant is simply unknown here, so it fails like a wrong key.
 */
@Injectable()
export class ApiKeyAuthenticator {
  private readonly cache = new Map<string, { principal: Principal | null; until: number }>();

  constructor(@Inject(INGRESS_PG_POOL) private readonly pool: Pool) {}

  async authenticate(tenantId: string, apiKey: string | undefined): Promise<Principal> {
    if (!apiKey) {
      throw new A2aError('UNAUTHENTICATED', `missing ${API_KEY_HEADER} header`);
    }
    const hash = hashSecret(apiKey);
    const key = `${tenantId}\u0000${hash}`;
    const cached = this.cache.get(key);
    let principal: Principal | null;
    if (cached && cached.until > Date.now()) {
      principal = cached.principal;
    } else {
      const result = await this.pool.query<{ principal_id: string; scopes: string[] }>(
        `SELECT principal_id, scopes FROM ops.api_keys
          WHERE tenant_id = $1 AND key_hash = $2 AND revoked_at IS NULL`,
        [tenantId, hash],
      );
      const row = result.rows[0];
      principal = row ? { tenantId, principalId: row.principal_id, scopes: row.scopes } : null;
      this.cache.set(key, { principal, until: Date.now() + CACHE_TTL_MS });
    }
    if (!principal) {
      throw new A2aError('UNAUTHENTICATED', 'invalid API key');
    }
    return principal;
  }
}

import { A2aError } from '@lib/a2a-protocol';
import {
  ConfigChanges,
  CredentialStore,
  hashSecret,
  type ApiKeyGrant,
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

/** Who a key names in one of the tenants it opens, for a route that names no tenant. */
export interface TenantIdentity extends Identity {
  tenantId: TenantId;
}

/**
 * What a key opens on a route that names no tenant, or why it opens nothing, with the tenant it belongs to
 * when it belongs to one (an expired key, a suspended tenant).
 */
export type KeyAuthentication =
  | { identities: TenantIdentity[] }
  | { refusal: A2aError; tenantId: TenantId | null };

/** A cache entry's life when no change notice drops it first (notices are hints; see ConfigChanges). */
const CACHE_TTL_MS = 5_000;
/** Most keys remembered at once (a flood of wrong keys must not grow memory). */
const CACHE_SIZE = 10_000;

/**
 * Authenticates API keys against the hashes stored for the tenant the request is routed to (read through the
 * `CredentialStore`). A key of another tenant is simply unknown here, so it fails like a wrong key. A revoked
 * or expired key, or any key of a tenant that is not active, stops working on every replica as soon as the
 * change notice arrives.
 */
@Injectable()
export class ApiKeyAuthenticator {
  private readonly cache = new Map<string, { key: ApiKeyGrant | null; until: number }>();
  private readonly store: CredentialStore;

  constructor(@Inject(INGRESS_PG_POOL) pool: Pool, changes: ConfigChanges) {
    this.store = new CredentialStore(pool);
    changes.subscribe(() => this.cache.clear());
  }

  async authenticate(tenantId: TenantId, apiKey: string | undefined): Promise<Identity> {
    if (!apiKey) {
      throw missingKey();
    }
    const hash = hashSecret(apiKey);
    const cacheKey = `${tenantId}\u0000${hash}`;
    const cached = this.cache.get(cacheKey);
    let key: ApiKeyGrant | null;
    if (cached && cached.until > Date.now()) {
      key = cached.key;
    } else {
      key = await this.store.findApiKey(tenantId, hash);
      if (this.cache.size >= CACHE_SIZE) {
        this.cache.clear();
      }
      this.cache.set(cacheKey, { key, until: Date.now() + CACHE_TTL_MS });
    }
    if (!key) {
      throw invalidKey();
    }
    const refusal = refusalOf(key);
    if (refusal) {
      throw refusal;
    }
    return identityOf(key);
  }

  /**
   * What `apiKey` opens on a route that names no tenant (`GET /a2a/agents`): who it names in each tenant it
   * opens (one, unless the same secret was registered in several), else the refusal {@link authenticate}
   * would give. Not cached: such routes are rare, and a flood of wrong keys must not fill the cache.
   */
  async authenticateAnywhere(apiKey: string | undefined): Promise<KeyAuthentication> {
    if (!apiKey) {
      return { refusal: missingKey(), tenantId: null };
    }
    const keys = await this.store.findApiKeysAnywhere(hashSecret(apiKey));
    const identities = keys.flatMap((key) =>
      refusalOf(key) ? [] : [{ tenantId: key.tenantId, ...identityOf(key) }],
    );
    if (identities.length > 0) {
      return { identities };
    }
    const [first] = keys;
    return first
      ? { refusal: refusalOf(first) ?? invalidKey(), tenantId: first.tenantId }
      : { refusal: invalidKey(), tenantId: null };
  }
}

const missingKey = (): A2aError =>
  new A2aError('UNAUTHENTICATED', `missing ${API_KEY_HEADER} header`);
const invalidKey = (): A2aError => new A2aError('UNAUTHENTICATED', 'invalid API key');

/** Why an unrevoked key opens nothing (it expired, or its tenant is not active); null when it is valid. */
function refusalOf(key: ApiKeyGrant): A2aError | null {
  if (key.expiresAt !== null && key.expiresAt.getTime() <= Date.now()) {
    return new A2aError('UNAUTHENTICATED', 'the API key has expired');
  }
  if (key.tenantStatus !== 'active') {
    return new A2aError('PERMISSION_DENIED', `tenant ${key.tenantId} is ${key.tenantStatus}`);
  }
  return null;
}

function identityOf(key: ApiKeyGrant): Identity {
  return { principalId: key.principalId, credentialId: key.keyId, scopes: key.scopes };
}

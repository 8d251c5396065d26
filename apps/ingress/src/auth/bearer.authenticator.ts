import { A2aError } from '@lib/a2a-protocol';
import {
  ConfigChanges,
  credentialIdOf,
  IssuerStore,
  JwtAuthenticator,
  JwtRejected,
  principalIdOf,
  type IssuerRecord,
  type TenantId,
} from '@lib/tenancy';
import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { INGRESS_CONFIG, INGRESS_PG_POOL, type IngressModuleConfig } from '../tokens';
import type { Identity } from './api-key.authenticator';

/** The token of an `Authorization: Bearer <token>` header (RFC 6750 §2.1), when there is one. */
export function bearerOf(authorization: string | undefined): { bearer?: string } {
  const token = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(authorization ?? '')?.[1];
  return token === undefined ? {} : { bearer: token };
}

/** How long a tenant's issuer list is reused when no change notice drops it first. */
const ISSUERS_TTL_MS = 5_000;

/**
 * Authenticates `Authorization: Bearer <JWT>` against the OIDC issuers the routed tenant trusts: issuer,
 * audience, expiry (30 s skew), signature by a key of the issuer's JWKS (a new key is picked up without a
 * restart), and the issuer's claim → principal and scope mapping. A token of an issuer the tenant does not
 * trust fails like a bad one.
 */
@Injectable()
export class BearerAuthenticator {
  private readonly verifier: JwtAuthenticator;
  private readonly store: IssuerStore;
  private readonly issuers = new Map<TenantId, { issuers: IssuerRecord[]; until: number }>();

  constructor(
    @Inject(INGRESS_CONFIG) config: IngressModuleConfig,
    @Inject(INGRESS_PG_POOL) pool: Pool,
    changes: ConfigChanges,
  ) {
    // JWKS URLs are fetched through the SSRF guard; loopback only for local identity providers.
    this.verifier = new JwtAuthenticator({
      allowInsecureLoopback: config.OIDC_ALLOW_INSECURE_LOOPBACK,
    });
    // The ingress only reads issuers; their URLs were checked when the admin API stored them.
    this.store = new IssuerStore(pool, { allowInsecureLoopback: false });
    changes.subscribe(() => this.issuers.clear());
  }

  async authenticate(tenantId: TenantId, token: string): Promise<Identity> {
    const issuers = await this.issuersOf(tenantId);
    try {
      const verified = await this.verifier.verify(token, issuers);
      const record = issuers.find((i) => i.issuer === verified.issuer.issuer);
      return {
        principalId: principalIdOf(verified.principalId),
        credentialId: credentialIdOf(`oidc/${record?.issuerId ?? verified.issuer.issuer}`),
        scopes: verified.scopes,
      };
    } catch (error) {
      if (!(error instanceof JwtRejected)) {
        throw error;
      }
      throw error.retryable
        ? new A2aError('UNAVAILABLE', `the token's issuer cannot be reached: ${error.message}`)
        : new A2aError('UNAUTHENTICATED', `invalid bearer token: ${error.message}`, {
            tokenRejection: error.reason,
          });
    }
  }

  private async issuersOf(tenantId: TenantId): Promise<IssuerRecord[]> {
    const cached = this.issuers.get(tenantId);
    if (cached && cached.until > Date.now()) {
      return cached.issuers;
    }
    const issuers = await this.store.list(tenantId);
    this.issuers.set(tenantId, { issuers, until: Date.now() + ISSUERS_TTL_MS });
    return issuers;
  }
}

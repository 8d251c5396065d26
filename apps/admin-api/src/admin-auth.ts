import type { AdminApiConfig } from '@lib/config';
import {
  credentialIdOf,
  hashSecret,
  principalIdOf,
  tenantIdOf,
  type CredentialId,
  type PrincipalId,
  type TenantId,
} from '@lib/tenancy';
import { Inject, Injectable } from '@nestjs/common';
import { timingSafeEqual } from 'node:crypto';
import type { Pool } from 'pg';
import { ADMIN_CONFIG, ADMIN_PG_POOL } from './tokens';

/** Who calls the admin API. */
export interface AdminPrincipal {
  principalId: PrincipalId;
  credentialId: CredentialId;
  /** The tenant a tenant admin key belongs to; null for platform admins. */
  tenantId: TenantId | null;
}

/** Missing, unknown, revoked or expired credentials: 401 with a Bearer challenge. */
export class AdminUnauthenticated extends Error {
  override readonly name = 'AdminUnauthenticated';
}

/** The principal of ADMIN_BOOTSTRAP_TOKEN. */
const BOOTSTRAP: AdminPrincipal = {
  principalId: principalIdOf('bootstrap-admin'),
  credentialId: credentialIdOf('bootstrap'),
  tenantId: null,
};

/**
 * Authenticates `Authorization: Bearer <secret>`: the configured bootstrap token, an admin key
 * (`ops.admin_keys`, platform-wide), or a tenant API key that carries `tenant:admin` (its tenant only). Not
 * cached: admin calls are rare, and a revocation then takes effect on the very next call.
 */
@Injectable()
export class AdminAuthenticator {
  private readonly bootstrap: Buffer | null;

  constructor(
    @Inject(ADMIN_CONFIG) config: AdminApiConfig,
    @Inject(ADMIN_PG_POOL) private readonly pool: Pool,
  ) {
    this.bootstrap = config.ADMIN_BOOTSTRAP_TOKEN
      ? Buffer.from(hashSecret(config.ADMIN_BOOTSTRAP_TOKEN), 'hex')
      : null;
  }

  async authenticate(authorization: string | undefined): Promise<AdminPrincipal> {
    const secret = /^Bearer ([\x21-\x7e]{1,512})$/.exec(authorization ?? '')?.[1];
    if (secret === undefined) {
      throw new AdminUnauthenticated('missing or malformed Authorization: Bearer <token> header');
    }
    const hash = hashSecret(secret);
    if (this.bootstrap && timingSafeEqual(this.bootstrap, Buffer.from(hash, 'hex'))) {
      return BOOTSTRAP;
    }
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
      values: [hash],
    });
    const row = result.rows[0];
    if (!row) {
      throw new AdminUnauthenticated('unknown, revoked or expired admin credential');
    }
    return {
      principalId: principalIdOf(row.principal_id),
      credentialId: credentialIdOf(row.credential_id),
      tenantId: row.tenant_id === null ? null : tenantIdOf(row.tenant_id),
    };
  }
}

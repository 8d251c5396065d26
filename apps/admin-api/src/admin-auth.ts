import type { AdminApiConfig } from '@lib/config';
import {
  credentialIdOf,
  CredentialStore,
  hashSecret,
  principalIdOf,
  type AdminGrant,
} from '@lib/tenancy';
import { Inject, Injectable } from '@nestjs/common';
import { timingSafeEqual } from 'node:crypto';
import { ADMIN_CONFIG } from './tokens';

/** Who calls the admin API: the tenant of a tenant admin key, null for platform admins. */
export type AdminPrincipal = AdminGrant;

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
    private readonly credentials: CredentialStore,
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
    const grant = await this.credentials.findAdminCredential(hash);
    if (!grant) {
      throw new AdminUnauthenticated('unknown, revoked or expired admin credential');
    }
    return grant;
  }
}

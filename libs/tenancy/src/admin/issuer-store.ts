import { isTenantScope, TENANT_SCOPES } from '@lib/authz';
import { isId, tenantIdOf, type TenantId } from '@lib/ids';
import type { Pool } from 'pg';
import { validateOidcIssuer, type OidcIssuer } from '../oidc';
import { InvalidInput, isForeignKeyViolation, NotFound } from './admin-errors';

/** An OIDC issuer a tenant trusts, under the id the tenant gave it. */
export interface IssuerRecord extends OidcIssuer {
  tenantId: TenantId;
  issuerId: string;
  createdAt: string;
}

interface IssuerRow {
  tenant_id: string;
  issuer_id: string;
  issuer: string;
  audience: string;
  jwks_url: string;
  principal_claim: string;
  scopes_claim: string;
  scope_map: Record<string, string[]>;
  created_at: Date;
}

const COLUMNS =
  'tenant_id, issuer_id, issuer, audience, jwks_url, principal_claim, scopes_claim, scope_map, created_at';

/**
 * `ops.oidc_issuers`: the identity providers whose bearer tokens a tenant's clients may present. Issuer URL,
 * audience, JWKS URL, the claim naming the principal and the one carrying scopes, and the map from the
 * provider's scopes to the platform's (a provider can grant nothing the map does not name).
 */
export class IssuerStore {
  constructor(
    private readonly pool: Pool,
    private readonly options: { allowInsecureLoopback: boolean },
  ) {}

  async put(
    tenantId: TenantId,
    issuerId: string,
    input: unknown,
  ): Promise<{ issuer: IssuerRecord; created: boolean }> {
    if (!isId(issuerId)) {
      throw new InvalidInput('invalid issuer id', [
        { field: 'issuerId', description: 'no "/", white space or control characters, 1 to 128' },
      ]);
    }
    const checked = validateOidcIssuer(input, this.options);
    if (!checked.ok) {
      throw new InvalidInput(
        `invalid issuer: ${checked.errors.map((e) => `${e.field}: ${e.description}`).join('; ')}`,
        checked.errors,
      );
    }
    const issuer = checked.issuer;
    const unknown = Object.entries(issuer.scopeMap).flatMap(([external, scopes]) =>
      scopes
        .filter((scope) => !isTenantScope(scope))
        .map((scope) => ({
          field: `scopeMap.${external}`,
          description: `${scope} is not a scope a tenant can grant (${TENANT_SCOPES.join(', ')})`,
        })),
    );
    if (unknown.length > 0) {
      throw new InvalidInput('invalid issuer: the scope map names unknown scopes', unknown);
    }
    const result = await this.pool
      .query<IssuerRow & { created: boolean }>(
        `INSERT INTO ops.oidc_issuers AS i
           (tenant_id, issuer_id, issuer, audience, jwks_url, principal_claim, scopes_claim, scope_map)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT (tenant_id, issuer_id) DO UPDATE
           SET issuer = EXCLUDED.issuer, audience = EXCLUDED.audience, jwks_url = EXCLUDED.jwks_url,
               principal_claim = EXCLUDED.principal_claim, scopes_claim = EXCLUDED.scopes_claim,
               scope_map = EXCLUDED.scope_map
         RETURNING ${COLUMNS.split(', ')
           .map((c) => `i.${c}`)
           .join(', ')}, (xmax = 0) AS created`,
        [
          tenantId,
          issuerId,
          issuer.issuer,
          issuer.audience,
          issuer.jwksUrl,
          issuer.principalClaim,
          issuer.scopesClaim,
          JSON.stringify(issuer.scopeMap),
        ],
      )
      .catch((error: unknown) => {
        if (isForeignKeyViolation(error)) {
          throw new NotFound(`no tenant ${tenantId}`);
        }
        if ((error as { code?: unknown }).code === '23505') {
          throw new InvalidInput('the tenant trusts this issuer under another id already', [
            { field: 'issuer', description: 'registered under another issuer id' },
          ]);
        }
        throw error;
      });
    const row = result.rows[0];
    if (!row) {
      throw new NotFound(`no tenant ${tenantId}`);
    }
    return { issuer: issuerOf(row), created: row.created };
  }

  async list(tenantId: TenantId): Promise<IssuerRecord[]> {
    const result = await this.pool.query<IssuerRow>(
      `SELECT ${COLUMNS} FROM ops.oidc_issuers WHERE tenant_id = $1 ORDER BY issuer_id`,
      [tenantId],
    );
    return result.rows.map(issuerOf);
  }

  async remove(tenantId: TenantId, issuerId: string): Promise<void> {
    const result = await this.pool.query(
      'DELETE FROM ops.oidc_issuers WHERE tenant_id = $1 AND issuer_id = $2',
      [tenantId, issuerId],
    );
    if ((result.rowCount ?? 0) === 0) {
      throw new NotFound(`no issuer ${issuerId} in tenant ${tenantId}`);
    }
  }
}

function issuerOf(row: IssuerRow): IssuerRecord {
  return {
    tenantId: tenantIdOf(row.tenant_id),
    issuerId: row.issuer_id,
    issuer: row.issuer,
    audience: row.audience,
    jwksUrl: row.jwks_url,
    principalClaim: row.principal_claim,
    scopesClaim: row.scopes_claim,
    scopeMap: row.scope_map,
    createdAt: row.created_at.toISOString(),
  };
}

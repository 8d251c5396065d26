import { JwtRejected } from './jwt.errors';
import type { OidcIssuer } from './oidc-issuer';

/**
 * Prefix of every principal authenticated by a bearer JWT. API-key principals are names an operator picks,
 * so the admin API must refuse this prefix for them; then the two kinds can never name the same principal.
 */
export const OIDC_PRINCIPAL_PREFIX = 'oidc:';

/**
 * The platform principal of a token's caller: `oidc:<issuer>#<subject>`. A subject is unique only within
 * its issuer (OIDC Core §2), so the issuer is part of the id; it is readable in task ownership and audit
 * rows, unlike a hash. The first `#` separates the two, since a valid issuer has no fragment
 * ({@link validateOidcIssuer}), which keeps the id unambiguous whatever the subject holds.
 */
export function oidcPrincipalId(issuer: string, subject: string): string {
  return `${OIDC_PRINCIPAL_PREFIX}${issuer}#${subject}`;
}

/**
 * The scopes a claim carries: a space-separated string (RFC 8693 §4.2, the `scope` of RFC 9068 access
 * tokens) or an array of strings (as some providers send `scp`); none when the claim is absent. Undefined
 * when it has any other shape, which makes the token malformed rather than scope-less.
 */
export function externalScopes(value: unknown): string[] | undefined {
  if (value === undefined) {
    return [];
  }
  if (typeof value === 'string') {
    return value.split(' ').filter((scope) => scope !== '');
  }
  if (Array.isArray(value) && value.every((scope) => typeof scope === 'string')) {
    return value;
  }
  return undefined;
}

/**
 * The platform scopes `external` grants through the issuer's map, each once, in the order first granted.
 * An external scope without an entry grants nothing.
 */
export function mapScopes(external: readonly string[], scopeMap: OidcIssuer['scopeMap']): string[] {
  const granted = new Set<string>();
  for (const scope of external) {
    // Own entries only: a token's `constructor` or `__proto__` scope must not reach Object.prototype.
    if (Object.hasOwn(scopeMap, scope)) {
      scopeMap[scope]?.forEach((platform) => granted.add(platform));
    }
  }
  return [...granted];
}

/**
 * The tenant's issuer definition that an (unverified) claims set names by `iss`, compared exactly (a tenant
 * defines each issuer once: `ops.oidc_issuers` is unique by tenant and issuer). Only configured issuers are
 * ever contacted: a token cannot point the platform at a URL of its choosing.
 */
export function selectIssuer(
  issuers: readonly OidcIssuer[],
  claims: Readonly<Record<string, unknown>>,
): OidcIssuer {
  const iss = claim(claims, 'iss');
  if (iss === undefined) {
    throw new JwtRejected('missing-claim', { claim: 'iss' });
  }
  if (typeof iss !== 'string') {
    throw new JwtRejected('malformed');
  }
  const chosen = issuers.find((candidate) => candidate.issuer === iss);
  if (chosen === undefined) {
    throw new JwtRejected('unknown-issuer');
  }
  return chosen;
}

/** A claim's value when the claims set has it as its own member (never one inherited from a prototype). */
export function claim(claims: Readonly<Record<string, unknown>>, name: string): unknown {
  return Object.hasOwn(claims, name) ? claims[name] : undefined;
}

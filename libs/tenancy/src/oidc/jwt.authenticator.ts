import { DESTINATION_REFUSED, guardedFetch, isLoopbackAddress, type GuardedFetch } from '@lib/push';
import {
  createRemoteJWKSet,
  customFetch,
  decodeJwt,
  errors,
  jwtVerify,
  type JWTPayload,
  type JWTVerifyGetKey,
  type JWTVerifyOptions,
  type RemoteJWKSet,
} from 'jose';
import { JwtRejected, type JwtRejectionReason } from './jwt.errors';
import { claim, externalScopes, mapScopes, oidcPrincipalId, selectIssuer } from './oidc-claims';
import type { OidcIssuer } from './oidc-issuer';

/** Asymmetric JWS algorithms (RFC 7518 §3.1, RFC 8037): `none` and the HMAC family cannot be configured. */
export const JWT_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
] as const;

export type JwtAlgorithm = (typeof JWT_ALGORITHMS)[number];

/** Knobs of {@link JwtAuthenticator}; every one has a default suited to production. */
export interface JwtAuthenticatorOptions {
  /** Leeway for `exp` and `nbf` against clocks that drift apart (default 30 s). */
  clockToleranceSeconds?: number;
  /** Accepted `alg` values (default RS256, PS256, ES256, EdDSA: what identity providers sign with). */
  algorithms?: readonly JwtAlgorithm[];
  /**
   * How long after a fetch of a JWK Set a token with a `kid` missing from it may trigger another fetch
   * (default 1 s). This is how a rotated-in key is found without a restart, and what bounds the fetches a
   * flood of tokens with made-up `kid`s can cause: one per JWKS URL per cooldown.
   */
  jwksCooldownMs?: number;
  /**
   * How long a fetched JWK Set is used before it is fetched again (default 10 min): the longest time a key
   * removed at the provider is still accepted.
   */
  jwksCacheMaxAgeMs?: number;
  /** Timeout of one JWK Set fetch (default 2 s): a slow provider delays a request at most this long. */
  jwksTimeoutMs?: number;
  /** Largest JWK Set accepted (default 256 KiB); a longer answer counts as no answer. */
  jwksBodyLimitBytes?: number;
  /**
   * Fetch JWK Sets from loopback addresses (default false): local identity providers and tests
   * (OIDC_ALLOW_INSECURE_LOOPBACK). No other reserved address is ever fetched from.
   */
  allowInsecureLoopback?: boolean;
  /** Longest token looked at (default 8 KiB, what an HTTP header or gRPC metadata entry carries well). */
  maxTokenLength?: number;
}

/** A caller authenticated by a bearer JWT. */
export interface VerifiedJwt {
  /** The tenant's issuer definition that vouched for the token. */
  issuer: OidcIssuer;
  /** `oidc:<issuer>#<subject>` ({@link oidcPrincipalId}): the owner of the caller's tasks. */
  principalId: string;
  /** Platform scopes granted through the issuer's scope map. */
  scopes: string[];
  /** The token's `exp`: how long the platform may treat the caller as authenticated. */
  expiresAt: Date;
  /** The issuer's id of the caller: the principal claim's value. */
  subject: string;
}

const DEFAULTS = {
  clockToleranceSeconds: 30,
  algorithms: ['RS256', 'PS256', 'ES256', 'EdDSA'],
  jwksCooldownMs: 1_000,
  jwksCacheMaxAgeMs: 10 * 60_000,
  jwksTimeoutMs: 2_000,
  jwksBodyLimitBytes: 256 * 1024,
  allowInsecureLoopback: false,
  maxTokenLength: 8_192,
} as const satisfies Required<JwtAuthenticatorOptions>;

/**
 * Verifies OIDC/JWT bearer tokens against the issuers a tenant trusts (DESIGN "Tenancy, identity"): the
 * exact issuer, the audience, `exp`/`nbf` with a small tolerance, and the signature against the issuer's
 * JWK Set, fetched over HTTP and cached per JWKS URL, so tenants naming the same provider share one cache
 * and one fetch schedule. Keys rotate without a restart: a token whose `kid` is not cached makes the set be
 * fetched again once the cooldown has passed, and the whole set is fetched again after its maximum age.
 *
 * Tenant admins choose JWKS URLs, so they are fetched through the webhook SSRF guard (`@lib/push`
 * `guardedFetch`): the host is resolved once and refused if any address is reserved (loopback only with
 * `allowInsecureLoopback`), the socket dials exactly the checked address, redirects are not followed, the
 * body is capped and one timeout covers the fetch.
 *
 * One instance per process; it holds no tenant state, the caller passes the tenant's issuers to each call.
 */
export class JwtAuthenticator {
  private readonly settings: Required<JwtAuthenticatorOptions>;
  private readonly keySets = new Map<string, RemoteJWKSet>();
  private readonly fetchJwks: GuardedFetch;

  constructor(options: JwtAuthenticatorOptions = {}) {
    this.settings = {
      clockToleranceSeconds: options.clockToleranceSeconds ?? DEFAULTS.clockToleranceSeconds,
      algorithms: options.algorithms ?? DEFAULTS.algorithms,
      jwksCooldownMs: options.jwksCooldownMs ?? DEFAULTS.jwksCooldownMs,
      jwksCacheMaxAgeMs: options.jwksCacheMaxAgeMs ?? DEFAULTS.jwksCacheMaxAgeMs,
      jwksTimeoutMs: options.jwksTimeoutMs ?? DEFAULTS.jwksTimeoutMs,
      jwksBodyLimitBytes: options.jwksBodyLimitBytes ?? DEFAULTS.jwksBodyLimitBytes,
      allowInsecureLoopback: options.allowInsecureLoopback ?? DEFAULTS.allowInsecureLoopback,
      maxTokenLength: options.maxTokenLength ?? DEFAULTS.maxTokenLength,
    };
    const { algorithms } = this.settings;
    const unknown = algorithms.filter(
      (alg) => !(JWT_ALGORITHMS as readonly string[]).includes(alg),
    );
    if (algorithms.length === 0 || unknown.length > 0) {
      throw new Error(
        `JWT algorithms must be a non-empty subset of ${JWT_ALGORITHMS.join(', ')}; got ${algorithms.join(', ')}`,
      );
    }
    for (const name of [
      'clockToleranceSeconds',
      'jwksCooldownMs',
      'jwksCacheMaxAgeMs',
      'jwksTimeoutMs',
      'jwksBodyLimitBytes',
      'maxTokenLength',
    ] as const) {
      const value = this.settings[name];
      if (!Number.isSafeInteger(value) || value < 0) {
        throw new Error(`${name} must be a non-negative integer, got ${value}`);
      }
    }
    this.fetchJwks = guardedFetch({
      allows: this.settings.allowInsecureLoopback
        ? (_host, address) => isLoopbackAddress(address)
        : () => false,
      bodyLimitBytes: this.settings.jwksBodyLimitBytes,
      timeoutMs: this.settings.jwksTimeoutMs,
    });
  }

  /**
   * Authenticates `token` (the credential of an `Authorization: Bearer` header) against `issuers`, the
   * definitions of the tenant the request is routed to. Throws {@link JwtRejected} for every token that
   * does not authenticate, including when the issuer's keys cannot be fetched (`jwks-unavailable`).
   */
  async verify(token: string, issuers: readonly OidcIssuer[]): Promise<VerifiedJwt> {
    const issuer = selectIssuer(issuers, this.unverifiedClaims(token));
    const options: JWTVerifyOptions = {
      issuer: issuer.issuer,
      audience: issuer.audience,
      algorithms: [...this.settings.algorithms],
      clockTolerance: this.settings.clockToleranceSeconds,
      requiredClaims: ['exp', issuer.principalClaim],
    };
    const keys = this.keysOf(issuer);
    let payload: JWTPayload;
    try {
      payload = await verifyWithAnyMatchingKey(token, keys, options);
    } catch (err) {
      throw rejection(err, issuer);
    }
    return verified(payload, issuer);
  }

  /** The claims of a token not verified yet: only to pick the issuer that must then verify it. */
  private unverifiedClaims(token: string): JWTPayload {
    if (token.length > this.settings.maxTokenLength) {
      throw new JwtRejected('malformed');
    }
    try {
      return decodeJwt(token);
    } catch {
      throw new JwtRejected('malformed');
    }
  }

  /** The issuer's keys: its JWKS URL's shared cache, with fetch failures told apart from unknown keys. */
  private keysOf(issuer: OidcIssuer): JWTVerifyGetKey {
    const url = new URL(issuer.jwksUrl);
    let keySet = this.keySets.get(url.href);
    if (keySet === undefined) {
      keySet = createRemoteJWKSet(url, {
        cooldownDuration: this.settings.jwksCooldownMs,
        cacheMaxAge: this.settings.jwksCacheMaxAgeMs,
        timeoutDuration: this.settings.jwksTimeoutMs,
        [customFetch]: this.fetchJwks,
      });
      this.keySets.set(url.href, keySet);
    }
    const keys = keySet;
    return async (header, token) => {
      try {
        return await keys(header, token);
      } catch (err) {
        if (
          err instanceof errors.JWKSNoMatchingKey ||
          err instanceof errors.JWKSMultipleMatchingKeys
        ) {
          throw err;
        }
        if ((err as { code?: unknown } | null)?.code === DESTINATION_REFUSED) {
          // The URL leads to a reserved address: the issuer's definition is wrong, not its provider down.
          throw new JwtRejected('jwks-refused', { issuer: issuer.issuer, cause: err });
        }
        // Unreachable, a non-200 answer, a timeout, or a document that is no usable JWK Set.
        throw new JwtRejected('jwks-unavailable', { issuer: issuer.issuer, cause: err });
      }
    };
  }
}

/**
 * `jwtVerify`, trying each published key that fits the header when several do (a token without `kid`
 * while the provider publishes two keys of its type during a rotation): the right key is the one that
 * verifies.
 */
async function verifyWithAnyMatchingKey(
  token: string,
  keys: JWTVerifyGetKey,
  options: JWTVerifyOptions,
): Promise<JWTPayload> {
  try {
    return (await jwtVerify(token, keys, options)).payload;
  } catch (err) {
    if (!(err instanceof errors.JWKSMultipleMatchingKeys)) {
      throw err;
    }
    for await (const key of err) {
      try {
        return (await jwtVerify(token, key, options)).payload;
      } catch (attempt) {
        if (!(attempt instanceof errors.JWSSignatureVerificationFailed)) {
          throw attempt;
        }
      }
    }
    throw new errors.JWSSignatureVerificationFailed();
  }
}

/** The caller a verified claims set names; its principal claim and scopes must have a usable shape. */
function verified(payload: JWTPayload, issuer: OidcIssuer): VerifiedJwt {
  const details = { issuer: issuer.issuer };
  const subject = claim(payload, issuer.principalClaim);
  if (typeof subject !== 'string' || subject === '') {
    throw new JwtRejected('missing-claim', { ...details, claim: issuer.principalClaim });
  }
  const scopes = externalScopes(claim(payload, issuer.scopesClaim));
  if (scopes === undefined) {
    throw new JwtRejected('malformed', details);
  }
  // `exp` is required and checked to be a number by jwtVerify; this only narrows the type.
  if (payload.exp === undefined) {
    throw new JwtRejected('missing-claim', { ...details, claim: 'exp' });
  }
  return {
    issuer,
    principalId: oidcPrincipalId(issuer.issuer, subject),
    scopes: mapScopes(scopes, issuer.scopeMap),
    expiresAt: new Date(payload.exp * 1000),
    subject,
  };
}

/** The {@link JwtRejected} for what `jwtVerify` threw against `issuer`. */
function rejection(err: unknown, issuer: OidcIssuer): JwtRejected {
  if (err instanceof JwtRejected) {
    return err;
  }
  const details = { issuer: issuer.issuer };
  if (!(err instanceof errors.JOSEError)) {
    // jose checks the key itself with plain errors (an RSA modulus under 2048 bits, a key of another
    // type): the published key cannot verify the token.
    return new JwtRejected('bad-signature', { ...details, cause: err });
  }
  if (err instanceof errors.JWTClaimValidationFailed || err instanceof errors.JWTExpired) {
    // No cause: it carries the claims set, which must not reach logs through this error.
    return new JwtRejected(claimReason(err.claim, err.reason), {
      ...details,
      ...(err.reason === 'missing' ? { claim: err.claim } : {}),
    });
  }
  return new JwtRejected(joseReason(err.code), details);
}

function claimReason(name: string, reason: string): JwtRejectionReason {
  if (reason === 'missing') {
    return 'missing-claim';
  }
  if (reason !== 'check_failed') {
    return 'malformed';
  }
  switch (name) {
    case 'exp':
      return 'expired';
    case 'nbf':
      return 'not-yet-valid';
    case 'aud':
      return 'wrong-audience';
    case 'iss':
      return 'unknown-issuer';
    default:
      return 'malformed';
  }
}

function joseReason(code: string): JwtRejectionReason {
  switch (code) {
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
      return 'unsupported-algorithm';
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
    case 'ERR_JWKS_NO_MATCHING_KEY':
      return 'bad-signature';
    default:
      // ERR_JWS_INVALID, ERR_JWT_INVALID, an unknown `crit` extension: the token's structure.
      return 'malformed';
  }
}

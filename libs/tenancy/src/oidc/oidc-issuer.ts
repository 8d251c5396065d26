import type { FieldViolation } from '@lib/a2a-protocol';

/**
 * An identity provider a tenant trusts for bearer JWTs (DESIGN "Tenancy, identity": OIDC/JWT tokens verified
 * against a tenant's issuer and JWKS). The agent card declares it as an `httpAuthSecurityScheme`
 * `{scheme: "Bearer", bearerFormat: "JWT"}` (spec digest §4.6).
 */
export interface OidcIssuer {
  /** The exact `iss` of its tokens: compared as a case-sensitive string, without URL normalisation. */
  readonly issuer: string;
  /** The `aud` value its tokens must carry for this platform. */
  readonly audience: string;
  /** Where its signing keys are published as a JWK Set (RFC 7517 §5). */
  readonly jwksUrl: string;
  /** The claim naming the caller (default {@link DEFAULT_PRINCIPAL_CLAIM}). */
  readonly principalClaim: string;
  /** The claim carrying the caller's scopes, a space-separated string or an array (default `scope`). */
  readonly scopesClaim: string;
  /**
   * External scope → platform scopes it grants. External scopes without an entry grant nothing, so an
   * identity provider can never mint platform scopes on its own.
   */
  readonly scopeMap: Readonly<Record<string, readonly string[]>>;
}

/** `sub` (OIDC Core §2): unique and never reassigned within an issuer. */
export const DEFAULT_PRINCIPAL_CLAIM = 'sub';
/** `scope` (RFC 8693 §4.2, RFC 9068 §2.2.3): the space-separated scopes of an access token. */
export const DEFAULT_SCOPES_CLAIM = 'scope';

/** What {@link validateOidcIssuer} may relax. */
export interface OidcIssuerValidationOptions {
  /**
   * Accept `http` issuer and JWKS URLs whose host is loopback (`localhost`, 127.0.0.0/8, `::1`): for local
   * development and tests only. Any other host needs `https`.
   */
  allowInsecureLoopback?: boolean;
}

/** The issuer definition as the platform stores it, or every field that is wrong with it. */
export type OidcIssuerValidation =
  | { ok: true; issuer: OidcIssuer }
  | { ok: false; errors: FieldViolation[] };

const MAX_URL_LENGTH = 2048;
const MAX_AUDIENCE_LENGTH = 1024;
const MAX_SCOPE_MAP_ENTRIES = 256;
const MAX_PLATFORM_SCOPES_PER_ENTRY = 64;
const MAX_NAME_LENGTH = 256;
/** The fields of an issuer definition (the admin API's OpenAPI document describes the same). */
export const OIDC_ISSUER_FIELDS: readonly string[] = [
  'issuer',
  'audience',
  'jwksUrl',
  'principalClaim',
  'scopesClaim',
  'scopeMap',
];
/** Printable ASCII without space: claim names, including collision-resistant URL names (RFC 7519 §4.2). */
const CLAIM_NAME = /^[\x21-\x7e]+$/;
/** RFC 6749 §3.3 `scope-token`. */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;
/** Claims that identify the token or its lifetime, never a caller or a scope: naming one is a mistake. */
const TOKEN_CLAIMS = new Set(['iss', 'aud', 'exp', 'nbf', 'iat', 'jti']);

/**
 * Checks an issuer definition submitted through the admin API and fills in the default claims. Every wrong
 * field is reported, not only the first, so an operator fixes the definition in one round. Strings are
 * stored as given, not normalised: `iss` and `aud` are compared exactly.
 */
export function validateOidcIssuer(
  input: unknown,
  options: OidcIssuerValidationOptions = {},
): OidcIssuerValidation {
  if (!isPlainObject(input)) {
    return { ok: false, errors: [{ field: '', description: 'must be a JSON object' }] };
  }
  const errors: FieldViolation[] = Object.keys(input)
    .filter((field) => !OIDC_ISSUER_FIELDS.includes(field))
    .map((field) => ({ field, description: 'is not a field of an issuer definition' }));
  const report = (field: string) => (description: string) => errors.push({ field, description });
  const insecureLoopback = options.allowInsecureLoopback === true;

  const issuer = checkUrl(input.issuer, { insecureLoopback, query: false }, report('issuer'));
  const jwksUrl = checkUrl(input.jwksUrl, { insecureLoopback, query: true }, report('jwksUrl'));
  const audience = checkAudience(input.audience, report('audience'));
  const principalClaim = checkClaimName(
    input.principalClaim ?? DEFAULT_PRINCIPAL_CLAIM,
    report('principalClaim'),
  );
  const scopesClaim = checkClaimName(
    input.scopesClaim ?? DEFAULT_SCOPES_CLAIM,
    report('scopesClaim'),
  );
  const scopeMap = checkScopeMap(input.scopeMap ?? {}, errors);

  if (
    errors.length > 0 ||
    issuer === undefined ||
    jwksUrl === undefined ||
    audience === undefined ||
    principalClaim === undefined ||
    scopesClaim === undefined ||
    scopeMap === undefined
  ) {
    return { ok: false, errors };
  }
  return { ok: true, issuer: { issuer, audience, jwksUrl, principalClaim, scopesClaim, scopeMap } };
}

type Report = (description: string) => void;

function checkUrl(
  value: unknown,
  rules: { insecureLoopback: boolean; query: boolean },
  report: Report,
): string | undefined {
  if (typeof value !== 'string' || value === '') {
    report('must be a non-empty string');
    return undefined;
  }
  if (value.length > MAX_URL_LENGTH || !/^[\x21-\x7e]+$/.test(value)) {
    report(`must be a URL of at most ${MAX_URL_LENGTH} printable ASCII characters without spaces`);
    return undefined;
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    report('must be an absolute URL');
    return undefined;
  }
  const problems: string[] = [];
  const secure = url.protocol === 'https:';
  const loopbackHttp =
    url.protocol === 'http:' && rules.insecureLoopback && isLoopback(url.hostname);
  if (!secure && !loopbackHttp) {
    problems.push('must use https');
  }
  if (url.username !== '' || url.password !== '') {
    problems.push('must not carry credentials');
  }
  // Checked on the raw string: the URL parser drops an empty `?` or `#`, but `iss` is compared as written.
  if (value.includes('#')) {
    problems.push('must not have a fragment');
  }
  if (!rules.query && value.includes('?')) {
    problems.push('must not have a query (OIDC Core §2)');
  }
  problems.forEach(report);
  return problems.length === 0 ? value : undefined;
}

function checkAudience(value: unknown, report: Report): string | undefined {
  if (typeof value !== 'string' || value === '') {
    report('must be a non-empty string');
    return undefined;
  }
  if (
    value.length > MAX_AUDIENCE_LENGTH ||
    !/^[\x20-\x7e]+$/.test(value) ||
    value.trim() !== value
  ) {
    report(
      `must be at most ${MAX_AUDIENCE_LENGTH} printable ASCII characters, without leading or trailing spaces`,
    );
    return undefined;
  }
  return value;
}

function checkClaimName(value: unknown, report: Report): string | undefined {
  if (typeof value !== 'string' || value.length > MAX_NAME_LENGTH || !CLAIM_NAME.test(value)) {
    report(
      `must be a claim name of 1 to ${MAX_NAME_LENGTH} printable ASCII characters without spaces`,
    );
    return undefined;
  }
  if (TOKEN_CLAIMS.has(value)) {
    report(`must not be "${value}", which describes the token, not the caller`);
    return undefined;
  }
  return value;
}

function checkScopeMap(
  value: unknown,
  errors: FieldViolation[],
): Record<string, readonly string[]> | undefined {
  if (!isPlainObject(value)) {
    errors.push({ field: 'scopeMap', description: 'must be an object of scope → platform scopes' });
    return undefined;
  }
  const entries = Object.entries(value);
  if (entries.length > MAX_SCOPE_MAP_ENTRIES) {
    errors.push({
      field: 'scopeMap',
      description: `must have at most ${MAX_SCOPE_MAP_ENTRIES} entries`,
    });
    return undefined;
  }
  const checked: [string, string[]][] = [];
  for (const [scope, granted] of entries) {
    const field = `scopeMap.${scope}`;
    if (scope.length > MAX_NAME_LENGTH || !SCOPE_TOKEN.test(scope)) {
      errors.push({
        field,
        description: `the key must be a scope token (RFC 6749 §3.3) of at most ${MAX_NAME_LENGTH} characters`,
      });
    } else if (isPlatformScopeList(granted)) {
      checked.push([scope, [...granted]]);
    } else {
      errors.push({
        field,
        description: `must be an array of at most ${MAX_PLATFORM_SCOPES_PER_ENTRY} non-empty platform scopes`,
      });
    }
  }
  // fromEntries defines own properties, so a `__proto__` scope stays a plain entry.
  return checked.length === entries.length ? Object.fromEntries(checked) : undefined;
}

function isPlatformScopeList(value: unknown): value is string[] {
  return (
    Array.isArray(value) &&
    value.length <= MAX_PLATFORM_SCOPES_PER_ENTRY &&
    value.every(
      (scope) => typeof scope === 'string' && scope !== '' && scope.length <= MAX_NAME_LENGTH,
    )
  );
}

/** Loopback hosts as the WHATWG URL parser writes them: IPv4 in dotted-quad form, IPv6 in brackets. */
function isLoopback(hostname: string): boolean {
  return (
    hostname === 'localhost' ||
    hostname === '[::1]' ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname)
  );
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Why a bearer JWT was refused. Registered names (house style: names are contracts): the ingress maps them
 * onto the A2A catalogue, audit records keep them, and tests assert them. Never rename one; add a new one.
 */
export const JWT_REJECTION_REASONS = [
  /** Not a compact JWS with a JSON claims set, too long, or a claim of the wrong type. */
  'malformed',
  /** Its `iss` is none of the tenant's configured issuers (compared exactly). */
  'unknown-issuer',
  /** Its `exp` lies in the past by more than the clock tolerance. */
  'expired',
  /** Its `nbf` lies in the future by more than the clock tolerance. */
  'not-yet-valid',
  /** Its `aud` does not name the issuer definition's audience. */
  'wrong-audience',
  /** No key of the issuer's JWK Set verifies its signature (unknown `kid`, another key, or an unusable key). */
  'bad-signature',
  /** Its `alg` is not allowed: `none`, any HMAC, or one the authenticator was not configured with. */
  'unsupported-algorithm',
  /** It lacks `iss`, `exp` or the principal claim (or the principal claim is not a non-empty string). */
  'missing-claim',
  /** The issuer's JWK Set could not be fetched or used: a fault of the identity provider, not of the token. */
  'jwks-unavailable',
  /**
   * The issuer's JWKS URL leads to an address the platform does not fetch from (loopback, private, link-local,
   * cloud metadata, …): its definition must change, so retrying the token is pointless.
   */
  'jwks-refused',
] as const;

export type JwtRejectionReason = (typeof JWT_REJECTION_REASONS)[number];

/** What a client may read about each rejection: nothing from the token, nothing of the tenant's setup. */
const CLIENT_MESSAGES: Readonly<Record<JwtRejectionReason, string>> = {
  malformed: 'the bearer token is not a well-formed JWT',
  'unknown-issuer': 'the bearer token comes from an issuer this tenant does not trust',
  expired: 'the bearer token has expired',
  'not-yet-valid': 'the bearer token is not valid yet',
  'wrong-audience': 'the bearer token was not issued for this service',
  'bad-signature': "the bearer token's signature does not verify against its issuer's keys",
  'unsupported-algorithm': "the bearer token's signing algorithm is not accepted",
  'missing-claim': 'the bearer token lacks a required claim',
  'jwks-unavailable': "the token issuer's signing keys cannot be fetched at the moment",
  'jwks-refused':
    "the token issuer's signing keys are not published where the platform may fetch them",
};

/** Details for operators and logs; none of them comes from an unverified token except a claim's name. */
export interface JwtRejectionDetails {
  /** The configured issuer the token was checked against, once one was selected. */
  issuer?: string;
  /** The claim that was missing or unusable (a registered or configured claim name). */
  claim?: string;
  /** The underlying fault, kept only where it concerns the issuer's keys, never the token's claims. */
  cause?: unknown;
}

/**
 * A bearer JWT that does not authenticate its caller. `message` is safe to return to the client: it never
 * echoes the token or its claim values, and of the tenant's configuration at most the name of a claim the
 * token lacks. Identify it by `reason`, not `instanceof`.
 */
export class JwtRejected extends Error {
  override readonly name = 'JwtRejected';
  /** The configured issuer the token was checked against, when one was selected. */
  readonly issuer: string | undefined;

  constructor(
    readonly reason: JwtRejectionReason,
    details: JwtRejectionDetails = {},
  ) {
    const claim = details.claim === undefined ? '' : ` ("${details.claim}")`;
    super(
      `${CLIENT_MESSAGES[reason]}${claim}`,
      details.cause === undefined ? undefined : { cause: details.cause },
    );
    this.issuer = details.issuer;
  }

  /**
   * Whether the same token may succeed later (principle 4): only when the identity provider's keys were
   * unreachable. The ingress answers that with UNAVAILABLE rather than UNAUTHENTICATED, so that a client does
   * not throw away a good token.
   */
  get retryable(): boolean {
    return this.reason === 'jwks-unavailable';
  }
}

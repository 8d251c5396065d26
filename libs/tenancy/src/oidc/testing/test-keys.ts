import {
  calculateJwkThumbprint,
  exportJWK,
  generateKeyPair,
  SignJWT,
  UnsecuredJWT,
  type CryptoKey,
  type JWK,
  type JWTPayload,
} from 'jose';

/** The algorithms test identity providers sign with: the authenticator's defaults. */
export type TestKeyAlgorithm = 'RS256' | 'PS256' | 'ES256' | 'EdDSA';

/** A signing key of a test identity provider, with the public JWK its JWKS server publishes. */
export interface TestSigningKey {
  alg: TestKeyAlgorithm;
  kid: string;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  /** `{kty, ..., kid, alg, use: "sig"}`, as providers publish keys. */
  publicJwk: JWK;
}

/** A fresh key pair; its `kid` is the RFC 7638 thumbprint unless the test names one (to reuse a kid). */
export async function testSigningKey(
  alg: TestKeyAlgorithm = 'ES256',
  kid?: string,
): Promise<TestSigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg);
  const jwk = await exportJWK(publicKey);
  const id = kid ?? (await calculateJwkThumbprint(jwk));
  return { alg, kid: id, privateKey, publicKey, publicJwk: { ...jwk, kid: id, alg, use: 'sig' } };
}

/** How {@link mintToken} builds the token around the claims a test gives. */
export interface MintOptions {
  /** `exp` as seconds from now (default 300); `null` leaves `exp` out. A claim `exp` wins over it. */
  expiresInSeconds?: number | null;
  /** The header's `kid` (default the key's); `null` leaves it out. */
  kid?: string | null;
}

/**
 * A JWT signed with `key` with header `{alg, kid, typ: "JWT"}`, `iat` now and `exp` in five minutes unless
 * told otherwise; `claims` (iss, aud, sub, scope, ...) override those.
 */
export async function mintToken(
  key: TestSigningKey,
  claims: JWTPayload,
  options: MintOptions = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const expiresIn = options.expiresInSeconds === undefined ? 300 : options.expiresInSeconds;
  const kid = options.kid === undefined ? key.kid : options.kid;
  const lifetime = expiresIn === null ? {} : { exp: now + expiresIn };
  return new SignJWT({ iat: now, ...lifetime, ...claims })
    .setProtectedHeader({ alg: key.alg, typ: 'JWT', ...(kid === null ? {} : { kid }) })
    .sign(key.privateKey);
}

/** An unsecured JWT (RFC 7519 §6, header `{"alg":"none"}`, empty signature) that no verifier may accept. */
export function unsecuredToken(claims: JWTPayload): string {
  return new UnsecuredJWT(claims).encode();
}

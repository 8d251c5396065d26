import { canonicalize } from '@lib/a2a-protocol';
import { createHash, createPrivateKey, createPublicKey, sign, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** JWS algorithms of the platform's signatures: ES256 for EC P-256 keys, RS256 for RSA keys (RFC 7518 §3). */
export type SigningAlgorithm = 'ES256' | 'RS256';

/** A public signing key as a JWK Set publishes it (RFC 7517 §4). */
export interface PublishedJwk {
  kty: 'EC' | 'RSA';
  kid: string;
  alg: SigningAlgorithm;
  use: 'sig';
  crv?: string;
  x?: string;
  y?: string;
  n?: string;
  e?: string;
}

/** A private key that signs agent cards and webhook bodies, with its public half. */
export interface SigningKey {
  algorithm: SigningAlgorithm;
  /** RFC 7638 JWK thumbprint (SHA-256, base64url) of the public key. */
  kid: string;
  privateKey: KeyObject;
  jwk: PublishedJwk;
}

/** Checks that `privateKey` can make ES256 or RS256 signatures and derives its thumbprint and public JWK. */
export function signingKey(privateKey: KeyObject): SigningKey {
  if (privateKey.type !== 'private') {
    throw new Error('the signing key must be a private key');
  }
  const algorithm = algorithmOf(privateKey);
  const jwk = createPublicKey(privateKey).export({ format: 'jwk' });
  // RFC 7638 §3.2: the required members only; JCS gives their lexicographic order without whitespace.
  const required =
    algorithm === 'ES256'
      ? { crv: jwk.crv, kty: 'EC' as const, x: jwk.x, y: jwk.y }
      : { e: jwk.e, kty: 'RSA' as const, n: jwk.n };
  const kid = createHash('sha256').update(canonicalize(required)).digest('base64url');
  return { algorithm, kid, privateKey, jwk: { ...required, kid, alg: algorithm, use: 'sig' } };
}

/**
 * Reads the PEM private key (PKCS#8, or SEC1 / PKCS#1) in `file`; undefined when no file is configured, so
 * that each process decides what it does without one. Fails, naming the file, when it cannot be read or holds
 * a key that cannot sign.
 */
export function loadSigningKey(file: string | undefined): SigningKey | undefined {
  if (file === undefined || file === '') {
    return undefined;
  }
  try {
    return signingKey(createPrivateKey(readFileSync(file)));
  } catch (err) {
    throw new Error(`cannot load the signing key in ${file}: ${(err as Error).message}`, {
      cause: err,
    });
  }
}

/**
 * The JWS signature of `signingInput` (RFC 7515 §5.1 step 5): for ES256 the IEEE P1363 `r || s` form JWS
 * requires (RFC 7518 §3.4), not DER. ES256 signatures are randomised, so two calls give different bytes.
 */
export function jwsSignature(signingInput: Buffer, key: SigningKey): Buffer {
  return key.algorithm === 'ES256'
    ? sign('sha256', signingInput, { key: key.privateKey, dsaEncoding: 'ieee-p1363' })
    : sign('sha256', signingInput, key.privateKey);
}

function algorithmOf(key: KeyObject): SigningAlgorithm {
  const details = key.asymmetricKeyDetails;
  if (key.asymmetricKeyType === 'ec' && details?.namedCurve === 'prime256v1') {
    return 'ES256';
  }
  if (key.asymmetricKeyType === 'rsa' && (details?.modulusLength ?? 0) >= 2048) {
    return 'RS256';
  }
  const kind = [key.asymmetricKeyType, details?.namedCurve ?? details?.modulusLength]
    .filter((part) => part !== undefined)
    .join(' ');
  throw new Error(
    `signatures are made with an EC P-256 (ES256) or RSA >= 2048-bit (RS256) key, not ${kind}`,
  );
}

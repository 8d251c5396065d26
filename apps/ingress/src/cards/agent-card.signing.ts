import { agentCardProtoJson, canonicalize, type AgentCard } from '@lib/a2a-protocol';
import { createHash, createPublicKey, sign, type KeyObject } from 'node:crypto';

/** Where the platform publishes the public keys of its card signatures (RFC 7517 JWK Set). */
export const JWKS_PATH = '/.well-known/jwks.json';

/** JWS algorithms of card signatures: ES256 for EC P-256 keys, RS256 for RSA keys (RFC 7518 §3). */
export type CardSigningAlgorithm = 'ES256' | 'RS256';

/** A public signing key as the JWKS publishes it (RFC 7517 §4). */
export interface PublishedJwk {
  kty: 'EC' | 'RSA';
  kid: string;
  alg: CardSigningAlgorithm;
  use: 'sig';
  crv?: string;
  x?: string;
  y?: string;
  n?: string;
  e?: string;
}

/** The key that signs agent cards, with its public half. */
export interface CardSigningKey {
  algorithm: CardSigningAlgorithm;
  /** RFC 7638 JWK thumbprint (SHA-256, base64url) of the public key. */
  kid: string;
  privateKey: KeyObject;
  jwk: PublishedJwk;
}

/** Checks that `privateKey` can sign cards and derives its algorithm, thumbprint and public JWK. */
export function cardSigningKey(privateKey: KeyObject): CardSigningKey {
  if (privateKey.type !== 'private') {
    throw new Error('the agent card signing key must be a private key');
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

function algorithmOf(key: KeyObject): CardSigningAlgorithm {
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
    `agent cards are signed with an EC P-256 (ES256) or RSA >= 2048-bit (RS256) key, not ${kind}`,
  );
}

/** A card ready to sign: its ProtoJSON with presence honoured, without `signatures`, and the JWS payload. */
export interface UnsignedCard {
  card: AgentCard;
  /** JCS (RFC 8785) of `card`: the bytes the signature covers (spec digest §10.12 steps 1–3). */
  payload: Buffer;
}

/** Takes the card's ProtoJSON with presence honoured, drops `signatures` and canonicalises the rest. */
export function unsignedCard(card: AgentCard): UnsignedCard {
  const { signatures: _signatures, ...unsigned } = agentCardProtoJson(card);
  return { card: unsigned, payload: Buffer.from(canonicalize(unsigned), 'utf8') };
}

/**
 * Signs a card (spec digest §10.12 steps 4–5): returns it with one detached-payload JWS in `signatures`
 * (RFC 7515 Appendix F), protected header `{alg, kid, typ: "JOSE", jku}`. ES256 signatures are the IEEE P1363
 * `r || s` form JWS requires (RFC 7518 §3.4) and are randomised: sign once, serve many times.
 */
export function signAgentCard(
  unsigned: UnsignedCard,
  key: CardSigningKey,
  jwksUrl: string,
): AgentCard {
  const header = { alg: key.algorithm, kid: key.kid, typ: 'JOSE', jku: jwksUrl };
  const protectedHeader = Buffer.from(JSON.stringify(header), 'utf8').toString('base64url');
  const input = Buffer.from(
    `${protectedHeader}.${unsigned.payload.toString('base64url')}`,
    'ascii',
  );
  const signature =
    key.algorithm === 'ES256'
      ? sign('sha256', input, { key: key.privateKey, dsaEncoding: 'ieee-p1363' })
      : sign('sha256', input, key.privateKey);
  return {
    ...unsigned.card,
    signatures: [{ protected: protectedHeader, signature: signature.toString('base64url') }],
  };
}

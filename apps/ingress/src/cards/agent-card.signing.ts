import { agentCardProtoJson, canonicalize, type AgentCard } from '@lib/a2a-protocol';
import { detachedJws, type SigningKey } from '@lib/signing';

/** Where the platform publishes the public keys of its card signatures (RFC 7517 JWK Set). */
export const JWKS_PATH = '/.well-known/jwks.json';

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
 * (RFC 7515 Appendix F), protected header `{alg, kid, typ: "JOSE", jku}`. ES256 signatures are randomised:
 * sign once, serve many times.
 */
export function signAgentCard(unsigned: UnsignedCard, key: SigningKey, jwksUrl: string): AgentCard {
  return { ...unsigned.card, signatures: [detachedJws(unsigned.payload, key, { jku: jwksUrl })] };
}

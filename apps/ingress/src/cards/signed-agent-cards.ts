import type { AgentCard } from '@lib/a2a-protocol';
import { Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { buildAgentCard, buildExtendedAgentCard, type PublicOrigin } from './agent-card.builder';
import { AgentCardKeys } from './agent-card.keys';
import { JWKS_PATH, signAgentCard, unsignedCard } from './agent-card.signing';
import { PublicOrigins, type RequestOrigin } from './agent-cards';
import type { HostedAgent } from './agent-registry';
import { cacheableDocument, type CacheableDocument } from './http-caching';

/** A signed card, with the exact bytes served for it and their validators. */
export interface SignedCard extends CacheableDocument {
  card: AgentCard;
}

/**
 * Bounds the signed cards kept. Without PUBLIC_BASE_URL every distinct Host a client sends makes a different
 * card, so the number must not grow with the requests.
 */
const MAX_SIGNED_CARDS = 1_000;

/**
 * Signed public and extended cards (spec digest §10.11, §10.12). A card is signed once per content (the
 * agent's profile and the origin its URLs name) and kept, so repeated requests get the same bytes and ETag
 * although ES256 signatures are randomised. Last-Modified is when this process first signed that content: it
 * moves forward whenever the profile (or the key or origin) changes, and never goes back.
 */
@Injectable()
export class SignedAgentCards {
  /** Least recently used first. */
  private readonly signed = new Map<string, SignedCard>();

  constructor(
    private readonly keys: AgentCardKeys,
    private readonly origins: PublicOrigins,
  ) {}

  publicCard(agent: HostedAgent, request: RequestOrigin | undefined): SignedCard {
    const origin = this.origins.resolve(request);
    return this.sign(buildAgentCard(agent, origin), origin);
  }

  /** `null` when the agent declares an extended card but configured none. */
  extendedCard(agent: HostedAgent, request: RequestOrigin | undefined): SignedCard | null {
    const origin = this.origins.resolve(request);
    const card = buildExtendedAgentCard(agent, origin);
    return card ? this.sign(card, origin) : null;
  }

  private sign(card: AgentCard, origin: PublicOrigin): SignedCard {
    const jwksUrl = `${origin.baseUrl}${JWKS_PATH}`;
    const unsigned = unsignedCard(card);
    const key = createHash('sha256')
      .update(jwksUrl)
      .update('\n')
      .update(unsigned.payload)
      .digest('base64url');
    const known = this.signed.get(key);
    if (known) {
      this.signed.delete(key);
      this.signed.set(key, known);
      return known;
    }
    const signedCard = signAgentCard(unsigned, this.keys.current, jwksUrl);
    const entry = { card: signedCard, ...cacheableDocument(signedCard, new Date()) };
    this.signed.set(key, entry);
    if (this.signed.size > MAX_SIGNED_CARDS) {
      const [oldest] = this.signed.keys();
      if (oldest !== undefined) {
        this.signed.delete(oldest);
      }
    }
    return entry;
  }
}

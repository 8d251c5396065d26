import type { IngressConfig } from '@lib/config';
import { loadSigningKey, signingKey, type SigningKey } from '@lib/signing';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { generateKeyPairSync } from 'node:crypto';
import { INGRESS_CONFIG } from '../tokens';
import { cacheableDocument, type CacheableDocument } from './http-caching';

/**
 * The key that signs agent cards (spec digest §10.12) and the JWK Set that publishes it. The key comes from
 * AGENT_CARD_SIGNING_KEY_FILE; without one, an EC P-256 key is generated at start-up, which only suits a single
 * replica: its signatures stop verifying when the process restarts, and replicas disagree on the key.
 */
@Injectable()
export class AgentCardKeys {
  readonly current: SigningKey;
  /** `{"keys": [...]}` served at JWKS_PATH; Last-Modified is when the key was loaded. */
  readonly jwks: CacheableDocument;

  constructor(@Inject(INGRESS_CONFIG) config: IngressConfig) {
    const configured = loadSigningKey(config.AGENT_CARD_SIGNING_KEY_FILE);
    if (configured) {
      this.current = configured;
    } else {
      this.current = signingKey(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey);
      new Logger(AgentCardKeys.name).warn(
        `AGENT_CARD_SIGNING_KEY_FILE is not set: agent cards are signed with an ephemeral key ` +
          `(kid ${this.current.kid}) that changes on every start; configure a key for production`,
      );
    }
    this.jwks = cacheableDocument({ keys: [this.current.jwk] }, new Date());
  }
}

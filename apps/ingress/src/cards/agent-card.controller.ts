import type { IngressConfig } from '@lib/config';
import type { AgentRef } from '@lib/tenancy';
import { Controller, Get, Inject, Param, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { agentRefOf } from '../gateway/agent-route';
import { INGRESS_CONFIG } from '../tokens';
import { AgentCardKeys } from './agent-card.keys';
import { JWKS_PATH } from './agent-card.signing';
import { AgentRegistry } from './agent-registry';
import { sendCacheable } from './http-caching';
import { SignedAgentCards } from './signed-agent-cards';

/** RFC 7517 §8.5. */
const JWK_SET_CONTENT_TYPE = 'application/jwk-set+json';
const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * Public, signed agent cards (spec digest §10.11, §10.12): one per hosted agent, the default one at the root,
 * and the JWK Set their signatures verify against. All are cacheable and revalidated by ETag or date.
 *
 * No `Vary: Host`, although without PUBLIC_BASE_URL the card's URLs come from the request's Host: Vary names
 * request fields other than the target URI (RFC 9110 §12.5.5), and the Host is part of the target URI that
 * keys every cache entry (RFC 9111 §2). Nothing else of the request (no X-Forwarded-*) shapes the card.
 */
@Controller()
export class AgentCardController {
  /** DEFAULT_AGENT, whose card is the one at the root; null when it names no agent. */
  private readonly defaultAgent: AgentRef | null;

  constructor(
    private readonly agents: AgentRegistry,
    private readonly cards: SignedAgentCards,
    private readonly keys: AgentCardKeys,
    @Inject(INGRESS_CONFIG) private readonly config: IngressConfig,
  ) {
    const [tenantId = '', agentId = ''] = config.DEFAULT_AGENT.split('/');
    this.defaultAgent = agentRefOf({ tenantId, agentId });
  }

  @Get('.well-known/agent-card.json')
  async defaultCard(@Req() req: Request, @Res() res: Response): Promise<void> {
    await this.serve(this.defaultAgent, req, res);
  }

  @Get('agents/:tenant/:agent/.well-known/agent-card.json')
  async agentCard(
    @Param('tenant') tenantId: string,
    @Param('agent') agentId: string,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    await this.serve(agentRefOf({ tenantId, agentId }), req, res);
  }

  @Get(JWKS_PATH.slice(1))
  jwks(@Req() req: Request, @Res() res: Response): void {
    sendCacheable(req, res, this.keys.jwks, this.caching(JWK_SET_CONTENT_TYPE));
  }

  /** `ref`: the agent the path names, null when its ids could name none. */
  private async serve(ref: AgentRef | null, req: Request, res: Response): Promise<void> {
    const agent = ref ? await this.agents.find(ref) : null;
    // A suspended tenant's agents are not advertised.
    if (!agent || agent.tenantStatus !== 'active') {
      res.status(404).json({ error: { code: 404, status: 'NOT_FOUND', message: 'no such agent' } });
      return;
    }
    const card = this.cards.publicCard(agent, { protocol: req.protocol, host: req.get('host') });
    sendCacheable(req, res, card, this.caching(JSON_CONTENT_TYPE));
  }

  private caching(contentType: string): {
    contentType: string;
    maxAgeSeconds: number;
    now: Date;
  } {
    return { contentType, maxAgeSeconds: this.config.AGENT_CARD_MAX_AGE_S, now: new Date() };
  }
}

import type { IngressConfig } from '@lib/config';
import { Controller, Get, Inject, Param, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { INGRESS_CONFIG } from '../tokens';
import { buildAgentCard } from './agent-card.builder';
import { PublicOrigins } from './agent-cards';
import { AgentRegistry } from './agent-registry';

/** Public agent cards (spec digest §10.11): one per hosted agent, plus the default one at the root. */
@Controller()
export class AgentCardController {
  constructor(
    private readonly agents: AgentRegistry,
    private readonly origins: PublicOrigins,
    @Inject(INGRESS_CONFIG) private readonly config: IngressConfig,
  ) {}

  @Get('.well-known/agent-card.json')
  async defaultCard(@Req() req: Request, @Res() res: Response): Promise<void> {
    const [tenantId = '', agentId = ''] = this.config.DEFAULT_AGENT.split('/');
    await this.serve(tenantId, agentId, req, res);
  }

  @Get('agents/:tenant/:agent/.well-known/agent-card.json')
  async agentCard(
    @Param('tenant') tenantId: string,
    @Param('agent') agentId: string,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    await this.serve(tenantId, agentId, req, res);
  }

  private async serve(
    tenantId: string,
    agentId: string,
    req: Request,
    res: Response,
  ): Promise<void> {
    const agent = await this.agents.find(tenantId, agentId);
    if (!agent) {
      res.status(404).json({ error: { code: 404, status: 'NOT_FOUND', message: 'no such agent' } });
      return;
    }
    const origin = this.origins.resolve({ protocol: req.protocol, host: req.get('host') });
    res.setHeader('Cache-Control', 'public, max-age=60');
    res.status(200).json(buildAgentCard(agent, origin));
  }
}

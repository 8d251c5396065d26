import { AgentStore } from '@lib/tenancy';
import { Controller, Get, Inject, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { Pool } from 'pg';
import { A2aAudit } from '../auth/a2a-audit';
import { API_KEY_HEADER, ApiKeyAuthenticator } from '../auth/api-key.authenticator';
import { PublicOrigins } from '../cards/agent-cards';
import { writeJson } from '../http/write-json';
import { INGRESS_PG_POOL } from '../tokens';

/** One agent of the directory: enough to pick it and fetch its card. */
export interface DirectoryEntry {
  tenant: string;
  agent: string;
  name: string;
  description: string;
  /** The agent's public card (`/agents/{tenant}/{agent}/.well-known/agent-card.json`), absolute. */
  cardUrl: string;
}

const UNAUTHENTICATED = {
  error: { code: 401, status: 'UNAUTHENTICATED', message: `a valid ${API_KEY_HEADER} is required` },
};

/**
 * `GET /a2a/agents`: the agents of the caller's own tenant, for a client (the console's playground) that holds
 * an API key and no agent URL yet. The key names its tenant and is checked by the A2A routes' authenticator; a
 * key of no active tenant, revoked or expired, gets 401, so nothing is revealed to a stranger, and the refusal
 * is audited as the A2A routes' are. Read-only, no scope needed: the same cards are public.
 */
@Controller()
export class AgentDirectoryController {
  private readonly agents: AgentStore;

  constructor(
    @Inject(INGRESS_PG_POOL) pool: Pool,
    private readonly auth: ApiKeyAuthenticator,
    private readonly audit: A2aAudit,
    private readonly origins: PublicOrigins,
  ) {
    this.agents = new AgentStore(pool);
  }

  @Get('a2a/agents')
  async list(@Req() req: Request, @Res() res: Response): Promise<void> {
    const authentication = await this.auth.authenticateAnywhere(req.header(API_KEY_HEADER));
    if ('refusal' in authentication) {
      await this.audit.refusedDirectory(
        {
          binding: 'HTTP+JSON',
          sourceAddress: req.socket.remoteAddress,
          traceparent: req.header('traceparent'),
        },
        authentication.tenantId,
        authentication.refusal,
      );
      writeJson(res, 401, { 'Cache-Control': 'no-store' }, UNAUTHENTICATED);
      return;
    }
    const { baseUrl } = this.origins.resolve({ protocol: req.protocol, host: req.get('host') });
    const hosted = await Promise.all(
      authentication.identities.map((identity) => this.agents.list(identity.tenantId)),
    );
    const agents: DirectoryEntry[] = hosted.flat().map(({ tenantId, agentId, card }) => ({
      tenant: tenantId,
      agent: agentId,
      name: typeof card.name === 'string' ? card.name : agentId,
      description: typeof card.description === 'string' ? card.description : '',
      cardUrl: `${baseUrl}/agents/${encodeURIComponent(tenantId)}/${encodeURIComponent(
        agentId,
      )}/.well-known/agent-card.json`,
    }));
    writeJson(res, 200, { 'Cache-Control': 'no-store' }, { agents });
  }
}

import { hashSecret } from '@lib/tenancy';
import { Controller, Get, Inject, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { Pool } from 'pg';
import { API_KEY_HEADER } from '../auth/api-key.authenticator';
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
 * an API key and no agent URL yet. The key names its tenant; a key of no active tenant, revoked or expired,
 * gets 401, so nothing is revealed to a stranger. Read-only, no scope needed: the same cards are public.
 */
@Controller()
export class AgentDirectoryController {
  constructor(
    @Inject(INGRESS_PG_POOL) private readonly pool: Pool,
    private readonly origins: PublicOrigins,
  ) {}

  @Get('a2a/agents')
  async list(@Req() req: Request, @Res() res: Response): Promise<void> {
    const apiKey = req.header(API_KEY_HEADER);
    const tenants = apiKey ? await this.tenantsOf(apiKey) : [];
    if (tenants.length === 0) {
      writeJson(res, 401, { 'Cache-Control': 'no-store' }, UNAUTHENTICATED);
      return;
    }
    const { baseUrl } = this.origins.resolve({ protocol: req.protocol, host: req.get('host') });
    const result = await this.pool.query<{
      tenant_id: string;
      agent_id: string;
      name: unknown;
      description: unknown;
    }>({
      name: 'agents.directory',
      text: `SELECT tenant_id, agent_id, profile->'name' AS name, profile->'description' AS description
               FROM ops.agents WHERE tenant_id = ANY($1::text[]) ORDER BY tenant_id, agent_id`,
      values: [tenants],
    });
    const agents: DirectoryEntry[] = result.rows.map((row) => ({
      tenant: row.tenant_id,
      agent: row.agent_id,
      name: typeof row.name === 'string' ? row.name : row.agent_id,
      description: typeof row.description === 'string' ? row.description : '',
      cardUrl: `${baseUrl}/agents/${encodeURIComponent(row.tenant_id)}/${encodeURIComponent(
        row.agent_id,
      )}/.well-known/agent-card.json`,
    }));
    writeJson(res, 200, { 'Cache-Control': 'no-store' }, { agents });
  }

  /** The active tenants the key is a live key of (one, unless the same secret was registered twice). */
  private async tenantsOf(apiKey: string): Promise<string[]> {
    const result = await this.pool.query<{ tenant_id: string }>({
      name: 'api-keys.tenants',
      text: `SELECT k.tenant_id FROM ops.api_keys k JOIN ops.tenants t ON t.tenant_id = k.tenant_id
              WHERE k.key_hash = $1 AND k.revoked_at IS NULL
                AND (k.expires_at IS NULL OR k.expires_at > now()) AND t.status = 'active'`,
      values: [hashSecret(apiKey)],
    });
    return result.rows.map((row) => row.tenant_id);
  }
}

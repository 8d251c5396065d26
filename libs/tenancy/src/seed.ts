import type { JsonObject } from '@lib/a2a-protocol';
import { agentIdOf, tenantIdOf } from '@lib/ids';
import type { Pool } from 'pg';
import { AgentStore } from './admin/agent-store';
import { CredentialStore } from './admin/credential-store';
import { TenantStore } from './admin/tenant-store';

/** The part of an agent card that belongs to the hosted agent (the platform adds interfaces and security). */
export interface AgentProfile extends JsonObject {
  name: string;
  description: string;
  version: string;
}

export interface AgentSeed {
  agentId: string;
  profile: AgentProfile;
  onLeaseLost?: 'redispatch' | 'fail';
  maxAttempts?: number;
  /** The agent's lease TTL; the platform's default when not given. */
  leaseTtlMs?: number;
  /** Secret of the worker credential bound to (tenant, this agent). */
  workerSecret: string;
}

export interface TenantSeed {
  tenantId: string;
  displayName: string;
  /** Keys with operator-chosen secrets; scopes default to a client key's. */
  apiKeys: { keyId: string; principalId: string; secret: string; scopes?: string[] }[];
  agents: AgentSeed[];
}

/**
 * Creates or updates a tenant with its agents, API keys and worker credentials (idempotent), through the
 * same stores and validation as the admin API: the demo tenant of `npm start` and test fixtures.
 */
export async function seedTenant(pool: Pool, seed: TenantSeed): Promise<void> {
  const tenantId = tenantIdOf(seed.tenantId);
  const credentials = new CredentialStore(pool);
  const agents = new AgentStore(pool);
  await new TenantStore(pool).ensure(tenantId, seed.displayName);
  for (const key of seed.apiKeys) {
    await credentials.issueApiKey(
      tenantId,
      {
        principalId: key.principalId,
        label: 'seeded',
        ...(key.scopes ? { scopes: key.scopes } : {}),
      },
      { keyId: key.keyId, secret: key.secret },
    );
  }
  for (const agent of seed.agents) {
    const ref = { tenantId, agentId: agentIdOf(agent.agentId) };
    await agents.put(tenantId, agent.agentId, {
      card: agent.profile,
      policy: {
        onLeaseLost: agent.onLeaseLost ?? 'redispatch',
        maxAttempts: agent.maxAttempts ?? 3,
        ...(agent.leaseTtlMs !== undefined ? { leaseTtlMs: agent.leaseTtlMs } : {}),
      },
    });
    await credentials.issueWorkerCredential(
      ref,
      { label: 'seeded' },
      { credentialId: `${seed.tenantId}/${agent.agentId}/default`, secret: agent.workerSecret },
    );
  }
}

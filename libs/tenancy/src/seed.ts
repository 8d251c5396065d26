import type { JsonObject } from '@lib/a2a-protocol';
import type { Pool } from 'pg';
import { hashSecret } from './secrets';

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
  /** Secret of the worker credential bound to (tenant, this agent). */
  workerSecret: string;
}

export interface TenantSeed {
  tenantId: string;
  displayName: string;
  apiKeys: { keyId: string; principalId: string; secret: string }[];
  agents: AgentSeed[];
}

/** Creates or updates a tenant with its agents, API keys and worker credentials (idempotent). */
export async function seedTenant(pool: Pool, seed: TenantSeed): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(
      `INSERT INTO ops.tenants (tenant_id, display_name) VALUES ($1, $2)
       ON CONFLICT (tenant_id) DO UPDATE SET display_name = EXCLUDED.display_name`,
      [seed.tenantId, seed.displayName],
    );
    for (const key of seed.apiKeys) {
      await client.query(
        `INSERT INTO ops.api_keys (key_id, tenant_id, principal_id, key_hash) VALUES ($1, $2, $3, $4)
         ON CONFLICT (key_id) DO UPDATE SET key_hash = EXCLUDED.key_hash, revoked_at = NULL`,
        [key.keyId, seed.tenantId, key.principalId, hashSecret(key.secret)],
      );
    }
    for (const agent of seed.agents) {
      await client.query(
        `INSERT INTO ops.agents (tenant_id, agent_id, profile, on_lease_lost, max_attempts)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (tenant_id, agent_id) DO UPDATE SET profile = EXCLUDED.profile,
           on_lease_lost = EXCLUDED.on_lease_lost, max_attempts = EXCLUDED.max_attempts`,
        [
          seed.tenantId,
          agent.agentId,
          JSON.stringify(agent.profile),
          agent.onLeaseLost ?? 'redispatch',
          agent.maxAttempts ?? 3,
        ],
      );
      await client.query(
        `INSERT INTO ops.worker_credentials (credential_id, tenant_id, agent_id, secret_hash)
         VALUES ($1, $2, $3, $4)
         ON CONFLICT (credential_id) DO UPDATE SET secret_hash = EXCLUDED.secret_hash, revoked_at = NULL`,
        [
          `${seed.tenantId}/${agent.agentId}/default`,
          seed.tenantId,
          agent.agentId,
          hashSecret(agent.workerSecret),
        ],
      );
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

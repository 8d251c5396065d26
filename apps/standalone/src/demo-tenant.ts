import type { DemoConfig } from '@lib/config';
import { seedTenant } from '@lib/tenancy';
import { AGENT_PROFILES, EXAMPLE_AGENT_IDS } from '@lib/worker-sdk';
import type { Pool } from 'pg';

/** The example agents every fresh platform hosts for the demo tenant. */
export const EXAMPLE_AGENTS = EXAMPLE_AGENT_IDS;

/** Worker credential of a demo agent: bound to (demo tenant, agent). */
export function demoWorkerSecret(config: DemoConfig, agentId: string): string {
  return `${config.A2A_DEMO_WORKER_SECRET}:${agentId}`;
}

/** Creates (or refreshes) the demo tenant, its API key and the example agents. */
export async function seedDemoTenant(pool: Pool, config: DemoConfig): Promise<void> {
  await seedTenant(pool, {
    tenantId: config.DEMO_TENANT,
    displayName: 'Demo tenant',
    apiKeys: [
      {
        keyId: `${config.DEMO_TENANT}-default`,
        principalId: 'demo-user',
        secret: config.A2A_DEMO_API_KEY,
      },
    ],
    agents: EXAMPLE_AGENTS.map((agentId) => ({
      agentId,
      profile: AGENT_PROFILES[agentId],
      onLeaseLost: 'redispatch',
      maxAttempts: 3,
      workerSecret: demoWorkerSecret(config, agentId),
    })),
  });
}

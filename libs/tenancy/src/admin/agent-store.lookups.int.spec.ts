/**
 * How the ingress and the task-service find a hosted agent, through the store that owns `ops.agents`: the
 * agent with its definition, and the agent as the ingress serves it (its tenant's status, quotas and whether
 * it trusts OIDC issuers). Another tenant's agent of the same id is never found.
 */
import { agentIdOf, tenantIdOf } from '@lib/ids';
import { createTestDatabase, type TestDatabase } from '@lib/testing';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedTenant } from '../seed';
import { AgentStore } from './agent-store';
import { TenantStore } from './tenant-store';

let db: TestDatabase;
let store: AgentStore;

const acme = tenantIdOf('acme');
const echo = { tenantId: acme, agentId: agentIdOf('echo') };
const card = { name: 'Echo', description: 'echoes', version: '1' };

beforeAll(async () => {
  db = await createTestDatabase('agent_lookups');
  store = new AgentStore(db.pool);
  await seedTenant(db.pool, {
    tenantId: 'acme',
    displayName: 'Acme',
    apiKeys: [],
    agents: [{ agentId: 'echo', profile: card, maxAttempts: 5, workerSecret: randomUUID() }],
  });
  await new TenantStore(db.pool).ensure(tenantIdOf('globex'), 'Globex');
});

afterAll(async () => {
  await db?.drop();
});

describe('agent lookups', () => {
  it('find the agent with its definition, never under another tenant (cross-tenant)', async () => {
    const found = await store.find(echo);
    expect(found).toMatchObject({
      ...echo,
      card: { ...card, defaultInputModes: ['text/plain'] },
      policy: { onLeaseLost: 'redispatch', maxAttempts: 5, maxConcurrency: null },
      imported: false,
    });
    expect(await store.find({ ...echo, tenantId: tenantIdOf('globex') })).toBeNull();
    expect(await store.find({ ...echo, agentId: agentIdOf('nobody') })).toBeNull();
  });

  it("find the agent as served, with its tenant's status, quotas and trust in OIDC issuers", async () => {
    const tenants = new TenantStore(db.pool);
    expect(await store.findServed(echo)).toEqual({
      card: expect.objectContaining(card),
      tenantStatus: 'active',
      quotas: { requestsPerSecond: null, maxActiveTasks: null },
      trustsIssuers: false,
    });
    await tenants.update(acme, { quotas: { requestsPerSecond: 7 } });
    await tenants.setStatus(acme, 'suspended');
    await db.pool.query(
      `INSERT INTO ops.oidc_issuers (tenant_id, issuer_id, issuer, audience, jwks_url)
       VALUES ('acme', 'idp', 'https://idp.example', 'a2a', 'https://idp.example/jwks')`,
    );
    expect(await store.findServed(echo)).toMatchObject({
      tenantStatus: 'suspended',
      quotas: { requestsPerSecond: 7, maxActiveTasks: null },
      trustsIssuers: true,
    });
    expect(await store.findServed({ ...echo, tenantId: tenantIdOf('globex') })).toBeNull();
  });
});

import { tenantIdOf } from '@lib/ids';
/**
 * `GET /a2a/agents`: the agents of the API key's own tenant, with their cards' URLs (the console's playground
 * lists them). A key names one tenant; another tenant's agents are never listed; no key, a wrong key or a key
 * of a suspended tenant gets 401, and each refusal is an audit record, as on the A2A routes.
 */
import { AuditLog, PLATFORM_TENANT } from '@lib/audit';
import { EXAMPLE_AGENT_IDS } from '@lib/worker-sdk';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootStandalone, seedAcme, type Standalone } from './support/platform';
import { DEMO_API_KEY } from './support/wire';

interface Directory {
  agents: { tenant: string; agent: string; name: string; description: string; cardUrl: string }[];
}

let platform: Standalone;
const acmeKey = `acme-${randomUUID()}`;

beforeAll(async () => {
  platform = await bootStandalone('agent_directory');
  await seedAcme(platform.db.pool, acmeKey);
}, 120_000);

afterAll(async () => {
  await platform?.close();
});

function directory(apiKey?: string): Promise<Response> {
  return fetch(`${platform.baseUrl}/a2a/agents`, {
    headers: apiKey === undefined ? {} : { 'X-API-Key': apiKey },
  });
}

describe('the agent directory of an API key', () => {
  it("lists the key's tenant's agents with names, descriptions and card URLs that serve their cards", async () => {
    const response = await directory(DEMO_API_KEY);
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const { agents } = (await response.json()) as Directory;
    expect(agents.map((a) => a.agent)).toEqual([...EXAMPLE_AGENT_IDS].sort());
    expect(new Set(agents.map((a) => a.tenant))).toEqual(new Set(['demo']));
    const echo = agents.find((a) => a.agent === 'echo')!;
    expect(echo.name).toBe('Echo');
    expect(echo.description).not.toBe('');
    expect(echo.cardUrl).toBe(`${platform.baseUrl}/agents/demo/echo/.well-known/agent-card.json`);
    const card = (await (await fetch(echo.cardUrl)).json()) as { name: string };
    expect(card.name).toBe('Echo');
  });

  it("another tenant's key lists only that tenant's agents (cross-tenant)", async () => {
    const { agents } = (await (await directory(acmeKey)).json()) as Directory;
    expect(agents.map((a) => `${a.tenant}/${a.agent}`)).toEqual(['acme/echo']);
  });

  it('refuses no key, a wrong key and a key of a suspended tenant with 401, each an audit record', async () => {
    const audit = new AuditLog(platform.db.pool);
    const refusals = async (tenantId: string) =>
      (
        await audit.query({
          tenantId: tenantIdOf(tenantId),
          operation: 'a2a.authenticate',
          resource: 'agent-directory',
        })
      ).records;
    expect((await directory()).status).toBe(401);
    expect((await directory('not-a-key')).status).toBe(401);
    expect((await refusals(PLATFORM_TENANT)).map((r) => r.outcome)).toEqual([
      'unauthenticated',
      'unauthenticated',
    ]);
    await platform.db.pool.query(
      `UPDATE ops.tenants SET status = 'suspended' WHERE tenant_id = 'acme'`,
    );
    try {
      const refused = await directory(acmeKey);
      expect(refused.status).toBe(401);
      expect(await refused.json()).toMatchObject({ error: { status: 'UNAUTHENTICATED' } });
      expect(await refusals('acme')).toMatchObject([
        { outcome: 'denied', reason: 'PERMISSION_DENIED', binding: 'HTTP+JSON' },
      ]);
    } finally {
      await platform.db.pool.query(
        `UPDATE ops.tenants SET status = 'active' WHERE tenant_id = 'acme'`,
      );
    }
  });
});

/**
 * `GET /a2a/agents` on real Postgres, composed of the ingress's own providers: the key is checked by the
 * authenticator of the A2A routes, agents are read through the agent store, and every refused key leaves an
 * audit record (in the chain of the key's tenant when it is a key of one, else the platform's) before the
 * 401 is sent.
 */
import { AuditLog, PLATFORM_TENANT, type AuditRecord } from '@lib/audit';
import { ingressSchema, loadConfig } from '@lib/config';
import { ConfigChanges, CredentialStore, seedTenant, tenantIdOf } from '@lib/tenancy';
import { createTestDatabase, type TestDatabase } from '@lib/testing';
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { A2aAudit } from '../src/auth/a2a-audit';
import { ApiKeyAuthenticator } from '../src/auth/api-key.authenticator';
import { PublicOrigins } from '../src/cards/agent-cards';
import { AgentDirectoryController } from '../src/directory/agent-directory.controller';
import { INGRESS_CONFIG, INGRESS_PG_POOL } from '../src/tokens';

class AgentDirectoryTestModule {}

let db: TestDatabase;
let app: INestApplication;
let baseUrl: string;
let audit: AuditLog;

const acmeKey = `acme-${randomUUID()}`;
const globexKey = `globex-${randomUUID()}`;

const profile = (name: string) => ({ name, description: `${name} agent`, version: '1.0.0' });

beforeAll(async () => {
  db = await createTestDatabase('agent_directory');
  audit = new AuditLog(db.pool);
  await seedTenant(db.pool, {
    tenantId: 'acme',
    displayName: 'Acme',
    apiKeys: [{ keyId: 'acme-client', principalId: 'alice', secret: acmeKey }],
    agents: [
      { agentId: 'echo', profile: profile('Echo'), workerSecret: randomUUID() },
      { agentId: 'countdown', profile: profile('Countdown'), workerSecret: randomUUID() },
    ],
  });
  await seedTenant(db.pool, {
    tenantId: 'globex',
    displayName: 'Globex',
    apiKeys: [{ keyId: 'globex-client', principalId: 'bob', secret: globexKey }],
    agents: [{ agentId: 'echo', profile: profile('Globex Echo'), workerSecret: randomUUID() }],
  });
  app = await NestFactory.create(
    {
      module: AgentDirectoryTestModule,
      controllers: [AgentDirectoryController],
      providers: [
        { provide: INGRESS_PG_POOL, useValue: db.pool },
        { provide: INGRESS_CONFIG, useValue: loadConfig(ingressSchema, {}) },
        {
          provide: ConfigChanges,
          useFactory: () => new ConfigChanges(db.url, 'a2a-test:config', () => undefined),
        },
        ApiKeyAuthenticator,
        A2aAudit,
        PublicOrigins,
      ],
    },
    { logger: ['error'] },
  );
  await app.listen(0, '127.0.0.1');
  baseUrl = await app.getUrl();
}, 60_000);

afterAll(async () => {
  await app?.close();
  await db?.drop();
});

function directory(apiKey?: string): Promise<Response> {
  return fetch(`${baseUrl}/a2a/agents`, {
    headers: apiKey === undefined ? {} : { 'X-API-Key': apiKey },
  });
}

/** The directory's refusals recorded in `tenantId`'s chain, newest first. */
async function refusals(tenantId: string): Promise<AuditRecord[]> {
  const page = await audit.query({
    tenantId: tenantIdOf(tenantId),
    operation: 'a2a.authenticate',
    resource: 'agent-directory',
  });
  return [...page.records];
}

/** Asks with `apiKey`, expects the directory's 401 and returns the refusal recorded in `tenantId`'s chain. */
async function refused(apiKey: string | undefined, tenantId: string): Promise<AuditRecord> {
  const before = (await refusals(tenantId)).length;
  const response = await directory(apiKey);
  expect(response.status).toBe(401);
  expect(response.headers.get('cache-control')).toBe('no-store');
  expect(await response.json()).toEqual({
    error: { code: 401, status: 'UNAUTHENTICATED', message: 'a valid X-API-Key is required' },
  });
  // Durable before the answer: no wait.
  const records = await refusals(tenantId);
  expect(records.length).toBe(before + 1);
  return records[0]!;
}

describe('the agent directory', () => {
  it("lists the key's tenant's agents, and only those (cross-tenant)", async () => {
    const response = await directory(acmeKey);
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(await response.json()).toEqual({
      agents: [
        {
          tenant: 'acme',
          agent: 'countdown',
          name: 'Countdown',
          description: 'Countdown agent',
          cardUrl: `${baseUrl}/agents/acme/countdown/.well-known/agent-card.json`,
        },
        {
          tenant: 'acme',
          agent: 'echo',
          name: 'Echo',
          description: 'Echo agent',
          cardUrl: `${baseUrl}/agents/acme/echo/.well-known/agent-card.json`,
        },
      ],
    });
    const globex = (await (await directory(globexKey)).json()) as { agents: { tenant: string }[] };
    expect(globex.agents.map((a) => a.tenant)).toEqual(['globex']);
  });

  it("refuses no key and a wrong key with 401, each an audit record in the platform's chain", async () => {
    for (const apiKey of [undefined, 'not-a-key']) {
      const record = await refused(apiKey, PLATFORM_TENANT);
      expect(record).toMatchObject({
        principalId: null,
        credentialId: null,
        binding: 'HTTP+JSON',
        outcome: 'unauthenticated',
        reason: 'UNAUTHENTICATED',
      });
      expect(record.sourceAddress).toMatch(/127\.0\.0\.1/);
    }
  });

  it("refuses a revoked key like an unknown one, and an expired key in its tenant's chain", async () => {
    const credentials = new CredentialStore(db.pool);
    const tenantId = tenantIdOf('acme');
    const revoked = await credentials.issueApiKey(tenantId, { principalId: 'carol' });
    await credentials.revokeApiKey(tenantId, revoked.credential.keyId);
    expect(await refused(revoked.secret, PLATFORM_TENANT)).toMatchObject({
      outcome: 'unauthenticated',
    });
    const expired = await credentials.issueApiKey(tenantId, { principalId: 'dave' });
    await db.pool.query(
      `UPDATE ops.api_keys SET expires_at = now() - interval '1 minute' WHERE key_id = $1`,
      [expired.credential.keyId],
    );
    expect(await refused(expired.secret, 'acme')).toMatchObject({
      outcome: 'unauthenticated',
      reason: 'UNAUTHENTICATED',
    });
  });

  it("refuses a key of a suspended tenant with the same 401, recorded as denied in the tenant's chain", async () => {
    await db.pool.query(`UPDATE ops.tenants SET status = 'suspended' WHERE tenant_id = 'globex'`);
    try {
      expect(await refused(globexKey, 'globex')).toMatchObject({
        outcome: 'denied',
        reason: 'PERMISSION_DENIED',
      });
    } finally {
      await db.pool.query(`UPDATE ops.tenants SET status = 'active' WHERE tenant_id = 'globex'`);
    }
    expect((await directory(globexKey)).status).toBe(200);
  });
});

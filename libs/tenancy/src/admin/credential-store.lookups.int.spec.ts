/**
 * How the authenticators find credentials, through the store that owns them: an API key in the routed tenant
 * (another tenant's is unknown), a key in whatever tenant it belongs to (for routes that name none), an admin
 * credential, a worker credential. Revoked credentials are never found.
 */
import { agentIdOf, tenantIdOf } from '@lib/ids';
import { createTestDatabase, type TestDatabase } from '@lib/testing';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashSecret } from '../secrets';
import { seedTenant } from '../seed';
import { CredentialStore } from './credential-store';
import { TenantStore } from './tenant-store';

let db: TestDatabase;
let store: CredentialStore;

const acme = tenantIdOf('acme');
const globex = tenantIdOf('globex');
const clientKey = `client-${randomUUID()}`;
const adminKey = `admin-${randomUUID()}`;
const workerSecret = `worker-${randomUUID()}`;

beforeAll(async () => {
  db = await createTestDatabase('credential_lookups');
  store = new CredentialStore(db.pool);
  await seedTenant(db.pool, {
    tenantId: 'acme',
    displayName: 'Acme',
    apiKeys: [
      { keyId: 'acme-client', principalId: 'alice', secret: clientKey },
      {
        keyId: 'acme-admin',
        principalId: 'root',
        secret: adminKey,
        scopes: ['tenant:admin'],
      },
    ],
    agents: [
      {
        agentId: 'echo',
        profile: { name: 'Echo', description: 'echoes', version: '1' },
        workerSecret,
      },
    ],
  });
  await new TenantStore(db.pool).ensure(globex, 'Globex');
});

afterAll(async () => {
  await db?.drop();
});

describe('credential lookups', () => {
  it('find an API key in its own tenant only (cross-tenant), with its tenant status', async () => {
    const hash = hashSecret(clientKey);
    expect(await store.findApiKey(acme, hash)).toEqual({
      tenantId: acme,
      keyId: 'acme-client',
      principalId: 'alice',
      scopes: expect.arrayContaining(['a2a:message:send']),
      expiresAt: null,
      tenantStatus: 'active',
    });
    expect(await store.findApiKey(globex, hash)).toBeNull();
    expect(await store.findApiKey(acme, hashSecret('not-a-key'))).toBeNull();
  });

  it('find a key in whatever tenant holds it, for routes that name no tenant', async () => {
    const found = await store.findApiKeysAnywhere(hashSecret(clientKey));
    expect(found.map((key) => [key.tenantId, key.keyId])).toEqual([[acme, 'acme-client']]);
    expect(await store.findApiKeysAnywhere(hashSecret('not-a-key'))).toEqual([]);
  });

  it('find an admin credential: an admin key, or a tenant key with tenant:admin of an active tenant', async () => {
    const admin = await store.issueAdminKey({ principalId: 'operator' });
    expect(await store.findAdminCredential(hashSecret(admin.secret))).toEqual({
      principalId: 'operator',
      credentialId: admin.credential.keyId,
      tenantId: null,
    });
    expect(await store.findAdminCredential(hashSecret(adminKey))).toEqual({
      principalId: 'root',
      credentialId: 'acme-admin',
      tenantId: acme,
    });
    expect(await store.findAdminCredential(hashSecret(clientKey))).toBeNull();
    await store.revokeAdminKey(admin.credential.keyId);
    expect(await store.findAdminCredential(hashSecret(admin.secret))).toBeNull();
    await new TenantStore(db.pool).setStatus(acme, 'suspended');
    try {
      expect(await store.findAdminCredential(hashSecret(adminKey))).toBeNull();
      expect((await store.findApiKey(acme, hashSecret(clientKey)))?.tenantStatus).toBe('suspended');
    } finally {
      await new TenantStore(db.pool).setStatus(acme, 'active');
    }
  });

  it('find the agent a worker credential is bound to, until it is revoked', async () => {
    const hash = hashSecret(workerSecret);
    expect(await store.findWorkerCredential(hash)).toEqual({
      tenantId: acme,
      agentId: agentIdOf('echo'),
      credentialId: 'acme/echo/default',
    });
    await store.revokeWorkerCredential(
      { tenantId: acme, agentId: agentIdOf('echo') },
      'acme/echo/default',
    );
    expect(await store.findWorkerCredential(hash)).toBeNull();
  });

  it('never find a revoked API key', async () => {
    const issued = await store.issueApiKey(acme, { principalId: 'carol' });
    await store.revokeApiKey(acme, issued.credential.keyId);
    const hash = hashSecret(issued.secret);
    expect(await store.findApiKey(acme, hash)).toBeNull();
    expect(await store.findApiKeysAnywhere(hash)).toEqual([]);
  });
});

import { agentIdOf, seedTenant, tenantIdOf, type AgentRef } from '@lib/tenancy';
import { createTestDatabase, type TestDatabase } from '@lib/testing';
import { AGENT_PROFILES } from '@lib/worker-sdk';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretBox } from './secret-box';
import { sealContext, UpstreamStore, type UpstreamWrite } from './upstream-store';

let db: TestDatabase;
let store: UpstreamStore;
const box = SecretBox.fromBase64(randomBytes(32).toString('base64'));
const ref: AgentRef = { tenantId: tenantIdOf('up-t'), agentId: agentIdOf('weather') };

const write = (over: Partial<UpstreamWrite> = {}): UpstreamWrite => ({
  cardUrl: 'http://127.0.0.1:1/.well-known/agent-card.json',
  binding: 'JSONRPC',
  endpoint: 'http://127.0.0.1:1/a2a/jsonrpc',
  endpointTenant: '',
  streaming: true,
  card: { name: 'Weather' },
  cardSigned: false,
  cardVerified: false,
  workerCredentialId: 'wkr-1',
  workerSecretSealed: box.seal('secret', sealContext(ref, 'worker-secret')),
  ...over,
});

beforeAll(async () => {
  db = await createTestDatabase('upstream_store');
  await seedTenant(db.pool, {
    tenantId: ref.tenantId,
    displayName: 'Upstreams',
    apiKeys: [],
    agents: [{ agentId: ref.agentId, profile: AGENT_PROFILES.echo, workerSecret: 'w' }],
  });
  store = new UpstreamStore(db.pool);
});

afterAll(async () => {
  await db.drop();
});

describe('UpstreamStore', () => {
  it('grows the version only when something the bridge uses changed, and keeps headers not given', async () => {
    const first = write({
      headers: { sealed: box.seal('{"X-Key":"k"}', sealContext(ref, 'headers')), names: ['X-Key'] },
    });
    const created = await store.put(ref, first);
    expect(created).toMatchObject({ changed: true, row: { version: 1, headerNames: ['X-Key'] } });
    expect(created.row.headersSetAt).not.toBeNull();

    // The same card again, without headers: nothing the bridge uses changed; the headers stay.
    const same = await store.put(ref, write({ workerSecretSealed: first.workerSecretSealed }));
    expect(same).toMatchObject({ changed: false, row: { version: 1, headerNames: ['X-Key'] } });
    const sealed = same.row.headersSealed;
    expect(sealed && box.open(sealed, sealContext(ref, 'headers'))).toBe('{"X-Key":"k"}');

    const newCard = await store.put(
      ref,
      write({ card: { name: 'Weather 2' }, workerSecretSealed: first.workerSecretSealed }),
    );
    expect(newCard).toMatchObject({ changed: true, row: { version: 2 } });

    const noHeaders = await store.put(
      ref,
      write({ headers: { sealed: null, names: [] }, workerSecretSealed: first.workerSecretSealed }),
    );
    expect(noHeaders).toMatchObject({ changed: true, row: { version: 3, headerNames: [] } });
    expect(noHeaders.row.headersSealed).toBeNull();
    expect((await store.versions()).map((row) => row.ref)).toEqual([ref]);
  });

  it('goes with its agent', async () => {
    await db.pool.query('DELETE FROM ops.worker_credentials WHERE tenant_id = $1', [ref.tenantId]);
    await db.pool.query('DELETE FROM ops.agents WHERE tenant_id = $1', [ref.tenantId]);
    expect(await store.get(ref)).toBeUndefined();
  });
});

/**
 * Operating the platform through the admin API and its CLI (issue 12), against the real standalone process:
 * an operator builds a tenant from nothing, clients and workers use what it issued, changes reach the
 * serving paths, authorization and quotas of credentials hold, every action is audited in a chain that
 * reveals tampering, and a tenant is deleted in two steps.
 */
import type { Task } from '@lib/a2a-protocol';
import { startAgentWorker, type PlatformProcess } from '@lib/testing';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// Test-only helpers of the OIDC module (a local identity provider).
import {
  JwksTestServer,
  mintToken,
  testSigningKey,
  type TestSigningKey,
} from '../../libs/tenancy/src/oidc/testing';
import {
  eventually,
  rawRpc,
  rawUserMessage,
  request,
  rpcErrorOf,
  rpcReasonOf,
  sentTask,
} from './support/json-rpc';
import { bootStandalone, type Standalone } from './support/platform';

const TOKEN = `bootstrap-${randomUUID()}`;
const run = promisify(execFile);

let platform: Standalone;
let worker: PlatformProcess | undefined;
let aliceKey: string;
let workDir: string;

interface Answer {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

/** One admin API call. */
async function admin(
  method: string,
  path: string,
  body?: unknown,
  token: string | null = TOKEN,
): Promise<Answer> {
  const response = await fetch(`${platform.baseUrl}${path}`, {
    method,
    headers: {
      ...(token !== null ? { Authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  return {
    status: response.status,
    body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
    headers: response.headers,
  };
}

/** `npm run admin -- …` as an operator runs it (the built CLI, against this platform). */
async function cli(
  args: string[],
  token = TOKEN,
): Promise<{ code: number; json: Record<string, unknown> }> {
  try {
    const { stdout } = await run('node', ['dist/apps/admin-api/src/cli.js', ...args], {
      env: { ...process.env, ADMIN_API_URL: platform.baseUrl, ADMIN_TOKEN: token },
    });
    return { code: 0, json: JSON.parse(stdout) as Record<string, unknown> };
  } catch (error) {
    const { code, stdout } = error as { code: number; stdout: string };
    return {
      code,
      json: stdout.startsWith('{') ? (JSON.parse(stdout) as Record<string, unknown>) : {},
    };
  }
}

const endpoint = (tenant: string, agent = 'echo') => platform.endpoint(tenant, agent);
const send = (key: string | null, tenant = 'globex', headers: Record<string, string> = {}) =>
  rawRpc(endpoint(tenant), request('SendMessage', { message: rawUserMessage('hello') }), {
    apiKey: key,
    headers,
  });

async function issueKey(body: Record<string, unknown>): Promise<string> {
  const issued = await admin('POST', '/admin/v1/tenants/globex/api-keys', body);
  expect(issued.status, JSON.stringify(issued.body)).toBe(201);
  return issued.body['secret'] as string;
}

async function eventCount(tenant: string): Promise<number> {
  const result = await platform.db.pool.query<{ n: string }>(
    'SELECT count(*) AS n FROM events.messages WHERE tenant_id = $1',
    [tenant],
  );
  return Number(result.rows[0]?.n);
}

beforeAll(async () => {
  platform = await bootStandalone('e2e_admin', {
    ADMIN_BOOTSTRAP_TOKEN: TOKEN,
    OIDC_ALLOW_INSECURE_LOOPBACK: 'true',
  });
  workDir = mkdtempSync(join(tmpdir(), 'a2a-admin-'));
});

afterAll(async () => {
  await worker?.stop();
  await platform?.close();
});

describe('an operator, from nothing (README "Operating the platform")', () => {
  it('creates a tenant, an agent, a key and a worker credential with the CLI; the client and worker work', async () => {
    const tenant = await cli([
      'tenants',
      'create',
      'globex',
      '--name',
      'Globex Corp',
      '--rps',
      '500',
    ]);
    expect(tenant).toMatchObject({ code: 0, json: { tenantId: 'globex', status: 'active' } });

    const definition = join(workDir, 'echo.json');
    writeFileSync(
      definition,
      JSON.stringify({
        card: {
          name: 'Globex echo',
          description: 'Says back what it is told',
          version: '1.0.0',
          skills: [{ id: 'echo', name: 'Echo', description: 'Echoes text', tags: ['echo'] }],
        },
        policy: { onLeaseLost: 'redispatch', maxAttempts: 2 },
      }),
    );
    expect(await cli(['agents', 'put', 'globex', 'echo', '--file', definition])).toMatchObject({
      code: 0,
      json: { agentId: 'echo', policy: { maxAttempts: 2 } },
    });

    const key = await cli(['keys', 'issue', 'globex', '--principal', 'alice', '--label', 'ci']);
    expect(key.code).toBe(0);
    aliceKey = key.json['secret'] as string;
    expect(aliceKey.startsWith(`${(key.json['credential'] as { prefix: string }).prefix}_`)).toBe(
      true,
    );

    const credential = await cli(['workers', 'issue', 'globex', 'echo']);
    expect(credential.code).toBe(0);
    worker = await startAgentWorker(
      'echo',
      platform.workerTarget,
      credential.json['secret'] as string,
    );

    const task = sentTask(await send(aliceKey));
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    const card = await fetch(`${platform.baseUrl}/agents/globex/echo/.well-known/agent-card.json`);
    expect(((await card.json()) as { name: string }).name).toBe('Globex echo');

    // Secrets are stored as hashes only.
    const stored = await platform.db.pool.query<{ key_hash: string }>(
      `SELECT key_hash FROM ops.api_keys WHERE tenant_id = 'globex'`,
    );
    expect(stored.rows.map((r) => r.key_hash)).not.toContain(aliceKey);
  });

  it('serves a changed agent definition, with a new ETag', async () => {
    const url = `${platform.baseUrl}/agents/globex/echo/.well-known/agent-card.json`;
    const before = await fetch(url);
    const etag = before.headers.get('etag');
    const changed = await admin('PUT', '/admin/v1/tenants/globex/agents/echo', {
      card: { name: 'Globex echo', description: 'A new description', version: '1.0.1' },
    });
    expect(changed.status).toBe(200);
    const after = await eventually(
      async () => {
        const response = await fetch(url);
        return {
          etag: response.headers.get('etag'),
          card: (await response.json()) as { description: string },
        };
      },
      (seen) => seen.card.description === 'A new description',
    );
    expect(after.etag).not.toBe(etag);
  });
});

describe('credentials', () => {
  it('a revoked key stops working', async () => {
    const key = await issueKey({ principalId: 'carol' });
    expect(sentTask(await send(key)).status.state).toBe('TASK_STATE_COMPLETED');
    const keyId = (await admin('GET', '/admin/v1/tenants/globex/api-keys')).body['apiKeys'] as {
      keyId: string;
      principalId: string;
    }[];
    const carol = keyId.find((k) => k.principalId === 'carol');
    const revoked = await admin(
      'DELETE',
      `/admin/v1/tenants/globex/api-keys/${carol?.keyId ?? ''}`,
    );
    expect(revoked.body['revokedAt']).toEqual(expect.any(String));
    const refused = await eventually(
      () => send(key),
      (reply) => reply.status === 401,
    );
    expect(rpcReasonOf(refused)).toBe('UNAUTHENTICATED');
  });

  it('an expired key is refused', async () => {
    // Time enough for the call before the expiry to be made before it, on a busy machine too.
    const expiresAt = Date.now() + 10_000;
    const key = await issueKey({
      principalId: 'dave',
      expiresAt: new Date(expiresAt).toISOString(),
    });
    expect(sentTask(await send(key)).status.state).toBe('TASK_STATE_COMPLETED');
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAt - Date.now() + 100)));
    const reply = await send(key);
    expect(reply.status).toBe(401);
    expect(rpcErrorOf(reply).message).toMatch(/expired/);
  });

  it('a key without the scope is refused with PERMISSION_DENIED and nothing is written', async () => {
    const reader = await issueKey({ principalId: 'erin', scopes: ['a2a:tasks:read'] });
    const before = await eventCount('globex');
    const reply = await send(reader);
    expect(reply.status).toBe(403);
    expect(rpcReasonOf(reply)).toBe('PERMISSION_DENIED');
    expect(await eventCount('globex')).toBe(before);
  });

  it('the tenant-wide read scope reads another principal’s task, and only reads it', async () => {
    const task: Task = sentTask(await send(aliceKey));
    const own = await issueKey({
      principalId: 'frank',
      scopes: ['a2a:tasks:read', 'a2a:tasks:cancel'],
    });
    const all = await issueKey({
      principalId: 'grace',
      scopes: ['a2a:tasks:read-all', 'a2a:tasks:cancel'],
    });
    const get = (key: string) =>
      rawRpc(endpoint('globex'), request('GetTask', { id: task.id }), { apiKey: key });
    expect(rpcReasonOf(await get(own))).toBe('TASK_NOT_FOUND');
    expect((await get(all)).json.result).toMatchObject({ id: task.id });
    const cancel = await rawRpc(endpoint('globex'), request('CancelTask', { id: task.id }), {
      apiKey: all,
    });
    expect(rpcReasonOf(cancel)).toBe('TASK_NOT_FOUND');
  });

  it('bad input answers 400 naming the fields and changes nothing', async () => {
    const tenants = (await admin('GET', '/admin/v1/tenants')).body;
    const badTenant = await admin('POST', '/admin/v1/tenants', {
      tenantId: 'Not Valid',
      displayName: '',
    });
    expect(badTenant.status).toBe(400);
    expect(
      (badTenant.body['error'] as { fields: { field: string }[] }).fields.map((f) => f.field),
    ).toEqual(expect.arrayContaining(['tenantId', 'displayName']));
    const badAgent = await admin('PUT', '/admin/v1/tenants/globex/agents/echo', {
      card: { description: 'no name', version: '1' },
    });
    expect(badAgent.status).toBe(400);
    expect(JSON.stringify(badAgent.body)).toContain('card.name');
    const badKey = await admin('POST', '/admin/v1/tenants/globex/api-keys', {
      principalId: 'x',
      scopes: ['platform:admin'],
    });
    expect(badKey.status).toBe(400);
    const notJson = await fetch(`${platform.baseUrl}/admin/v1/tenants`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
      body: '{',
    });
    expect(notJson.status).toBe(400);
    expect((await admin('GET', '/admin/v1/tenants')).body).toEqual(tenants);
    expect((await admin('GET', '/admin/v1/tenants/globex/agents/echo')).body).toMatchObject({
      card: { description: 'A new description' },
    });
  });
});

describe('tenants', () => {
  it('a suspended tenant’s calls answer PERMISSION_DENIED until it is resumed', async () => {
    expect((await admin('POST', '/admin/v1/tenants/globex/suspend')).body['status']).toBe(
      'suspended',
    );
    const refused = await eventually(
      () => send(aliceKey),
      (reply) => reply.status === 403,
    );
    expect(rpcReasonOf(refused)).toBe('PERMISSION_DENIED');
    const card = await fetch(`${platform.baseUrl}/agents/globex/echo/.well-known/agent-card.json`);
    expect(card.status).toBe(404);
    expect((await admin('POST', '/admin/v1/tenants/globex/resume')).body['status']).toBe('active');
    await eventually(
      () => send(aliceKey),
      (reply) => reply.status === 200,
    );
  });

  it('a tenant admin key manages its own tenant only', async () => {
    const tenantAdmin = await issueKey({ principalId: 'globex-admin', scopes: ['tenant:admin'] });
    expect((await admin('GET', '/admin/v1/tenants/globex', undefined, tenantAdmin)).status).toBe(
      200,
    );
    expect((await admin('GET', '/admin/v1/tenants/demo', undefined, tenantAdmin)).status).toBe(404);
    expect(
      (await admin('GET', '/admin/v1/tenants/demo/agents', undefined, tenantAdmin)).status,
    ).toBe(404);
    expect((await admin('GET', '/admin/v1/tenants', undefined, tenantAdmin)).status).toBe(403);
    expect(
      (await admin('POST', '/admin/v1/tenants', { tenantId: 'x', displayName: 'x' }, tenantAdmin))
        .status,
    ).toBe(403);
    expect(
      (await admin('POST', '/admin/v1/tenants/globex/suspend', undefined, tenantAdmin)).status,
    ).toBe(403);
    // A tenant admin key is not a client key: it carries no A2A scope.
    expect(rpcReasonOf(await send(tenantAdmin))).toBe('PERMISSION_DENIED');
    const none = await admin('GET', '/admin/v1/tenants', undefined, null);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect((await admin('GET', '/admin/v1/tenants', undefined, 'wrong-token')).status).toBe(401);
  });
});

describe('OIDC bearer tokens', () => {
  let jwks: JwksTestServer;
  let key: TestSigningKey;
  let issuer: string;

  beforeAll(async () => {
    key = await testSigningKey('ES256');
    jwks = await JwksTestServer.start([key]);
    issuer = `${new URL(jwks.url).origin}/`;
  });

  afterAll(async () => {
    await jwks?.stop();
  });

  it('authenticates a token of a trusted issuer with the mapped scopes, and refuses bad ones', async () => {
    const registered = await admin('PUT', '/admin/v1/tenants/globex/oidc-issuers/corp', {
      issuer,
      audience: 'a2a-globex',
      jwksUrl: jwks.url,
      scopeMap: { 'agents.use': ['a2a:message:send', 'a2a:tasks:read'] },
    });
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    const card = await eventually(
      async () =>
        (await (
          await fetch(`${platform.baseUrl}/agents/globex/echo/.well-known/agent-card.json`)
        ).json()) as { securitySchemes: Record<string, unknown>; securityRequirements: unknown[] },
      (seen) => 'bearer' in seen.securitySchemes,
    );
    expect(card.securitySchemes['bearer']).toEqual({
      httpAuthSecurityScheme: expect.objectContaining({ scheme: 'Bearer', bearerFormat: 'JWT' }),
    });
    expect(card.securityRequirements).toContainEqual({ schemes: { bearer: {} } });

    const token = (claims: Record<string, unknown>, expiresInSeconds = 300) =>
      mintToken(
        key,
        { iss: issuer, aud: 'a2a-globex', sub: 'heidi', scope: 'agents.use', ...claims },
        {
          expiresInSeconds,
        },
      );
    const bearer = async (jwt: string) => send(null, 'globex', { Authorization: `Bearer ${jwt}` });

    const ok = await bearer(await token({}));
    expect(sentTask(ok).status.state).toBe('TASK_STATE_COMPLETED');
    const owner = await platform.db.pool.query<{ owner_id: string }>(
      `SELECT owner_id FROM read.task_view WHERE tenant_id = 'globex' AND task_id = $1`,
      [sentTask(ok).id],
    );
    expect(owner.rows[0]?.owner_id).toBe(`oidc:${issuer}#heidi`);

    expect((await bearer(await token({ aud: 'someone-else' }))).status).toBe(401);
    expect((await bearer(await token({ iss: 'https://elsewhere.example/' }))).status).toBe(401);
    expect((await bearer(await token({}, -120))).status).toBe(401);
    const other = await testSigningKey('ES256', key.kid);
    expect(
      (
        await bearer(
          await mintToken(other, {
            iss: issuer,
            aud: 'a2a-globex',
            sub: 'mallory',
            scope: 'agents.use',
          }),
        )
      ).status,
    ).toBe(401);
    const noScope = await bearer(await token({ scope: 'unrelated' }));
    expect(noScope.status).toBe(403);
    expect(rpcReasonOf(noScope)).toBe('PERMISSION_DENIED');
  });
});

describe('audit', () => {
  it('each A2A call yields exactly its records: one per mutating call or refusal, none per read', async () => {
    const a2aRecords = async () =>
      (
        await platform.db.pool.query<{ operation: string; outcome: string; reason: string | null }>(
          `SELECT operation, outcome, reason FROM audit.records
            WHERE tenant_id = 'globex' AND operation LIKE 'a2a.%' ORDER BY seq`,
        )
      ).rows;
    const task = sentTask(await send(aliceKey));
    const reader = await issueKey({ principalId: 'ivan', scopes: ['a2a:tasks:read'] });
    const calls: [
      string,
      () => Promise<unknown>,
      { operation: string; outcome: string; reason: string | null }[],
    ][] = [
      [
        'SendMessage',
        () => send(aliceKey),
        [{ operation: 'a2a.SendMessage', outcome: 'ok', reason: null }],
      ],
      [
        'GetTask',
        () => rawRpc(endpoint('globex'), request('GetTask', { id: task.id }), { apiKey: aliceKey }),
        [],
      ],
      [
        'ListTasks',
        () => rawRpc(endpoint('globex'), request('ListTasks', {}), { apiKey: aliceKey }),
        [],
      ],
      [
        'CancelTask of a completed task',
        () =>
          rawRpc(endpoint('globex'), request('CancelTask', { id: task.id }), { apiKey: aliceKey }),
        [{ operation: 'a2a.CancelTask', outcome: 'failed', reason: 'TASK_NOT_CANCELABLE' }],
      ],
      [
        'SendStreamingMessage',
        () =>
          rawRpc(
            endpoint('globex'),
            request('SendStreamingMessage', { message: rawUserMessage('s') }),
            {
              apiKey: aliceKey,
            },
          ),
        [{ operation: 'a2a.SendStreamingMessage', outcome: 'ok', reason: null }],
      ],
      [
        'SendMessage without the scope',
        () => send(reader),
        [{ operation: 'a2a.SendMessage', outcome: 'denied', reason: 'PERMISSION_DENIED' }],
      ],
      [
        'CancelTask without the scope',
        () =>
          rawRpc(endpoint('globex'), request('CancelTask', { id: task.id }), { apiKey: reader }),
        [{ operation: 'a2a.CancelTask', outcome: 'denied', reason: 'PERMISSION_DENIED' }],
      ],
      [
        'a wrong key',
        () => send('not-a-key'),
        [{ operation: 'a2a.authenticate', outcome: 'unauthenticated', reason: 'UNAUTHENTICATED' }],
      ],
    ];
    for (const [name, act, expected] of calls) {
      const before = (await a2aRecords()).length;
      await act();
      expect((await a2aRecords()).slice(before), name).toEqual(expected);
    }
  });

  it('records every admin action and refusal and every mutating call; verify finds a tampered record', async () => {
    const page = await cli(['audit', 'query', 'globex', '--limit', '500']);
    expect(page.code).toBe(0);
    const records = page.json['records'] as {
      seq: number;
      operation: string;
      outcome: string;
      resource: string | null;
      principalId: string | null;
    }[];
    const seen = (operation: string, outcome = 'ok') =>
      records.some((r) => r.operation === operation && r.outcome === outcome);
    for (const operation of [
      'admin.tenant.create',
      'admin.agent.put',
      'admin.api-key.issue',
      'admin.api-key.revoke',
      'admin.worker-credential.issue',
      'admin.tenant.suspend',
      'admin.tenant.resume',
      'admin.oidc-issuer.put',
      'a2a.SendMessage',
      'worker.register',
    ]) {
      expect(seen(operation), operation).toBe(true);
    }
    expect(seen('a2a.authenticate', 'unauthenticated')).toBe(true);
    expect(seen('a2a.SendMessage', 'denied')).toBe(true);
    expect(seen('admin.tenant.get', 'failed')).toBe(false);
    const sent = records.find((r) => r.operation === 'a2a.SendMessage' && r.outcome === 'ok');
    expect(sent?.resource).toMatch(/^task\//);
    expect(JSON.stringify(records)).not.toContain(aliceKey);
    expect(JSON.stringify(records)).not.toContain('hello');
    // A tenant admin's refused platform call lands in the platform's own chain.
    const platformChain = await cli(['audit', 'query', '_platform', '--outcome', 'denied']);
    expect(
      (platformChain.json['records'] as { operation: string }[]).map((r) => r.operation),
    ).toContain('admin.tenant.list');

    expect(await cli(['audit', 'verify', 'globex'])).toMatchObject({ code: 0, json: { ok: true } });
    const victim = records.find((r) => r.operation === 'admin.agent.put');
    const client = await platform.db.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(`SET LOCAL audit.allow_purge = 'on'`);
      await client.query(
        `UPDATE audit.records SET principal_id = 'someone-else' WHERE tenant_id = 'globex' AND seq = $1`,
        [victim?.seq],
      );
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    expect(await cli(['audit', 'verify', 'globex'])).toMatchObject({
      code: 1,
      json: { ok: false, firstBroken: { seq: victim?.seq, problem: 'hash mismatch' } },
    });
  });
});

describe('deleting a tenant', () => {
  it('takes two steps; the purge removes everything the tenant owns', async () => {
    expect(
      (await admin('POST', '/admin/v1/tenants/globex/purge', { confirm: 'globex' })).status,
    ).toBe(409);
    const deleting = await admin('DELETE', '/admin/v1/tenants/globex');
    expect(deleting).toMatchObject({ status: 202, body: { status: 'deleting' } });
    await eventually(
      () => send(aliceKey),
      (reply) => reply.status === 403,
    );
    expect((await admin('POST', '/admin/v1/tenants/globex/purge', {})).status).toBe(400);
    const purged = await cli(['tenants', 'purge', 'globex']);
    expect(purged.code).toBe(0);
    const deleted = purged.json['deleted'] as Record<string, number>;
    expect(deleted['events.messages']).toBeGreaterThan(0);
    expect(deleted['ops.api_keys']).toBeGreaterThan(0);
    const left = await platform.db.pool.query<{ n: string }>(
      `SELECT (SELECT count(*) FROM events.messages WHERE tenant_id = 'globex')
            + (SELECT count(*) FROM read.task_view WHERE tenant_id = 'globex')
            + (SELECT count(*) FROM ops.api_keys WHERE tenant_id = 'globex')
            + (SELECT count(*) FROM ops.agents WHERE tenant_id = 'globex')
            + (SELECT count(*) FROM ops.tenants WHERE tenant_id = 'globex') AS n`,
    );
    expect(Number(left.rows[0]?.n)).toBe(0);
    expect((await admin('GET', '/admin/v1/tenants/globex')).status).toBe(404);
    expect(rpcReasonOf(await send(aliceKey))).toBe('UNAUTHENTICATED');
    // The audit trail outlives the tenant: the refused purges and the one that ran.
    const trail = await cli(['audit', 'query', 'globex', '--operation', 'admin.tenant.purge']);
    expect((trail.json['records'] as { outcome: string }[]).map((r) => r.outcome)).toEqual([
      'ok',
      'failed',
      'failed',
    ]);
  });
});

/**
 * Agents imported from existing A2A servers (docs/upstream.md): the example upstream agent (the official
 * a2a-js SDK server, its own process) imported over each of its bindings, the bridge (its own process)
 * serving them, and the official JS client driving the platform on all three of its bindings.
 */
import { Role, TaskState, type StreamResponse } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import { createPool } from '@lib/event-store';
import {
  kafkaBrokers,
  startBridge,
  startUpstreamAgent,
  uniqueTopic,
  type PlatformProcess,
  type UpstreamAgentProcess,
} from '@lib/testing';
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTopic } from '../../apps/relay/test/support/topic';
import { adminClient, type AdminAnswer } from './support/admin-client';
import { BadUpstream } from './support/bad-upstream';
import { bootStandalone, type Standalone } from './support/platform';
import {
  asTask,
  SDK_TRANSPORTS,
  sdkClientOver,
  sendRequest,
  stateName,
  textOf,
  type SdkAgent,
  type SdkTransport,
} from './support/sdk-client';
import { WebhookReceiver } from './support/webhook-receiver';

const TOKEN = `upstream-admin-${randomUUID()}`;
const API_KEY = 'demo-key';
const SECRETS_KEY = randomBytes(32).toString('base64');
const ALLOWLIST = JSON.stringify({ demo: ['127.0.0.1'] });

let platform: Standalone;
let upstream: UpstreamAgentProcess;
let bridge: PlatformProcess;
let checks: Pool;
let receiver: WebhookReceiver;
let bad: BadUpstream;
let guarded: UpstreamAgentProcess;
let fragile: UpstreamAgentProcess;
/** An upstream whose extended card (bearer token required) lists the skill `vip` besides the public ones. */
let extended: UpstreamAgentProcess;
const BEARER = `upstream-token-${randomUUID()}`;
const bridgeEnv = () => ({
  POSTGRES_URL: platform.db.url,
  WORKER_TARGET: platform.workerTarget,
  UPSTREAM_SECRETS_KEY: SECRETS_KEY,
  UPSTREAM_ALLOWLIST: ALLOWLIST,
  // An upstream that stays down fails its tasks after 5 s without progress (the default is a minute).
  UPSTREAM_RETRY_BUDGET_MS: '5000',
});

const admin = adminClient(() => platform.baseUrl, TOKEN);

async function importAgent(agent: string, body: Record<string, unknown>): Promise<AdminAnswer> {
  return admin('POST', `/admin/v1/tenants/demo/agents/${agent}/import`, body);
}

const cardPath = (agent: string) => `/agents/demo/${agent}/.well-known/agent-card.json`;

function userMessage(text: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }], ...extra };
}

/** The client of `agent` over `transport`, once the bridge serves it (its worker registered). */
async function clientOf(transport: SdkTransport, agent: string): Promise<SdkAgent> {
  await bridge.waitForOutput(new RegExp(`bridge serves demo/${agent} `), 30_000);
  return sdkClientOver(transport, platform.baseUrl, cardPath(agent), API_KEY);
}

/**
 * An OAuth 2 token endpoint (a real HTTP server): client `bridge` with secret `cs-1` gets {@link BEARER}. It
 * keeps the forms it was sent.
 */
async function tokenEndpoint(): Promise<{
  url: string;
  forms: URLSearchParams[];
  close: () => Promise<void>;
}> {
  const forms: URLSearchParams[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      const form = new URLSearchParams(body);
      forms.push(form);
      const good = form.get('client_id') === 'bridge' && form.get('client_secret') === 'cs-1';
      res
        .writeHead(good ? 200 : 401, { 'Content-Type': 'application/json' })
        .end(
          JSON.stringify(
            good
              ? { access_token: BEARER, token_type: 'Bearer', expires_in: 3600 }
              : { error: 'invalid_client' },
          ),
        );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/token`,
    forms,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function collect(stream: AsyncGenerator<StreamResponse>): Promise<StreamResponse[]> {
  const events: StreamResponse[] = [];
  for await (const event of stream) {
    events.push(event);
  }
  return events;
}

beforeAll(async () => {
  upstream = await startUpstreamAgent({ UPSTREAM_NAME: 'Upstream example' });
  guarded = await startUpstreamAgent({ UPSTREAM_NAME: 'Guarded', UPSTREAM_BEARER_TOKEN: BEARER });
  fragile = await startUpstreamAgent({ UPSTREAM_NAME: 'Fragile', UPSTREAM_STREAMING: 'false' });
  extended = await startUpstreamAgent({
    UPSTREAM_NAME: 'Extended',
    UPSTREAM_BEARER_TOKEN: BEARER,
    UPSTREAM_EXTENDED_SKILL: 'vip',
  });
  // The relay and the push dispatcher on the real broker and Redis: webhooks of imported agents' tasks.
  const brokers = await kafkaBrokers();
  const topic = uniqueTopic('upstream-e2e');
  await createTopic(brokers, topic);
  receiver = await WebhookReceiver.start();
  bad = await BadUpstream.start();
  const suffix = randomUUID().slice(0, 8);
  platform = await bootStandalone('e2e_upstream', {
    ADMIN_BOOTSTRAP_TOKEN: TOKEN,
    UPSTREAM_SECRETS_KEY: SECRETS_KEY,
    UPSTREAM_ALLOWLIST: ALLOWLIST,
    START_RELAY: 'true',
    START_PUSH_DISPATCHER: 'true',
    KAFKA_BROKERS: brokers.join(','),
    TASK_EVENTS_TOPIC: topic,
    RELAY_IDLE_POLL_MS: '20',
    PUSH_CONSUMER_GROUP: `upstream-e2e-${suffix}`,
    PUSH_QUEUE_PREFIX: `upstream-e2e-${suffix}`,
    PUSH_ALLOWLIST: ALLOWLIST,
    UPSTREAM_CARD_TIMEOUT_MS: '2000',
    // Every imported card is read again each second (the default is an hour).
    UPSTREAM_SYNC_INTERVAL_MS: '1000',
  });
  checks = createPool(platform.db.url, { max: 2, applicationName: 'a2a-test:checks' });
  bridge = await startBridge(bridgeEnv());
}, 180_000);

afterAll(async () => {
  await bridge?.stop();
  await checks?.end();
  await platform?.close();
  await receiver?.close();
  await bad?.close();
  await upstream?.process.stop();
  await guarded?.process.stop();
  await fragile?.process.stop();
  await extended?.process.stop();
});

describe('importing an A2A server', () => {
  it('serves the upstream card as its own: the upstream’s skills, the platform’s interfaces and capabilities', async () => {
    const imported = await importAgent('up', { cardUrl: upstream.cardUrl });
    expect(imported.status, JSON.stringify(imported.body)).toBe(201);
    expect(imported.body['upstream']).toMatchObject({
      cardUrl: upstream.cardUrl,
      binding: 'JSONRPC',
      streaming: true,
      cardSigned: false,
      headerNames: [],
    });
    const card = (await (await fetch(`${platform.baseUrl}${cardPath('up')}`)).json()) as {
      name: string;
      skills: { id: string }[];
      capabilities: { streaming: boolean; pushNotifications: boolean };
      supportedInterfaces: { url: string }[];
    };
    expect(card.name).toBe('Upstream example');
    expect(card.skills.map((s) => s.id)).toEqual(
      expect.arrayContaining(['echo', 'ask', 'chunks', 'reply', 'slow', 'fail']),
    );
    expect(card.capabilities).toMatchObject({ streaming: true, pushNotifications: true });
    expect(card.supportedInterfaces.every((i) => !i.url.includes(String(upstream.httpPort)))).toBe(
      true,
    );
  });

  it('refuses what it cannot import, and changes nothing', async () => {
    const missing = await importAgent('bad', {});
    expect(missing.status).toBe(400);
    const notFound = await importAgent('bad', {
      cardUrl: `http://127.0.0.1:${upstream.httpPort}/no-card-here`,
    });
    expect(notFound.status).toBe(400);
    expect(JSON.stringify(notFound.body)).toContain('HTTP 404');
    const noBinding = await importAgent('bad', { cardUrl: upstream.cardUrl, binding: 'SOAP' });
    expect(noBinding.status).toBe(400);
    const agents = await admin('GET', '/admin/v1/tenants/demo/agents/bad');
    expect(agents.status).toBe(404);
  });

  it('refuses a card on a reserved address the tenant is not allowed to reach', async () => {
    await admin('POST', '/admin/v1/tenants', { tenantId: 'elsewhere', displayName: 'Elsewhere' });
    const refused = await admin('POST', '/admin/v1/tenants/elsewhere/agents/up/import', {
      cardUrl: upstream.cardUrl,
    });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toContain('UPSTREAM_ALLOWLIST');
  });
});

describe.each(SDK_TRANSPORTS)('an imported agent, called over %s', (transport) => {
  const agent = `up-${transport.toLowerCase().replace('+', '-')}`;
  let sdk: SdkAgent;

  beforeAll(async () => {
    // The upstream is called on the binding of the same name as the platform's.
    const imported = await importAgent(agent, { cardUrl: upstream.cardUrl, binding: transport });
    expect(imported.status, JSON.stringify(imported.body)).toBe(201);
    sdk = await clientOf(transport, agent);
  }, 60_000);

  it('answers a blocking message with the upstream’s artifact', async () => {
    const task = asTask(await sdk.client.sendMessage(sendRequest(userMessage('echo hello'))));
    expect(stateName(task)).toBe('TASK_STATE_COMPLETED');
    expect(task.artifacts.map((a) => textOf(a.parts))).toContain('echo: hello');
  });

  it('streams the upstream’s artifact chunks in order', async () => {
    const events = await collect(
      sdk.client.sendMessageStream(sendRequest(userMessage('chunks 3'))),
    );
    const chunks = events.flatMap((e) =>
      e.payload?.$case === 'artifactUpdate' ? [e.payload.value] : [],
    );
    expect(chunks.map((c) => textOf(c.artifact?.parts))).toEqual(['chunk 1', 'chunk 2', 'chunk 3']);
    expect(chunks.map((c) => c.append)).toEqual([false, true, true]);
    expect(chunks.at(-1)?.lastChunk).toBe(true);
    const last = events.at(-1)?.payload;
    expect(last?.$case === 'statusUpdate' && last.value.status?.state).toBe(
      TaskState.TASK_STATE_COMPLETED,
    );
  });

  it('passes an input request on, and sends the answer to the same upstream task', async () => {
    const first = asTask(await sdk.client.sendMessage(sendRequest(userMessage('ask'))));
    expect(stateName(first)).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(textOf(first.status?.message?.parts)).toBe('What is your name?');
    const second = asTask(
      await sdk.client.sendMessage(
        sendRequest(userMessage('Ada', { taskId: first.id, contextId: first.contextId })),
      ),
    );
    expect(second.id).toBe(first.id);
    expect(stateName(second)).toBe('TASK_STATE_COMPLETED');
    expect(second.artifacts.map((a) => textOf(a.parts))).toContain('Hello, Ada!');
  });

  it('answers with the upstream’s bare Message', async () => {
    const result = await sdk.client.sendMessage(sendRequest(userMessage('reply hi')));
    expect('role' in result && result.role).toBe(Role.ROLE_AGENT);
    expect('parts' in result && textOf(result.parts)).toBe('reply: hi');
  });

  it('fails when the upstream fails, with its message', async () => {
    const task = asTask(
      await sdk.client.sendMessage(sendRequest(userMessage('fail out of coffee'))),
    );
    expect(stateName(task)).toBe('TASK_STATE_FAILED');
    expect(textOf(task.status?.message?.parts)).toBe('out of coffee');
  });

  it('delivers the webhook the client registered, for every change of a multi-turn task', async () => {
    const url = receiver.url(`/hooks/${agent}`);
    const first = asTask(
      await sdk.client.sendMessage(
        sendRequest(userMessage('ask'), { taskPushNotificationConfig: { url } }),
      ),
    );
    expect(stateName(first)).toBe('TASK_STATE_INPUT_REQUIRED');
    const second = asTask(
      await sdk.client.sendMessage(
        sendRequest(userMessage('Grace', { taskId: first.id, contextId: first.contextId })),
      ),
    );
    expect(stateName(second)).toBe('TASK_STATE_COMPLETED');
    // The task's last change, COMPLETED, reaches the receiver: every delivery before it was sent first.
    await expect
      .poll(() =>
        receiver
          .acceptedOf(first.id)
          .map((post) => JSON.parse(post.body.toString('utf8')) as Record<string, unknown>)
          .some((body) => JSON.stringify(body).includes('TASK_STATE_COMPLETED')),
      )
      .toBe(true);
    const bodies = receiver.acceptedOf(first.id).map((post) => post.body.toString('utf8'));
    expect(bodies.some((body) => body.includes('TASK_STATE_INPUT_REQUIRED'))).toBe(true);
    expect(bodies.some((body) => body.includes('Hello, Grace!'))).toBe(true);
  });

  it('cancels the upstream task when the client cancels', async () => {
    const started = asTask(
      await sdk.client.sendMessage(
        sendRequest(userMessage('slow 60'), { returnImmediately: true }),
      ),
    );
    await expect
      .poll(async () => stateName(await sdk.client.getTask({ tenant: '', id: started.id })), {
        timeout: 30_000,
      })
      .toBe('TASK_STATE_WORKING');
    const canceled = await sdk.client.cancelTask({
      tenant: '',
      id: started.id,
      metadata: undefined,
    });
    await expect
      .poll(async () => stateName(await sdk.client.getTask({ tenant: '', id: started.id })), {
        timeout: 30_000,
      })
      .toBe('TASK_STATE_CANCELED');
    expect(canceled.id).toBe(started.id);
  });
});

describe('an imported agent when things go wrong', () => {
  it('sends the headers it was imported with, and never shows their values', async () => {
    const imported = await importAgent('guarded', {
      cardUrl: guarded.cardUrl,
      headers: { Authorization: `Bearer ${BEARER}` },
    });
    expect(imported.status, JSON.stringify(imported.body)).toBe(201);
    expect(JSON.stringify(imported.body)).not.toContain(BEARER);
    const shown = await admin('GET', '/admin/v1/tenants/demo/agents/guarded/upstream');
    expect(shown.body).toMatchObject({ headerNames: ['Authorization'] });
    expect(JSON.stringify(shown.body)).not.toContain(BEARER);
    const stored = await checks.query<{ sealed: Buffer }>(
      `SELECT headers_sealed AS sealed FROM ops.agent_upstreams WHERE agent_id = 'guarded'`,
    );
    expect(stored.rows[0]?.sealed.toString('latin1')).not.toContain(BEARER);
    const sdk = await clientOf('JSONRPC', 'guarded');
    const task = asTask(await sdk.client.sendMessage(sendRequest(userMessage('echo with a key'))));
    expect(stateName(task)).toBe('TASK_STATE_COMPLETED');
    // The bridge's use of the headers is in the tenant's audit chain.
    const used = await admin(
      'GET',
      '/admin/v1/tenants/demo/audit?operation=bridge.upstream.credentials&resource=agent/guarded',
    );
    expect((used.body['records'] as { outcome: string }[]).map((r) => r.outcome)).toContain('ok');
  });

  it('gets a bearer token with OAuth 2 client credentials, once for many tasks, and never shows the secret', async () => {
    const token = await tokenEndpoint();
    try {
      const imported = await importAgent('oauth', {
        cardUrl: guarded.cardUrl,
        oauth2: { tokenUrl: token.url, clientId: 'bridge', clientSecret: 'cs-1', scope: 'a2a' },
      });
      expect(imported.status, JSON.stringify(imported.body)).toBe(201);
      expect(imported.body['upstream']).toMatchObject({
        oauth2: { tokenUrl: token.url, clientId: 'bridge', scope: 'a2a' },
      });
      expect(JSON.stringify(imported.body)).not.toContain('cs-1');
      const sdk = await clientOf('HTTP+JSON', 'oauth');
      for (const text of ['echo one', 'echo two', 'echo three']) {
        const task = asTask(await sdk.client.sendMessage(sendRequest(userMessage(text))));
        expect(stateName(task)).toBe('TASK_STATE_COMPLETED');
      }
      expect(token.forms).toHaveLength(1);
      await expect
        .poll(async () => {
          const audit = await admin(
            'GET',
            '/admin/v1/tenants/demo/audit?operation=bridge.upstream.token&resource=agent/oauth',
          );
          return (audit.body['records'] as unknown[]).length;
        })
        .toBe(1);
      expect(token.forms[0]?.get('grant_type')).toBe('client_credentials');
      expect(token.forms[0]?.get('scope')).toBe('a2a');
    } finally {
      await token.close();
    }
  });

  it('fails the task with the upstream’s refusal when the credential is wrong, and rotates it by importing again', async () => {
    const wrong = await importAgent('rotated', {
      cardUrl: guarded.cardUrl,
      headers: { Authorization: 'Bearer wrong' },
    });
    expect(wrong.status).toBe(201);
    const sdk = await clientOf('JSONRPC', 'rotated');
    const refused = asTask(await sdk.client.sendMessage(sendRequest(userMessage('echo refused'))));
    expect(stateName(refused)).toBe('TASK_STATE_FAILED');
    expect(textOf(refused.status?.message?.parts)).toMatch(/^Guarded refused: /);
    const rotated = await importAgent('rotated', {
      cardUrl: guarded.cardUrl,
      headers: { Authorization: `Bearer ${BEARER}` },
    });
    expect(rotated.status).toBe(200);
    const version = (rotated.body['upstream'] as { version: number }).version;
    expect(version).toBe(2);
    await bridge.waitForOutput(new RegExp(`bridge serves demo/rotated \\(version 2\\)`), 30_000);
    const after = await sdk.client.sendMessage(sendRequest(userMessage('echo accepted')));
    expect(stateName(asTask(after))).toBe('TASK_STATE_COMPLETED');
  });

  it('fails a task whose upstream went away, saying so, after the retry budget', async () => {
    const imported = await importAgent('fragile', { cardUrl: fragile.cardUrl });
    expect(imported.status).toBe(201);
    expect(imported.body['upstream']).toMatchObject({ streaming: false });
    const sdk = await clientOf('HTTP+JSON', 'fragile');
    const started = asTask(
      await sdk.client.sendMessage(
        sendRequest(userMessage('slow 60'), { returnImmediately: true }),
      ),
    );
    await expect
      .poll(async () => stateName(await sdk.client.getTask({ tenant: '', id: started.id })))
      .toBe('TASK_STATE_WORKING');
    await fragile.process.kill();
    await expect
      .poll(async () => stateName(await sdk.client.getTask({ tenant: '', id: started.id })), {
        timeout: 60_000,
      })
      .toBe('TASK_STATE_FAILED');
    const failed = await sdk.client.getTask({ tenant: '', id: started.id });
    expect(textOf(failed.status?.message?.parts)).toMatch(/Fragile stayed unreachable for 5 s/);
  });

  it('a task survives a SIGKILL of the bridge: another bridge follows the upstream task, which got the message once', async () => {
    const imported = await importAgent('durable', { cardUrl: upstream.cardUrl });
    expect(imported.status).toBe(201);
    // A short lease, so that the killed bridge's task is handed on soon.
    const agent = await admin('GET', '/admin/v1/tenants/demo/agents/durable');
    const put = await admin('PUT', '/admin/v1/tenants/demo/agents/durable', {
      card: agent.body['card'],
      policy: { ...(agent.body['policy'] as object), leaseTtlMs: 3_000 },
    });
    expect(put.status).toBe(200);
    const sdk = await clientOf('JSONRPC', 'durable');
    const messageId = randomUUID();
    const started = asTask(
      await sdk.client.sendMessage(
        sendRequest(userMessage('slow 8', { messageId }), { returnImmediately: true }),
      ),
    );
    // The upstream has the message once the platform task names its upstream task.
    let upstreamTaskId = '';
    await expect
      .poll(
        async () => {
          const task = await sdk.client.getTask({ tenant: '', id: started.id });
          const link = [task.status?.message, ...task.history]
            .map((m) => m?.metadata?.['a2a-platform/upstream'] as { taskId?: string } | undefined)
            .find((l) => l?.taskId);
          upstreamTaskId = link?.taskId ?? '';
          return upstreamTaskId;
        },
        { timeout: 30_000 },
      )
      .not.toBe('');
    await bridge.kill();
    bridge = await startBridge(bridgeEnv());
    await expect
      .poll(async () => stateName(await sdk.client.getTask({ tenant: '', id: started.id })), {
        timeout: 60_000,
      })
      .toBe('TASK_STATE_COMPLETED');
    const done = await sdk.client.getTask({ tenant: '', id: started.id });
    expect(done.artifacts.map((a) => textOf(a.parts))).toContain('done');
    // Straight to the upstream: one task, with the client's message once.
    const direct = await new ClientFactory().createFromUrl(`http://127.0.0.1:${upstream.httpPort}`);
    const upstreamTask = await direct.getTask({ tenant: '', id: upstreamTaskId });
    const sent = upstreamTask.history.filter((m) => m.messageId === messageId);
    expect(sent).toHaveLength(1);
    expect(stateName(upstreamTask)).toBe('TASK_STATE_COMPLETED');
  });
});

describe('an imported agent’s card', () => {
  it('is read again on a schedule: a changed card is a new version, served and audited', async () => {
    const before = await startUpstreamAgent({ UPSTREAM_NAME: 'Before' });
    const imported = await importAgent('renamed', { cardUrl: before.cardUrl });
    expect(imported.status).toBe(201);
    await before.process.stop();
    const after = await startUpstreamAgent({
      UPSTREAM_NAME: 'After',
      UPSTREAM_HTTP_PORT: String(before.httpPort),
      UPSTREAM_GRPC_PORT: String(before.grpcPort),
    });
    try {
      const name = async () =>
        (
          (await (await fetch(`${platform.baseUrl}${cardPath('renamed')}`)).json()) as {
            name: string;
          }
        ).name;
      await expect.poll(name, { timeout: 30_000 }).toBe('After');
      const upstreamNow = await admin('GET', '/admin/v1/tenants/demo/agents/renamed/upstream');
      expect(upstreamNow.body['version']).toBe(2);
      const audit = await admin(
        'GET',
        '/admin/v1/tenants/demo/audit?operation=admin.agent.sync&resource=agent/renamed&outcome=ok',
      );
      const records = audit.body['records'] as { principalId: string }[];
      expect(records.map((r) => r.principalId)).toContain('platform:upstream-sync');
      await bridge.waitForOutput(/bridge serves demo\/renamed \(version 2\)/, 30_000);
    } finally {
      await after.process.stop();
    }
  });
});

describe.each(SDK_TRANSPORTS)('the extended card of an upstream imported over %s', (transport) => {
  const agent = `ext-${transport.toLowerCase().replace('+', '-')}`;

  it('is the platform’s extended card with the upstream’s extended skill; the public card has not got it', async () => {
    const imported = await importAgent(agent, {
      cardUrl: extended.cardUrl,
      binding: transport,
      headers: { Authorization: `Bearer ${BEARER}` },
    });
    expect(imported.status, JSON.stringify(imported.body)).toBe(201);
    expect(imported.body['warnings']).toEqual([]);
    const publicCard = (await (await fetch(`${platform.baseUrl}${cardPath(agent)}`)).json()) as {
      description: string;
      skills: { id: string }[];
      capabilities: { extendedAgentCard?: boolean };
    };
    expect(publicCard.capabilities.extendedAgentCard).toBe(true);
    expect(publicCard.skills.map((s) => s.id)).toEqual(
      expect.arrayContaining(['echo', 'ask', 'fail']),
    );
    expect(publicCard.skills.map((s) => s.id)).not.toContain('vip');
    // The official client on the same binding of the platform, authenticated with the tenant's key.
    const sdk = await sdkClientOver(transport, platform.baseUrl, cardPath(agent), API_KEY);
    sdk.exchanges.length = 0;
    const card = await sdk.client.getAgentCard();
    const ids = card.skills.map((s) => s.id);
    expect(ids).toContain('vip');
    expect(ids.filter((id) => id === 'echo')).toHaveLength(1);
    expect(card.description).toMatch(/Callers with the token also get vip\.$/);
    expect(card.skills.find((s) => s.id === 'vip')?.description).toBe(
      'Listed only in the extended card; answered like echo.',
    );
    // Asked for with GetExtendedAgentCard on that binding (gRPC makes no HTTP exchange).
    const asked = sdk.exchanges.map((e) =>
      e.method === 'POST' ? (e.requestBody as { method: string }).method : new URL(e.url).pathname,
    );
    expect(asked).toEqual(
      transport === 'JSONRPC'
        ? ['GetExtendedAgentCard']
        : transport === 'HTTP+JSON'
          ? [expect.stringMatching(/\/extendedAgentCard$/) as unknown]
          : [],
    );
  });
});

describe('an upstream’s extended card', () => {
  it('is read with a bearer token of OAuth 2 client credentials, on import and on every sync', async () => {
    const token = await tokenEndpoint();
    try {
      const imported = await importAgent('ext-oauth', {
        cardUrl: extended.cardUrl,
        binding: 'GRPC',
        oauth2: { tokenUrl: token.url, clientId: 'bridge', clientSecret: 'cs-1' },
      });
      expect(imported.status, JSON.stringify(imported.body)).toBe(201);
      expect(imported.body['warnings']).toEqual([]);
      const sdk = await sdkClientOver('JSONRPC', platform.baseUrl, cardPath('ext-oauth'), API_KEY);
      expect(sdk.card.skills.map((s) => s.id)).toContain('vip');
      // The schedule reads the cards again each second, the extended one with a new token each time.
      await expect.poll(() => token.forms.length, { timeout: 30_000 }).toBeGreaterThan(1);
      const synced = await admin('POST', '/admin/v1/tenants/demo/agents/ext-oauth/sync');
      expect(synced.status).toBe(200);
      expect(synced.body).toMatchObject({ changed: false, warnings: [] });
    } finally {
      await token.close();
    }
  });

  it('that cannot be read leaves the agent imported without it, says why, and is audited', async () => {
    const imported = await importAgent('ext-refused', {
      cardUrl: extended.cardUrl,
      headers: { Authorization: 'Bearer wrong' },
    });
    expect(imported.status, JSON.stringify(imported.body)).toBe(201);
    expect(imported.body['warnings']).toEqual([
      {
        code: 'EXTENDED_CARD_NOT_READ',
        message: expect.stringMatching(
          /^the upstream declares an extended card, which was not read: GetExtendedAgentCard on JSONRPC failed: .*401.*; the agent is served without one$/,
        ) as unknown,
      },
    ]);
    const publicCard = (await (
      await fetch(`${platform.baseUrl}${cardPath('ext-refused')}`)
    ).json()) as { name: string; capabilities: { extendedAgentCard?: boolean } };
    expect(publicCard.name).toBe('Extended');
    expect(publicCard.capabilities.extendedAgentCard).toBe(false);
    const audit = await admin(
      'GET',
      '/admin/v1/tenants/demo/audit?operation=admin.agent.extended-card&resource=agent/ext-refused',
    );
    const records = audit.body['records'] as {
      outcome: string;
      reason: string;
      principalId: string;
    }[];
    expect(records[0]).toMatchObject({ outcome: 'failed', reason: 'EXTENDED_CARD_NOT_READ' });
    // The admin's import and, each second, the schedule's sync.
    await expect
      .poll(async () => {
        const again = await admin(
          'GET',
          '/admin/v1/tenants/demo/audit?operation=admin.agent.extended-card&resource=agent/ext-refused',
        );
        return (again.body['records'] as { principalId: string }[]).map((r) => r.principalId);
      })
      .toContain('platform:upstream-sync');
  });

  it('is read again on a schedule: a change is a new definition, served and audited', async () => {
    await extended.process.stop();
    extended = await startUpstreamAgent({
      UPSTREAM_NAME: 'Extended',
      UPSTREAM_BEARER_TOKEN: BEARER,
      UPSTREAM_EXTENDED_SKILL: 'gold',
      UPSTREAM_HTTP_PORT: String(extended.httpPort),
      UPSTREAM_GRPC_PORT: String(extended.grpcPort),
    });
    const extendedSkills = async () => {
      const sdk = await sdkClientOver(
        'JSONRPC',
        platform.baseUrl,
        cardPath('ext-jsonrpc'),
        API_KEY,
      );
      return sdk.card.skills.map((s) => s.id);
    };
    await expect.poll(extendedSkills, { timeout: 30_000 }).toContain('gold');
    expect(await extendedSkills()).not.toContain('vip');
    const audit = await admin(
      'GET',
      '/admin/v1/tenants/demo/audit?operation=admin.agent.sync&resource=agent/ext-jsonrpc&outcome=ok',
    );
    const records = audit.body['records'] as { principalId: string }[];
    expect(records.map((r) => r.principalId)).toContain('platform:upstream-sync');
    // Nothing the bridge uses changed: its version stays.
    const upstreamNow = await admin('GET', '/admin/v1/tenants/demo/agents/ext-jsonrpc/upstream');
    expect(upstreamNow.body['version']).toBe(1);
  });
});

describe('a bad upstream', () => {
  it.each([
    ['not-json', /did not answer JSON/],
    ['huge', /exceeds 262144 bytes/],
    ['slow', /took too long/],
    ['redirect', /answered 302 \(a redirect, not followed\)/],
  ])('a card that is %s is a clear import error, and nothing is created', async (kind, error) => {
    const refused = await importAgent(`bad-card-${kind}`, { cardUrl: `${bad.base}/cards/${kind}` });
    expect(refused.status).toBe(400);
    expect(refused.body['error']).toMatchObject({
      message: expect.stringMatching(error) as unknown,
      fields: [{ field: 'cardUrl' }],
    });
    expect((await admin('GET', `/admin/v1/tenants/demo/agents/bad-card-${kind}`)).status).toBe(404);
  });

  it.each([
    ['garbage', /^Bad garbage refused: /],
    ['redirect', /^Bad redirect refused: .*307/],
    [
      'other-task',
      /^Bad other-task sent an event of task task-b while this message went to task task-a/,
    ],
  ] as const)('an upstream that answers %s fails the task, saying so', async (mode, error) => {
    const imported = await importAgent(`bad-${mode}`, { cardUrl: bad.cardUrl(mode) });
    expect(imported.status, JSON.stringify(imported.body)).toBe(201);
    const sdk = await clientOf('JSONRPC', `bad-${mode}`);
    const task = asTask(await sdk.client.sendMessage(sendRequest(userMessage('hello'))));
    expect(stateName(task)).toBe('TASK_STATE_FAILED');
    expect(textOf(task.status?.message?.parts)).toMatch(error);
  });

  it('an upstream that closes its stream early is read again: the task ends as the upstream says, sent once', async () => {
    const imported = await importAgent('bad-early-close', { cardUrl: bad.cardUrl('early-close') });
    expect(imported.status).toBe(201);
    const sdk = await clientOf('JSONRPC', 'bad-early-close');
    const task = asTask(await sdk.client.sendMessage(sendRequest(userMessage('hello'))));
    expect(stateName(task)).toBe('TASK_STATE_COMPLETED');
    expect(task.artifacts.map((a) => textOf(a.parts))).toContain('finished after all');
    const sends = bad.calls.filter((c) => c.mode === 'early-close' && c.method.startsWith('Send'));
    expect(sends).toHaveLength(1);
  });

  it.each(['huge-event', 'huge-answer'] as const)(
    'an upstream that sends a %s over the size limit fails the task saying so; the message is kept and sent once, and the bridge serves on',
    async (mode) => {
      const imported = await importAgent(`bad-${mode}`, { cardUrl: bad.cardUrl(mode) });
      expect(imported.status, JSON.stringify(imported.body)).toBe(201);
      const sdk = await clientOf('JSONRPC', `bad-${mode}`);
      const serving = bridge.pid;
      const messageId = randomUUID();
      const task = asTask(
        await sdk.client.sendMessage(sendRequest(userMessage('hello', { messageId }))),
      );
      expect(stateName(task)).toBe('TASK_STATE_FAILED');
      expect(textOf(task.status?.message?.parts)).toBe(
        `Bad ${mode} sent an event of more than 1048576 bytes (UPSTREAM_EVENT_LIMIT_BYTES)`,
      );
      // The accepted message is the task's, and went upstream once.
      const read = await sdk.client.getTask({ tenant: '', id: task.id, historyLength: 10 });
      expect(read.history.map((m) => m.messageId)).toContain(messageId);
      const sends = bad.calls.filter((c) => c.mode === mode && c.method.startsWith('Send'));
      expect(sends).toHaveLength(1);
      // The same bridge process runs another imported agent's task to its end.
      const good = await clientOf('JSONRPC', 'up-jsonrpc');
      const after = asTask(await good.client.sendMessage(sendRequest(userMessage('echo after'))));
      expect(stateName(after)).toBe('TASK_STATE_COMPLETED');
      expect(bridge.running).toBe(true);
      expect(bridge.pid).toBe(serving);
    },
  );
});

/**
 * Webhook delivery end to end (docs/push.md, docs/adr/0010-push-notifications.md): the standalone platform
 * with its relay and push dispatcher, the real Kafka broker, Redis and a receiver on 127.0.0.1 (allowlisted
 * for the demo tenant). A task of the echo agent with an inline config must reach the receiver as the
 * StreamResponses a stream shows, in generation order, signed, with the config's headers; failures are
 * retried; permanent ones are dead-lettered, listed and redriven by operators through the admin API and its
 * CLI (platform admins, and the tenant's own admins only), every redrive audited.
 */
import { processEnv } from '@lib/config';
import { freePort, kafkaBrokers, repoRoot, uniqueTopic } from '@lib/testing';
import { compactVerify, createLocalJWKSet, type JSONWebKeySet } from 'jose';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTopic } from '../../apps/relay/test/support/topic';
import { eventually, rawRpc, rawUserMessage, request, sentTask } from './support/json-rpc';
import { bootStandalone, type Standalone } from './support/platform';
import { WebhookReceiver, type ReceivedPost } from './support/webhook-receiver';

const ADMIN_TOKEN = `bootstrap-${randomUUID()}`;

let platform: Standalone;
let receiver: WebhookReceiver;
let jwks: ReturnType<typeof createLocalJWKSet>;

/** Sends a message to echo with an inline webhook config; returns the completed task. */
async function echoWithWebhook(config: Record<string, unknown>, text = 'hello webhook') {
  const reply = await rawRpc(
    platform.endpoint('demo', 'echo'),
    request('SendMessage', {
      message: rawUserMessage(text),
      configuration: { taskPushNotificationConfig: config },
    }),
  );
  return sentTask(reply);
}

/** The StreamResponse kinds and states a receiver got for a task, in generation order. */
function shape(posts: readonly ReceivedPost[]): string[] {
  return posts.map((post) => {
    const body = JSON.parse(post.body.toString('utf8')) as Record<
      string,
      { status?: { state: string } }
    >;
    const [kind = ''] = Object.keys(body);
    const state =
      kind === 'task' || kind === 'statusUpdate' ? body[kind]?.status?.state : undefined;
    return state ? `${kind}:${state}` : kind;
  });
}

interface Delivery {
  deliveryId: string;
  taskId: string;
  state: string;
  attempts: number;
}

interface Answer {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

/** One admin API call (`token` null: without credentials). */
async function admin(
  method: string,
  path: string,
  token: string | null = ADMIN_TOKEN,
  body?: unknown,
): Promise<Answer> {
  const response = await fetch(`${platform.baseUrl}/admin/v1${path}`, {
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

/** The deliveries of a list answer. */
const deliveriesOf = (answer: Answer): Delivery[] => answer.body['deliveries'] as Delivery[];

/** `npm run admin -- …`: the operators' command line, against this platform. */
async function cli(args: string[]): Promise<{ code: number | null; stdout: string }> {
  const child = spawn(
    process.execPath,
    [join(repoRoot(), 'dist', 'apps', 'admin-api', 'src', 'cli.js'), ...args],
    {
      env: {
        PATH: processEnv()['PATH'] ?? '',
        ADMIN_API_URL: platform.baseUrl,
        ADMIN_TOKEN,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, stdout };
}

beforeAll(async () => {
  const brokers = await kafkaBrokers();
  const topic = uniqueTopic('push-e2e');
  await createTopic(brokers, topic);
  receiver = await WebhookReceiver.start();
  const suffix = randomUUID().slice(0, 8);
  platform = await bootStandalone('e2e_push', {
    START_RELAY: 'true',
    START_PUSH_DISPATCHER: 'true',
    KAFKA_BROKERS: brokers.join(','),
    TASK_EVENTS_TOPIC: topic,
    RELAY_IDLE_POLL_MS: '20',
    PUSH_CONSUMER_GROUP: `push-e2e-${suffix}`,
    PUSH_QUEUE_PREFIX: `push-e2e-${suffix}`,
    PUSH_ALLOWLIST: JSON.stringify({ demo: ['127.0.0.1'] }),
    PUSH_BACKOFF_BASE_MS: '100',
    PUSH_BACKOFF_CAP_MS: '400',
    PUSH_MAX_ATTEMPTS: '4',
    // Only the redrive's own lane job can send a redriven delivery within the tests' waits.
    PUSH_RECONCILE_INTERVAL_MS: '3600000',
    ADMIN_BOOTSTRAP_TOKEN: ADMIN_TOKEN,
  });
  const keys = (await (
    await fetch(`${platform.baseUrl}/.well-known/jwks.json`)
  ).json()) as JSONWebKeySet;
  jwks = createLocalJWKSet(keys);
});

afterAll(async () => {
  await platform?.close();
  await receiver?.close();
});

describe('push notifications, end to end', () => {
  it('delivers every event a stream shows, in order, signed, with the config headers', async () => {
    receiver.answering = () => 200;
    const task = await echoWithWebhook({
      url: receiver.url('/hooks/echo'),
      token: 'tok-1',
      authentication: { scheme: 'Bearer', credentials: 's3cr3t' },
    });
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    const posts = await eventually(
      () => Promise.resolve(receiver.acceptedOf(task.id)),
      (got) => got.length >= 4,
    );
    expect(shape(posts)).toStrictEqual([
      'task:TASK_STATE_SUBMITTED',
      'statusUpdate:TASK_STATE_WORKING',
      'artifactUpdate',
      'statusUpdate:TASK_STATE_COMPLETED',
    ]);
    const generations = posts.map((p) => p.generation);
    expect(generations).toStrictEqual([...generations].sort((a, b) => a - b));
    for (const post of posts) {
      expect(post.headers['content-type']).toBe('application/a2a+json');
      expect(post.headers['authorization']).toBe('Bearer s3cr3t');
      expect(post.headers['x-a2a-notification-token']).toBe('tok-1');
      expect(post.deliveryId).toMatch(/^[0-9a-f-]{36}$/);
      // The signature covers the exact body bytes; the key is the one the ingress publishes.
      const [header, , signature] = String(post.headers['x-a2a-signature']).split('.');
      const attached = `${header}.${post.body.toString('base64url')}.${signature}`;
      const verified = await compactVerify(attached, jwks);
      expect(Buffer.from(verified.payload).equals(post.body)).toBe(true);
      // The delivery's identity is signed with the body, so a replay cannot change it.
      expect(verified.protectedHeader['a2a']).toStrictEqual({
        deliveryId: post.deliveryId,
        taskId: task.id,
        generation: post.generation,
      });
      const tampered = Buffer.concat([post.body.subarray(0, -1), Buffer.from(' }')]);
      await expect(
        compactVerify(`${header}.${tampered.toString('base64url')}.${signature}`, jwks),
      ).rejects.toThrow();
    }
    expect(new Set(posts.map((p) => p.deliveryId)).size).toBe(posts.length);
  });

  it('retries a receiver that fails the first attempts: exactly one accepted delivery per event, in order', async () => {
    receiver.answering = (_post, attempt) => (attempt < 2 ? 503 : 204);
    const task = await echoWithWebhook({ url: receiver.url('/hooks/flaky') });
    const posts = await eventually(
      () => Promise.resolve(receiver.acceptedOf(task.id)),
      (got) => got.length >= 4,
      30_000,
    );
    expect(shape(posts)).toHaveLength(4);
    const all = receiver.posts.filter((p) => p.taskId === task.id);
    for (const post of posts) {
      const tries = all.filter((p) => p.deliveryId === post.deliveryId);
      expect(tries.map((p) => p.answer)).toStrictEqual([503, 503, 204]);
    }
    const generations = posts.map((p) => p.generation);
    expect(generations).toStrictEqual([...generations].sort((a, b) => a - b));
  });

  it('dead-letters a delivery the receiver refuses, lists it for the operator, and redrives it', async () => {
    receiver.answering = () => 410;
    const task = await echoWithWebhook({ url: receiver.url('/hooks/gone') }, 'refused');
    const dead = await eventually(
      async () =>
        (await admin('GET', `/tenants/demo/push-deliveries?task=${task.id}&state=dead`)).body as {
          deliveries: Delivery[];
        },
      (body) => body.deliveries.length >= 4,
      30_000,
    );
    expect(dead.deliveries[0]).toMatchObject({
      taskId: task.id,
      state: 'dead',
      attempts: 1,
      lastStatus: 410,
      lastError: 'HTTP 410',
    });
    // 410 is not retried: one POST per event.
    expect(receiver.posts.filter((p) => p.taskId === task.id)).toHaveLength(4);
    receiver.answering = () => 200;
    // The operators' command line sees the same, and redrives the oldest one.
    const listed = await cli(['push', 'list', 'demo', '--task', task.id, '--state', 'dead']);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toStrictEqual(dead);
    const first = dead.deliveries[dead.deliveries.length - 1]!;
    const redriven = await cli(['push', 'redrive', 'demo', first.deliveryId]);
    expect(redriven.code).toBe(0);
    expect(JSON.parse(redriven.stdout)).toMatchObject({
      delivery: { deliveryId: first.deliveryId, state: 'pending', attempts: 0 },
    });
    const accepted = await eventually(
      () => Promise.resolve(receiver.acceptedOf(task.id)),
      (got) => got.length === 1,
    );
    expect(accepted[0]?.deliveryId).toBe(first.deliveryId);
    // Delivered now: not dead, so not redriven again.
    const again = await admin('POST', `/tenants/demo/push-deliveries/${first.deliveryId}/redrive`);
    expect(again.status).toBe(404);
    expect(
      (await admin('GET', `/tenants/other/push-deliveries?task=${task.id}`)).body,
    ).toStrictEqual({ deliveries: [] });
  });

  it('a tenant’s admins list and redrive its deliveries; another tenant’s admin finds none, and redrives are audited', async () => {
    const tenantAdmin = async (tenant: string, principalId: string): Promise<string> => {
      const issued = await admin('POST', `/tenants/${tenant}/api-keys`, ADMIN_TOKEN, {
        principalId,
        scopes: ['tenant:admin'],
      });
      expect(issued.status, JSON.stringify(issued.body)).toBe(201);
      return issued.body['secret'] as string;
    };
    expect(
      (await admin('POST', '/tenants', ADMIN_TOKEN, { tenantId: 'acme', displayName: 'Acme' }))
        .status,
    ).toBe(201);
    const demoAdmin = await tenantAdmin('demo', 'demo-ops');
    const acmeAdmin = await tenantAdmin('acme', 'acme-ops');

    receiver.answering = () => 410;
    const task = await echoWithWebhook({ url: receiver.url('/hooks/refusing') }, 'refused again');
    const listPath = `/tenants/demo/push-deliveries?task=${task.id}`;
    const dead = deliveriesOf(
      await eventually(
        () => admin('GET', `${listPath}&state=dead`, demoAdmin),
        (answer) => answer.status === 200 && deliveriesOf(answer).length >= 4,
        30_000,
      ),
    );
    const ids = dead.map((d) => d.deliveryId);

    // Pages of two, one after the other, give the same deliveries.
    const first = await admin('GET', `${listPath}&limit=2`, demoAdmin);
    const cursor = first.body['nextCursor'] as string;
    expect(deliveriesOf(first)).toHaveLength(2);
    const second = await admin('GET', `${listPath}&limit=2&cursor=${cursor}`, demoAdmin);
    expect(second.body['nextCursor']).toBeUndefined();
    expect(
      [...deliveriesOf(first), ...deliveriesOf(second)].map((d) => d.deliveryId),
    ).toStrictEqual(ids);

    // Bad input: 400 naming the parameter.
    for (const [query, field] of [
      ['state=lost', 'state'],
      ['limit=0', 'limit'],
      ['cursor=not-a-cursor', 'cursor'],
    ]) {
      const bad = await admin('GET', `${listPath}&${query}`, demoAdmin);
      expect(bad.status, query).toBe(400);
      expect((bad.body['error'] as { fields: { field: string }[] }).fields).toStrictEqual([
        { field, description: expect.any(String) },
      ]);
    }

    // Another tenant's admin: the tenant does not exist for it, and nothing changes.
    const target = ids[ids.length - 1]!;
    const redrivePath = `/tenants/demo/push-deliveries/${target}/redrive`;
    expect((await admin('GET', listPath, acmeAdmin)).status).toBe(404);
    expect((await admin('POST', redrivePath, acmeAdmin)).status).toBe(404);
    expect((await admin('GET', '/tenants/acme/push-deliveries', acmeAdmin)).body).toStrictEqual({
      deliveries: [],
    });
    // Without credentials: 401 with the Bearer challenge.
    for (const [method, path] of [
      ['GET', listPath],
      ['POST', redrivePath],
    ] as const) {
      const anonymous = await admin(method, path, null);
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer/);
    }
    expect(
      deliveriesOf(await admin('GET', `${listPath}&state=dead`)).map((d) => d.deliveryId),
    ).toStrictEqual(ids);

    // The tenant's own admin redrives; the dispatcher sends it at once.
    receiver.answering = () => 200;
    const redriven = await admin('POST', redrivePath, demoAdmin);
    expect(redriven).toMatchObject({
      status: 200,
      body: { delivery: { deliveryId: target, state: 'pending', attempts: 0 } },
    });
    const accepted = await eventually(
      () => Promise.resolve(receiver.acceptedOf(task.id)),
      (got) => got.length === 1,
    );
    expect(accepted[0]?.deliveryId).toBe(target);
    expect((await admin('POST', redrivePath, demoAdmin)).status).toBe(404);

    const trail = await admin('GET', '/tenants/demo/audit?operation=admin.push-delivery.redrive');
    const records = trail.body['records'] as {
      principalId: string;
      outcome: string;
      resource: string;
    }[];
    expect(records).toContainEqual(
      expect.objectContaining({
        principalId: 'demo-ops',
        outcome: 'ok',
        resource: `push-delivery/${target}`,
      }),
    );
    expect(records).toContainEqual(
      expect.objectContaining({ principalId: 'acme-ops', outcome: 'denied' }),
    );
    expect(records).toContainEqual(
      expect.objectContaining({ principalId: 'demo-ops', outcome: 'failed' }),
    );
  });

  it('the example receiver (examples/push-receiver) verifies, dedupes and prints a task in order', async () => {
    const port = await freePort();
    const example = spawn(
      process.execPath,
      [join(repoRoot(), 'examples', 'push-receiver', 'receiver.mjs')],
      {
        env: {
          PATH: processEnv()['PATH'] ?? '',
          PORT: String(port),
          JWKS_URL: `${platform.baseUrl}/.well-known/jwks.json`,
          TOKEN: 'example-token',
          MAX_EVENTS: '4',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    example.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    example.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => example.once('exit', resolve));
    await eventually(
      () => Promise.resolve(output),
      (text) => text.includes('receiving webhooks'),
    );
    const task = await echoWithWebhook(
      { url: `http://127.0.0.1:${port}/hook`, token: 'example-token' },
      'to the example',
    );
    expect(await exited, output).toBe(0);
    const lines = output.split('\n').filter((line) => line.startsWith(`task ${task.id}`));
    expect(lines.map((line) => line.split('\t').slice(2).join(' '))).toStrictEqual([
      'task TASK_STATE_SUBMITTED',
      'statusUpdate TASK_STATE_WORKING',
      'artifactUpdate',
      'statusUpdate TASK_STATE_COMPLETED',
    ]);
  });

  it('the dispatcher’s own routes are gone: deliveries are operated through the admin API only', async () => {
    const response = await fetch(`${platform.baseUrl}/admin/push/deliveries?tenant=demo`, {
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(response.status).toBe(404);
  });
});

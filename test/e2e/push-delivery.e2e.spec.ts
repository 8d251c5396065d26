/**
 * Webhook delivery end to end (docs/push.md, docs/adr/0010-push-notifications.md): the standalone platform
 * with its relay and push dispatcher, the real Kafka broker, Redis and a receiver on 127.0.0.1 (allowlisted
 * for the demo tenant). A task of the echo agent with an inline config must reach the receiver as the
 * StreamResponses a stream shows, in generation order, signed, with the config's headers; failures are
 * retried; permanent ones are dead-lettered, listed and redriven by the operator.
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

const ADMIN_TOKEN = `push-admin-${randomUUID()}`;

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

async function admin(path: string, method = 'GET'): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${platform.baseUrl}/admin/push/${path}`, {
    method,
    headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  return { status: response.status, body: await response.json() };
}

/** `npm run push -- …`: the operators' command line, against this platform. */
async function cli(args: string[]): Promise<{ code: number | null; stdout: string }> {
  const child = spawn(
    process.execPath,
    [join(repoRoot(), 'dist', 'apps', 'push-dispatcher', 'src', 'cli.js'), ...args],
    {
      env: {
        PATH: processEnv()['PATH'] ?? '',
        PUSH_ADMIN_URL: platform.baseUrl,
        PUSH_ADMIN_TOKEN: ADMIN_TOKEN,
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
    PUSH_ADMIN_TOKEN: ADMIN_TOKEN,
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
        (await admin(`deliveries?tenant=demo&task=${task.id}&state=dead`)).body as {
          deliveries: { deliveryId: string }[];
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
    const listed = await cli(['list', '--tenant', 'demo', '--task', task.id, '--state', 'dead']);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toStrictEqual(dead);
    const first = dead.deliveries[dead.deliveries.length - 1]!;
    const redriven = await cli(['redrive', '--tenant', 'demo', first.deliveryId]);
    expect(redriven.code).toBe(0);
    expect(JSON.parse(redriven.stdout)).toMatchObject({
      delivery: { deliveryId: first.deliveryId, state: 'pending', attempts: 0 },
    });
    const accepted = await eventually(
      () => Promise.resolve(receiver.acceptedOf(task.id)),
      (got) => got.length === 1,
    );
    expect(accepted[0]?.deliveryId).toBe(first.deliveryId);
    expect((await admin(`deliveries/${first.deliveryId}/redrive?tenant=demo`, 'POST')).status).toBe(
      404,
    );
    expect((await admin(`deliveries?tenant=other&task=${task.id}`)).body).toStrictEqual({
      deliveries: [],
    });
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

  it('refuses the admin routes without the operator token', async () => {
    const response = await fetch(`${platform.baseUrl}/admin/push/deliveries?tenant=demo`);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
  });
});

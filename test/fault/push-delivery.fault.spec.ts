/**
 * Webhook delivery under the faults ADR 0010 names (docs/push.md "Delivery guarantees"): the platform
 * (standalone, with its relay) on a private Kafka broker and a private Redis of this suite, push dispatchers
 * as processes of their own, and receivers on 127.0.0.1 (allowlisted for the demo tenant). Every task is an
 * echo task with an inline webhook: four events a stream shows (task, WORKING, artifact, COMPLETED), so four
 * deliveries. After each fault every event must reach the receiver (deduplicated by delivery id: exactly
 * once), in generation order per task; duplicate POSTs are counted and printed, and bounded by the crashes.
 */
import { createPool } from '@lib/event-store';
import {
  createTestDatabase,
  freePort,
  KafkaBroker,
  PlatformProcess,
  startStandalone,
  uniqueTopic,
  type TestDatabase,
} from '@lib/testing';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTopic } from '../../apps/relay/test/support/topic';
import { rawRpc, rawUserMessage, request, sentTask } from '../e2e/support/json-rpc';
import { WebhookReceiver, type ReceivedPost } from '../e2e/support/webhook-receiver';
import { RedisServer } from './support/redis-server';

/** Deliveries per echo task: the task snapshot, WORKING, the artifact, COMPLETED. */
const PER_TASK = 4;
const CLAIM_TIMEOUT_MS = 3_000;
/** A response timeout no attempt reaches within a test (longer than the fault tier's per-test timeout). */
const NEVER_ANSWERED_MS = 600_000;

/** A webhook destination that accepts connections and never answers (nor closes them) until closed. */
class SilentServer {
  private readonly sockets = new Set<Socket>();

  private constructor(private readonly server: Server) {
    server.on('connection', (socket) => this.sockets.add(socket));
  }

  static async start(): Promise<SilentServer> {
    const silent = new SilentServer(createServer());
    await new Promise<void>((resolve) => silent.server.listen(0, '127.0.0.1', resolve));
    return silent;
  }

  /** Connections accepted so far and not destroyed. */
  get connections(): number {
    return [...this.sockets].filter((socket) => !socket.destroyed).length;
  }

  url(path: string): string {
    return `http://127.0.0.1:${(this.server.address() as { port: number }).port}${path}`;
  }

  async close(): Promise<void> {
    this.sockets.forEach((socket) => socket.destroy());
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

let db: TestDatabase;
let broker: KafkaBroker;
let redis: RedisServer;
let standalone: PlatformProcess;
let baseUrl: string;
let receiver: WebhookReceiver;
let checks: Pool;
let keyDir: string;
const dispatchers: PlatformProcess[] = [];
let dispatcherEnv: Record<string, string>;

/** A push dispatcher process (`apps/push-dispatcher/src/main.js`) with the suite's settings and `env`. */
async function startDispatcher(env: Record<string, string> = {}): Promise<PlatformProcess> {
  const proc = new PlatformProcess('push-dispatcher', 'apps/push-dispatcher/src/main.js', [], {
    ...dispatcherEnv,
    ...env,
  }).start();
  dispatchers.push(proc);
  await proc.waitForOutput(/push dispatcher ready/, 60_000);
  return proc;
}

async function stopDispatchers(): Promise<void> {
  await Promise.all(dispatchers.splice(0).map((d) => d.stop()));
}

/** `count` echo tasks, `parallel` at a time, each with an inline webhook to `url`. */
async function echoTasks(count: number, url: string, parallel = 8): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < count) {
        next += 1;
        const reply = await rawRpc(
          `${baseUrl}/agents/demo/echo/jsonrpc`,
          request('SendMessage', {
            message: rawUserMessage(`push fault ${next}`),
            configuration: { taskPushNotificationConfig: { url } },
          }),
        );
        ids.push(sentTask(reply).id);
      }
    }),
  );
  return ids;
}

interface Outcome {
  /** POSTs beyond the first of a delivery id (any answer). */
  duplicatePosts: number;
  /** Delivery ids accepted (2xx) more than once. */
  acceptedTwice: number;
  mostPostsOfOneDelivery: number;
}

/**
 * Waits until every task's four deliveries were accepted, then checks the order per task (the first accepted
 * POST of each delivery, by generation) and counts duplicates.
 */
async function expectAllDelivered(
  label: string,
  tasks: readonly string[],
  timeoutMs = 120_000,
): Promise<Outcome> {
  const deadline = Date.now() + timeoutMs;
  const missing = () => tasks.filter((t) => receiver.acceptedOf(t).length < PER_TASK);
  while (missing().length > 0) {
    if (Date.now() > deadline) {
      throw new Error(
        `${label}: ${missing().length} of ${tasks.length} tasks still miss deliveries after ${timeoutMs} ms`,
      );
    }
    await sleep(100);
  }
  for (const task of tasks) {
    const generations = receiver.acceptedOf(task).map((p) => p.generation);
    expect(generations, `${label}: order of task ${task}`).toStrictEqual(
      [...generations].sort((a, b) => a - b),
    );
    expect(new Set(generations).size, `${label}: task ${task}`).toBe(PER_TASK);
  }
  const mine = new Set(tasks);
  const byDelivery = new Map<string, ReceivedPost[]>();
  for (const post of receiver.posts.filter((p) => mine.has(p.taskId))) {
    byDelivery.set(post.deliveryId, [...(byDelivery.get(post.deliveryId) ?? []), post]);
  }
  const posts = [...byDelivery.values()];
  const outcome: Outcome = {
    duplicatePosts: posts.reduce((sum, list) => sum + list.length - 1, 0),
    acceptedTwice: posts.filter(
      (list) => list.filter((p) => typeof p.answer === 'number' && p.answer < 300).length > 1,
    ).length,
    mostPostsOfOneDelivery: Math.max(...posts.map((list) => list.length)),
  };
  console.log(
    `${label}: ${tasks.length * PER_TASK} deliveries of ${tasks.length} tasks all accepted, in order; ` +
      `duplicate POSTs ${outcome.duplicatePosts}, deliveries accepted twice ${outcome.acceptedTwice}, ` +
      `most POSTs of one delivery ${outcome.mostPostsOfOneDelivery}`,
  );
  return outcome;
}

/**
 * Waits until every delivery of the tasks is `delivered` in Postgres. The receiver counts a POST as accepted
 * when it answers; the dispatcher records the outcome after it reads that answer (in a shared settle batch),
 * so the rows follow the receiver by a moment. A row that never settles fails the wait.
 */
async function expectSettled(tasks: readonly string[]): Promise<void> {
  await expect.poll(() => unsettled(tasks), { timeout: 30_000, interval: 200 }).toBe(0);
}

/** Rows of the tasks' deliveries not `delivered`. */
async function unsettled(tasks: readonly string[]): Promise<number> {
  const result = await checks.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ops.push_deliveries
      WHERE task_id = ANY($1::text[]) AND state <> 'delivered'`,
    [tasks],
  );
  return result.rows[0]?.n ?? -1;
}

beforeAll(async () => {
  broker = await KafkaBroker.start();
  redis = await RedisServer.start(await freePort());
  receiver = await WebhookReceiver.start();
  db = await createTestDatabase('push_faults');
  checks = createPool(db.url, { max: 2, applicationName: 'a2a-test:checks' });
  keyDir = mkdtempSync(join(tmpdir(), 'push-faults-'));
  const keyFile = join(keyDir, 'card-key.pem');
  writeFileSync(
    keyFile,
    generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({
      type: 'pkcs8',
      format: 'pem',
    }),
  );
  const topic = uniqueTopic('push-faults');
  await createTopic([broker.bootstrap], topic);
  const shared = {
    POSTGRES_URL: db.url,
    KAFKA_BROKERS: broker.bootstrap,
    TASK_EVENTS_TOPIC: topic,
    AGENT_CARD_SIGNING_KEY_FILE: keyFile,
  };
  const started = await startStandalone({
    ...shared,
    START_RELAY: 'true',
    RELAY_IDLE_POLL_MS: '50',
  });
  standalone = started.process;
  baseUrl = started.baseUrl;
  dispatcherEnv = {
    ...shared,
    REDIS_URL: redis.url,
    PUSH_QUEUE_PREFIX: `push-faults-${randomUUID().slice(0, 8)}`,
    PUSH_CONSUMER_GROUP: `push-faults-${randomUUID().slice(0, 8)}`,
    PUSH_ALLOWLIST: JSON.stringify({ demo: ['127.0.0.1'] }),
    PUSH_BACKOFF_BASE_MS: '200',
    PUSH_BACKOFF_CAP_MS: '3000',
    PUSH_MAX_ATTEMPTS: '60',
    PUSH_CLAIM_TIMEOUT_MS: String(CLAIM_TIMEOUT_MS),
    PUSH_RECONCILE_INTERVAL_MS: '2000',
  };
}, 240_000);

afterAll(async () => {
  await stopDispatchers();
  await standalone?.stop();
  await receiver?.close();
  await checks?.end();
  await db?.drop();
  await redis?.kill();
  await broker?.destroy();
  if (keyDir) {
    rmSync(keyDir, { recursive: true, force: true });
  }
});

describe('webhook delivery under faults', () => {
  it('two dispatcher replicas share the work: no event delivered twice, order per task kept', async () => {
    await startDispatcher();
    await startDispatcher();
    receiver.answering = () => 200;
    const tasks = await echoTasks(40, receiver.url('/two-replicas'));
    const outcome = await expectAllDelivered('two replicas', tasks);
    expect(outcome.duplicatePosts).toBe(0);
    await expectSettled(tasks);
  });

  it('SIGKILL of a dispatcher mid-delivery: nothing lost, at most one duplicate POST per delivery', async () => {
    receiver.answering = () => 200;
    receiver.delayMs = 150;
    const url = receiver.url('/sigkill');
    const seen = receiver.posts.length;
    const load = echoTasks(40, url, 4);
    const killed = dispatchers[0]!;
    // Kill one replica while deliveries are in flight (the receiver takes 150 ms to answer each POST).
    while (receiver.posts.length < seen + 30) {
      await sleep(20);
    }
    await killed.kill();
    const tasks = await load;
    await killed.start().waitForOutput(/push dispatcher ready/, 60_000);
    receiver.delayMs = 0;
    const outcome = await expectAllDelivered('SIGKILL mid-delivery', tasks);
    expect(outcome.mostPostsOfOneDelivery).toBeLessThanOrEqual(2);
    await expectSettled(tasks);
  });

  it('Redis restarted without its data: the reconciler schedules every open delivery again from Postgres', async () => {
    // Deliveries wait in backoff (their jobs are delayed jobs in Redis) while the receiver fails.
    receiver.answering = () => 503;
    const tasks = await echoTasks(10, receiver.url('/redis-loss'));
    const mine = new Set(tasks);
    while (receiver.posts.filter((p) => mine.has(p.taskId)).length < tasks.length) {
      await sleep(50);
    }
    await redis.kill();
    await redis.launch();
    receiver.answering = () => 200;
    const outcome = await expectAllDelivered('Redis restart with data loss', tasks);
    expect(outcome.acceptedTwice).toBe(0);
    await expectSettled(tasks);
  });

  it('a Kafka broker restart: the relay and the consumers ride it out, every event delivered', async () => {
    receiver.answering = () => 200;
    const url = receiver.url('/broker-restart');
    const before = await echoTasks(10, url);
    const [during] = await Promise.all([echoTasks(20, url, 2), broker.restart()]);
    const after = await echoTasks(10, url);
    const outcome = await expectAllDelivered('Kafka broker restart', [
      ...before,
      ...during,
      ...after,
    ]);
    expect(outcome.acceptedTwice).toBe(0);
  });

  it('a receiver down for 60 s gets every event after it returns, in order per task', async () => {
    const port = receiver.port;
    const old = receiver;
    await old.close();
    const url = `http://127.0.0.1:${port}/down`;
    const tasks = await echoTasks(10, url);
    await sleep(60_000);
    receiver = await WebhookReceiver.start(() => 200, port);
    const outcome = await expectAllDelivered('receiver down 60 s', tasks, 60_000);
    expect(outcome.acceptedTwice).toBe(0);
    await expectSettled(tasks);
  });

  it('a destination that accepts and never answers dead-letters on schedule, and a healthy receiver beside it gets everything', async () => {
    await stopDispatchers();
    await startDispatcher({
      PUSH_RESPONSE_TIMEOUT_MS: '1000',
      PUSH_MAX_ATTEMPTS: '3',
      PUSH_BACKOFF_BASE_MS: '100',
      PUSH_BACKOFF_CAP_MS: '200',
    });
    const silent = await SilentServer.start();
    try {
      receiver.answering = () => 200;
      const started = Date.now();
      const [stuck, healthy] = await Promise.all([
        echoTasks(3, silent.url('/never'), 3),
        echoTasks(20, receiver.url('/healthy'), 4),
      ]);
      await expectAllDelivered('healthy beside a silent destination', healthy, 60_000);
      const healthyMs = Date.now() - started;
      // Three attempts of 1 s each plus short backoffs per delivery; the lane's four events one after another.
      const dead = async () =>
        (
          await checks.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM ops.push_deliveries
              WHERE task_id = ANY($1::text[]) AND state = 'dead' AND attempts = 3`,
            [stuck],
          )
        ).rows[0]?.n ?? 0;
      const deadline = Date.now() + 60_000;
      while ((await dead()) < stuck.length * PER_TASK && Date.now() < deadline) {
        await sleep(200);
      }
      const deadMs = Date.now() - started;
      console.log(
        `silent destination: healthy receiver got all ${healthy.length * PER_TASK} deliveries in ` +
          `${healthyMs} ms; the ${stuck.length * PER_TASK} silent deliveries were dead after ${deadMs} ms`,
      );
      expect(await dead()).toBe(stuck.length * PER_TASK);
    } finally {
      await silent.close();
    }
  });

  it('a destination that never answers holds up only its own deliveries: a healthy receiver gets every one meanwhile', async () => {
    // The silent destination's first attempts hang for longer than this test waits: a healthy delivery that
    // had to wait for one of them could not arrive in time.
    await stopDispatchers();
    await startDispatcher({
      PUSH_RESPONSE_TIMEOUT_MS: String(NEVER_ANSWERED_MS),
      PUSH_CLAIM_TIMEOUT_MS: String(2 * NEVER_ANSWERED_MS),
    });
    const silent = await SilentServer.start();
    try {
      receiver.answering = () => 200;
      const stuck = await echoTasks(3, silent.url('/hang'), 3);
      // Each silent lane's first delivery is being attempted, and hangs.
      const attempted = Date.now() + 60_000;
      while (silent.connections < stuck.length) {
        if (Date.now() > attempted) {
          throw new Error(`${silent.connections} of ${stuck.length} silent deliveries attempted`);
        }
        await sleep(50);
      }
      const healthy = await echoTasks(20, receiver.url('/beside-hanging'), 4);
      await expectAllDelivered('healthy beside hanging deliveries', healthy, 60_000);
      // The silent deliveries are still on their first attempt: none answered, none settled.
      const settled = await checks.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ops.push_deliveries
          WHERE task_id = ANY($1::text[]) AND state IN ('delivered', 'dead')`,
        [stuck],
      );
      expect(settled.rows[0]?.n).toBe(0);
      expect(silent.connections).toBeGreaterThanOrEqual(stuck.length);
    } finally {
      await silent.close();
    }
  });
});

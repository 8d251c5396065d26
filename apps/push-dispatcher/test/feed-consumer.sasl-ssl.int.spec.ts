/**
 * The push dispatcher's feed consumer against a broker secured like the production cluster (Strimzi's TLS
 * listener with SCRAM-SHA-512 users and ACLs): a private broker of this file (`KafkaBroker` with a SASL_SSL
 * listener, its CA made at start), the dispatcher composed as its main composes it (real Postgres and Redis,
 * a database and a queue prefix of its own), configured through environment variables as its main reads
 * them. Records are written on the broker's plaintext listener, whose anonymous principal is its super user.
 *
 * With the CA file and its user's password, the consumer joins its group over SASL_SSL and derives a delivery
 * from a record; with a wrong password it is refused, says so, stays out of its group (what its Kafka dependency
 * check shows) and keeps running.
 */
import type { PushDispatcherConfig } from '@lib/config';
import { signingKey } from '@lib/signing';
import { createTestDatabase, KafkaBroker, uniqueTopic, type TestDatabase } from '@lib/testing';
import type { INestApplicationContext, LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AclOperationTypes, Kafka, logLevel } from 'kafkajs';
import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FeedConsumer } from '../src/feed-consumer';
import { pushDispatcherConfigFromEnv, PushDispatcherModule } from '../src/push-dispatcher.module';
import { PUSH_SIGNING_KEY } from '../src/tokens';

// A broker start takes about 20 s here, more on a busy machine; the first run also fetches its jars.
const BROKER_TIMEOUT_MS = 240_000;
const OUTCOME_TIMEOUT_MS = 60_000;
const USER = 'push-dispatcher';
const PASSWORD = randomBytes(12).toString('hex');
const GROUP = `push-sasl-ssl-${randomBytes(4).toString('hex')}`;
const TENANT = 'acme';

let broker: KafkaBroker;
let db: TestDatabase;
const topic = uniqueTopic('push-sasl-ssl');
const apps: INestApplicationContext[] = [];
/** Every message the dispatchers of this file logged at warn or above. */
const warnings: string[] = [];
const logger: LoggerService = {
  log: () => undefined,
  warn: (message: unknown) => warnings.push(String(message)),
  error: (message: unknown) => warnings.push(String(message)),
};

/** The dispatcher's configuration from environment variables (undefined: unset), as its main loads it. */
function dispatcherEnv(env: Record<string, string | undefined>): PushDispatcherConfig {
  return pushDispatcherConfigFromEnv({
    POSTGRES_URL: db.url,
    KAFKA_BROKERS: broker.secureBootstrap,
    KAFKA_TLS_CA_FILE: broker.caFile,
    KAFKA_SASL_MECHANISM: 'SCRAM-SHA-512',
    KAFKA_SASL_USERNAME: USER,
    KAFKA_SASL_PASSWORD: PASSWORD,
    TASK_EVENTS_TOPIC: topic,
    PUSH_CONSUMER_GROUP: GROUP,
    PUSH_QUEUE_PREFIX: `a2a-push-sasl-${randomBytes(4).toString('hex')}`,
    ...env,
  });
}

/** A dispatcher in-process, as its main composes it; its feed consumer. */
async function dispatcherWith(env: Record<string, string | undefined>): Promise<FeedConsumer> {
  const key = signingKey(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey);
  const app = await NestFactory.createApplicationContext(
    PushDispatcherModule.forRoot(dispatcherEnv(env), { provide: PUSH_SIGNING_KEY, useValue: key }),
    { logger },
  );
  apps.push(app);
  await app.init();
  return app.get(FeedConsumer);
}

/** A client of the plaintext listener, whose anonymous user is the broker's super user. */
function superUser(): Kafka {
  return new Kafka({ brokers: [broker.bootstrap], logLevel: logLevel.NOTHING });
}

beforeAll(async () => {
  broker = await KafkaBroker.start({ secure: { scramUsers: { [USER]: PASSWORD } } });
  // What the push dispatcher's KafkaUser is granted (k8s/operators/strimzi/users.yaml).
  await broker.prepare([topic], USER, [
    {
      resource: 'topic',
      name: topic,
      operations: [AclOperationTypes.READ, AclOperationTypes.DESCRIBE],
    },
    { resource: 'group', name: GROUP, operations: [AclOperationTypes.READ] },
  ]);
  db = await createTestDatabase('push_sasl_ssl');
}, BROKER_TIMEOUT_MS);

afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
  await db?.drop();
  await broker?.destroy();
}, BROKER_TIMEOUT_MS);

describe('push dispatcher over SASL_SSL with SCRAM-SHA-512', () => {
  it('joins its group trusting the CA file, and derives the delivery of a record', async () => {
    const taskId = randomUUID();
    const eventId = randomUUID();
    // A webhook the SSRF guard refuses (loopback): the delivery is derived, then dies; no request leaves.
    await db.pool.query(
      `INSERT INTO ops.push_configs
         (tenant_id, task_id, config_id, url, token, authentication, from_generation, created_by)
       VALUES ($1, $2, 'hook', 'https://127.0.0.1:9/hook', 'tok', '{"scheme": "Bearer", "credentials": "x"}',
               0, 'alice')`,
      [TENANT, taskId],
    );
    const feed = await dispatcherWith({});
    await expect.poll(() => feed.joined, { timeout: OUTCOME_TIMEOUT_MS }).toBe(true);

    const producer = superUser().producer();
    await producer.connect();
    try {
      await producer.send({
        topic,
        messages: [
          {
            key: taskId,
            value: JSON.stringify({
              schema: 'a2a-platform.task-event',
              schemaVersion: 1,
              eventId,
              tenantId: TENANT,
              taskId,
              generation: 1,
              type: 'TaskStatusUpdated',
              streamResponse: {
                statusUpdate: { taskId, status: { state: 'TASK_STATE_WORKING' } },
              },
            }),
          },
        ],
      });
    } finally {
      await producer.disconnect();
    }
    await expect
      .poll(
        async () =>
          (
            await db.pool.query<{ n: number }>(
              'SELECT count(*)::int AS n FROM ops.push_deliveries WHERE task_id = $1 AND event_id = $2',
              [taskId, eventId],
            )
          ).rows[0]?.n,
        { timeout: OUTCOME_TIMEOUT_MS },
      )
      .toBe(1);
  });

  it('is refused with a wrong password, says so, stays out of its group and keeps running', async () => {
    const wrong = randomBytes(12).toString('hex');
    const feed = await dispatcherWith({
      KAFKA_SASL_PASSWORD: wrong,
      PUSH_CONSUMER_GROUP: `${GROUP}-wrong`,
    });
    const refused = (warning: string): boolean =>
      warning.includes('feed consumer not started') &&
      warning.includes('SASL SCRAM SHA512 authentication failed');
    await expect.poll(() => warnings.some(refused), { timeout: OUTCOME_TIMEOUT_MS }).toBe(true);
    expect(feed.joined).toBe(false);
    expect(warnings.join('\n')).not.toContain(wrong);
  });
});

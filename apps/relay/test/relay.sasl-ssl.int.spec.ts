/**
 * The relay against a broker secured like the production cluster (Strimzi's TLS listener with SCRAM-SHA-512
 * users and ACLs): a private broker of this file (`KafkaBroker` with a SASL_SSL listener, its CA made at
 * start), configured through environment variables as its main reads them. The topic is read back on
 * the broker's plaintext listener, whose anonymous principal is its super user.
 *
 * It publishes the log over SASL_SSL with the CA file and a password file; a wrong password, a topic its user
 * has no ACL for and a CA that did not sign the broker's certificate each leave the relay running and
 * reporting the broker's refusal (what its Kafka dependency check shows), never crashing it.
 */
import type { RelayConfig } from '@lib/config';
import { createTestDatabase, KafkaBroker, uniqueTopic, type TestDatabase } from '@lib/testing';
import { AclOperationTypes } from 'kafkajs';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { relayConfigFromEnv } from '../src/relay.module';
import { startRelay, type InProcessRelay } from './support/relay-app';
import { newTasks, readLog, waitForCatchUp, writeTransaction } from './support/task-log';
import { compareTopicToLog, describeComparison, readTopic } from './support/topic';

// A broker start takes about 20 s here, more on a busy machine; the first run also fetches its jars.
const BROKER_TIMEOUT_MS = 240_000;
// The relay's producer retries a connection error 8 times (about 30 s) before its round fails.
const REPORT_TIMEOUT_MS = 90_000;
const USER = 'relay';
const PASSWORD = randomBytes(12).toString('hex');

let broker: KafkaBroker;
let db: TestDatabase;
let dir: string;
let passwordFile: string;
const topic = uniqueTopic('relay-sasl-ssl');
const forbiddenTopic = uniqueTopic('relay-sasl-ssl-forbidden');
const relays: InProcessRelay[] = [];

/** The relay's configuration from environment variables (undefined: unset), as its main loads it. */
function relayEnv(env: Record<string, string | undefined>): RelayConfig {
  return relayConfigFromEnv({
    POSTGRES_URL: db.url,
    KAFKA_BROKERS: broker.secureBootstrap,
    KAFKA_TLS_CA_FILE: broker.caFile,
    KAFKA_SASL_MECHANISM: 'SCRAM-SHA-512',
    KAFKA_SASL_USERNAME: USER,
    KAFKA_SASL_PASSWORD_FILE: passwordFile,
    TASK_EVENTS_TOPIC: topic,
    // A relay name of its own per relay: each one is the leader of its own checkpoint.
    RELAY_NAME: `sasl-${randomBytes(4).toString('hex')}`,
    RELAY_IDLE_POLL_MS: '50',
    ...env,
  });
}

async function relayWith(
  env: Record<string, string | undefined>,
): Promise<{ relay: InProcessRelay; config: RelayConfig }> {
  const config = relayEnv(env);
  const relay = await startRelay(config);
  relays.push(relay);
  return { relay, config };
}

beforeAll(async () => {
  broker = await KafkaBroker.start({ secure: { scramUsers: { [USER]: PASSWORD } } });
  dir = await mkdtemp(join(tmpdir(), 'relay-sasl-ssl-'));
  passwordFile = join(dir, 'password');
  // As a mounted Secret written by hand may be: with a line break at the end.
  await writeFile(passwordFile, `${PASSWORD}\n`);
  // What a Strimzi KafkaUser of the relay is granted: its topic, nothing else.
  await broker.prepare([topic, forbiddenTopic], USER, [
    {
      resource: 'topic',
      name: topic,
      operations: [AclOperationTypes.WRITE, AclOperationTypes.DESCRIBE],
    },
  ]);
  db = await createTestDatabase('relay_sasl_ssl');
}, BROKER_TIMEOUT_MS);

afterAll(async () => {
  await Promise.all(relays.map((relay) => relay.close()));
  await db?.drop();
  await broker?.destroy();
  await rm(dir, { recursive: true, force: true });
}, BROKER_TIMEOUT_MS);

describe('relay over SASL_SSL with SCRAM-SHA-512', () => {
  it('publishes every event of the log, trusting the CA file, with the password from a file', async () => {
    const { relay, config } = await relayWith({});
    const tasks = newTasks(['acme'], 4);
    await writeTransaction(db.pool, { tasks, eventsPerTask: 3, notify: true });
    await waitForCatchUp(db.pool, config.RELAY_NAME, 60_000);
    const log = await readLog(db.pool);
    const records = await readTopic([broker.bootstrap], topic);
    const result = compareTopicToLog(log, records, new Map(tasks.map((t) => [t.taskId, t])));
    expect(result.ok, describeComparison(result)).toBe(true);
    expect(records).toHaveLength(12);
    expect(relay.service.failure).toBeNull();
  });

  it('reports a wrong password as an authentication failure, and keeps running', async () => {
    const wrong = randomBytes(12).toString('hex');
    const { relay } = await relayWith({
      KAFKA_SASL_PASSWORD_FILE: undefined,
      KAFKA_SASL_PASSWORD: wrong,
    });
    await expect
      .poll(() => relay.service.failure, { timeout: REPORT_TIMEOUT_MS })
      .toMatch(/SASL SCRAM SHA512 authentication failed/);
    expect(relay.service.failure).not.toContain(wrong);
  });

  it('reports a topic its user has no ACL for as refused, and keeps running', async () => {
    const { relay } = await relayWith({ TASK_EVENTS_TOPIC: forbiddenTopic });
    // Something to publish, whatever ran before.
    await writeTransaction(db.pool, {
      tasks: newTasks(['acme'], 1),
      eventsPerTask: 1,
      notify: true,
    });
    await expect
      .poll(() => relay.service.failure, { timeout: REPORT_TIMEOUT_MS })
      .toMatch(/Not authorized to access topics/);
  });

  it('fails the TLS handshake with a CA that did not sign the broker certificate', async () => {
    const otherCa = join(dir, 'other-ca.crt');
    await promisify(execFile)('openssl', [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=another CA',
      '-keyout',
      join(dir, 'other-ca.key'),
      '-out',
      otherCa,
    ]);
    const { relay } = await relayWith({ KAFKA_TLS_CA_FILE: otherCa });
    await expect
      .poll(() => relay.service.failure, { timeout: REPORT_TIMEOUT_MS })
      .toMatch(/self[- ]signed certificate|unable to (get|verify)/i);
  });
});

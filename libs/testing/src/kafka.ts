import { loadConfig } from '@lib/config';
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { connect } from 'node:net';
import { homedir } from 'node:os';
import type { StartedTestContainer } from 'testcontainers';
import { z } from 'zod';
import { freePort } from './platform-processes';

/**
 * The Apache Kafka version the project runs against: the broker of `scripts/kafka/broker.sh` (pinned in
 * `scripts/kafka/pom.xml`) and the `apache/kafka` image of the Testcontainers fallback. Keep them equal; see
 * docs/adr/0004-kafka-broker-and-client.md.
 */
export const KAFKA_VERSION = '4.3.1';

/** Where the development and CI broker listens (`npm run kafka:start`). */
export const LOCAL_KAFKA_BROKER = '127.0.0.1:9092';

const kafkaTestSchema = z.object({
  /** Comma-separated host:port list; when set, tests use exactly these brokers. */
  KAFKA_BROKERS: z.string().trim().optional(),
  /** Docker endpoint, as the Docker CLI and Testcontainers read it. */
  DOCKER_HOST: z.string().trim().optional(),
});

let brokers: Promise<string[]> | undefined;
let container: StartedTestContainer | undefined;

/**
 * Bootstrap brokers for a test file, found in this order:
 * 1. `KAFKA_BROKERS` (comma-separated), as CI sets it after `scripts/kafka/broker.sh start`;
 * 2. the local broker on 127.0.0.1:9092, when it accepts connections;
 * 3. where a Docker engine is reachable, a Testcontainers `apache/kafka:KAFKA_VERSION` container started once
 *    per test process (the `testcontainers` package is imported only then) and removed when it exits;
 * 4. otherwise it throws, saying how to start the broker.
 */
export function kafkaBrokers(): Promise<string[]> {
  brokers ??= findBrokers().catch((err: unknown) => {
    brokers = undefined;
    throw err;
  });
  return brokers;
}

/** A topic name of its own for one test file: `<prefix>-<random hex>`, limited to Kafka's legal characters. */
export function uniqueTopic(prefix: string): string {
  const clean =
    prefix
      .replace(/[^a-zA-Z0-9_-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 200) || 'test';
  return `${clean}-${randomBytes(6).toString('hex')}`;
}

/** Stops the Testcontainers broker if this process started one (a no-op otherwise). */
export async function stopKafkaContainer(): Promise<void> {
  const started = container;
  container = undefined;
  brokers = undefined;
  await started?.stop();
}

async function findBrokers(): Promise<string[]> {
  const config = loadConfig(kafkaTestSchema);
  if (config.KAFKA_BROKERS) {
    const list = config.KAFKA_BROKERS.split(',')
      .map((b) => b.trim())
      .filter((b) => b.length > 0);
    if (list.length > 0) {
      return list;
    }
  }
  const [host, port] = LOCAL_KAFKA_BROKER.split(':') as [string, string];
  if (await accepts(host, Number(port))) {
    return [LOCAL_KAFKA_BROKER];
  }
  if (await dockerReachable(config.DOCKER_HOST)) {
    return [await startContainer()];
  }
  throw new Error(
    `No Kafka broker for the tests: KAFKA_BROKERS is not set, nothing accepts connections on ` +
      `${LOCAL_KAFKA_BROKER} and no Docker engine is reachable. Start the development broker with ` +
      '`npm run kafka:start` (scripts/kafka/broker.sh, Kafka ' +
      `${KAFKA_VERSION}), or set KAFKA_BROKERS=host:port[,host:port].`,
  );
}

function accepts(host: string, port: number, timeoutMs = 1_000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** True when DOCKER_HOST is set (Testcontainers then reports its own errors) or a local socket answers /_ping. */
async function dockerReachable(dockerHost: string | undefined): Promise<boolean> {
  if (dockerHost) {
    return true;
  }
  for (const socketPath of ['/var/run/docker.sock', `${homedir()}/.docker/run/docker.sock`]) {
    if (await pingDocker(socketPath)) {
      return true;
    }
  }
  return false;
}

function pingDocker(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ socketPath, path: '/_ping', method: 'GET', timeout: 2_000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}

/**
 * A single-node KRaft broker in `apache/kafka:KAFKA_VERSION`, configured like scripts/kafka/broker.sh. The
 * client listener uses the same port number inside and outside the container, so the advertised address is
 * known before the container starts; replication between the node and itself uses a container-local listener.
 */
async function startContainer(): Promise<string> {
  let tc: typeof import('testcontainers');
  try {
    tc = await import('testcontainers');
  } catch (err) {
    throw new Error(
      'A Docker engine is reachable but the `testcontainers` package is not installed (devDependency): run ' +
        `\`npm ci\`, or start the local broker with \`npm run kafka:start\`. Cause: ${String(err)}`,
    );
  }
  const host = (await tc.getContainerRuntimeClient()).info.containerRuntime.host;
  const port = await freePort();
  const started = await new tc.GenericContainer(`apache/kafka:${KAFKA_VERSION}`)
    .withExposedPorts({ container: port, host: port })
    .withEnvironment({
      CLUSTER_ID: 'a2aPlatformTestKafka0A',
      KAFKA_NODE_ID: '1',
      KAFKA_PROCESS_ROLES: 'broker,controller',
      KAFKA_CONTROLLER_QUORUM_VOTERS: '1@localhost:9093',
      KAFKA_LISTENERS: `PLAINTEXT://0.0.0.0:${port},BROKER://0.0.0.0:9094,CONTROLLER://0.0.0.0:9093`,
      KAFKA_ADVERTISED_LISTENERS: `PLAINTEXT://${host}:${port},BROKER://localhost:9094`,
      KAFKA_LISTENER_SECURITY_PROTOCOL_MAP:
        'PLAINTEXT:PLAINTEXT,BROKER:PLAINTEXT,CONTROLLER:PLAINTEXT',
      KAFKA_INTER_BROKER_LISTENER_NAME: 'BROKER',
      KAFKA_CONTROLLER_LISTENER_NAMES: 'CONTROLLER',
      KAFKA_AUTO_CREATE_TOPICS_ENABLE: 'true',
      KAFKA_NUM_PARTITIONS: '3',
      KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: '1',
      KAFKA_OFFSETS_TOPIC_NUM_PARTITIONS: '3',
      KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR: '1',
      KAFKA_TRANSACTION_STATE_LOG_MIN_ISR: '1',
      KAFKA_SHARE_COORDINATOR_STATE_TOPIC_REPLICATION_FACTOR: '1',
      KAFKA_SHARE_COORDINATOR_STATE_TOPIC_MIN_ISR: '1',
      KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS: '0',
    })
    .withWaitStrategy(tc.Wait.forLogMessage(/Kafka Server started/))
    .withStartupTimeout(120_000)
    .start();
  container = started;
  return `${host}:${port}`;
}

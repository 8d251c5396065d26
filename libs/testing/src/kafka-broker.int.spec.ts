import { Kafka, logLevel } from 'kafkajs';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uniqueTopic } from './kafka';
import { KafkaBroker } from './kafka-broker';

// A broker start takes about 15 s on a slow machine; a restart is a graceful stop plus a start.
const BROKER_TIMEOUT_MS = 180_000;

describe('KafkaBroker', () => {
  let broker: KafkaBroker;
  const topic = uniqueTopic('kafka-broker-test');

  function kafka(): Kafka {
    return new Kafka({
      clientId: 'kafka-broker-test',
      brokers: [broker.bootstrap],
      logLevel: logLevel.NOTHING,
      retry: { retries: 10, initialRetryTime: 200, maxRetryTime: 2_000 },
    });
  }

  async function produce(value: string): Promise<void> {
    const producer = kafka().producer();
    await producer.connect();
    try {
      await producer.send({ topic, messages: [{ value }] });
    } finally {
      await producer.disconnect();
    }
  }

  /** Every value on the (one-partition) topic, read from the beginning by a new consumer group. */
  async function consumeAll(expected: number): Promise<string[]> {
    const consumer = kafka().consumer({
      groupId: `kafka-broker-test-${randomBytes(4).toString('hex')}`,
    });
    const values: string[] = [];
    await consumer.connect();
    try {
      await consumer.subscribe({ topic, fromBeginning: true });
      const all = new Promise<void>((resolve) => {
        void consumer.run({
          eachMessage: ({ message }) => {
            values.push(message.value?.toString() ?? '');
            if (values.length >= expected) {
              resolve();
            }
            return Promise.resolve();
          },
        });
      });
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, 30_000)));
      await Promise.race([all, timeout]);
      clearTimeout(timer);
      return values;
    } finally {
      await consumer.disconnect();
    }
  }

  function accepts(hostPort: string): Promise<boolean> {
    const [host, port] = hostPort.split(':') as [string, string];
    return new Promise((resolve) => {
      const socket = connect({ host, port: Number(port) });
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
  }

  beforeAll(async () => {
    broker = await KafkaBroker.start();
  }, BROKER_TIMEOUT_MS);

  afterAll(async () => {
    await broker.destroy();
  }, BROKER_TIMEOUT_MS);

  it(
    'serves produce and consume on a port of its own, not the shared 9092',
    async () => {
      expect(broker.running).toBe(true);
      expect(broker.bootstrap).toMatch(/^127\.0\.0\.1:\d+$/);
      expect(broker.bootstrap).not.toBe('127.0.0.1:9092');
      expect(() => broker.secureBootstrap).toThrow(/without a secure listener/);
      const admin = kafka().admin();
      await admin.connect();
      try {
        await admin.createTopics({
          topics: [{ topic, numPartitions: 1, replicationFactor: 1 }],
          waitForLeaders: true,
        });
      } finally {
        await admin.disconnect();
      }
      await produce('one');
      expect(await consumeAll(1)).toEqual(['one']);
    },
    BROKER_TIMEOUT_MS,
  );

  it(
    'keeps its records across a graceful restart on the same port',
    async () => {
      const bootstrap = broker.bootstrap;
      await broker.restart();
      expect(broker.running).toBe(true);
      expect(broker.bootstrap).toBe(bootstrap);
      await produce('two');
      expect(await consumeAll(2)).toEqual(['one', 'two']);
    },
    BROKER_TIMEOUT_MS,
  );

  it(
    'comes back after a kill (SIGKILL) with its acknowledged records',
    async () => {
      await broker.kill();
      expect(broker.running).toBe(false);
      expect(await accepts(broker.bootstrap)).toBe(false);
      await broker.startAgain();
      await produce('three');
      expect(await consumeAll(3)).toEqual(['one', 'two', 'three']);
    },
    BROKER_TIMEOUT_MS,
  );

  it(
    'destroy stops the broker and removes its state dir, and may be called twice',
    async () => {
      await broker.destroy();
      expect(broker.running).toBe(false);
      expect(existsSync(broker.stateDir)).toBe(false);
      expect(await accepts(broker.bootstrap)).toBe(false);
      await expect(broker.destroy()).resolves.toBeUndefined();
    },
    BROKER_TIMEOUT_MS,
  );
});

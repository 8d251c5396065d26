// Smoke test of the Kafka broker with the project's Node client (kafkajs), run by `broker.sh start` after a
// fresh start and usable on its own:  node scripts/kafka/smoke.mjs   (KAFKA_BROKERS=host:port,... optional)
// Creates a topic, produces 100 keyed messages with headers (idempotent producer, acks=all), reads them back
// with a consumer group from the beginning, checks keys, values, headers and per-key order, deletes the topic.
import kafkajs from 'kafkajs';
import { randomBytes } from 'node:crypto';

const { Kafka, logLevel } = kafkajs;
const brokers = (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',').map((b) => b.trim());
const COUNT = 100;
const KEYS = 10;
const TIMEOUT_MS = 60_000;

const suffix = randomBytes(4).toString('hex');
const topic = `smoke-${suffix}`;
const kafka = new Kafka({
  clientId: 'a2a-kafka-smoke',
  brokers,
  logLevel: logLevel.NOTHING,
  retry: { retries: 8 },
});
const admin = kafka.admin();
const producer = kafka.producer({
  idempotent: true,
  maxInFlightRequests: 1,
  allowAutoTopicCreation: false,
});
const consumer = kafka.consumer({ groupId: `smoke-${suffix}` });
const started = Date.now();

async function main() {
  await admin.connect();
  await admin.createTopics({
    topics: [{ topic, numPartitions: 3, replicationFactor: 1 }],
    waitForLeaders: true,
  });

  await producer.connect();
  const messages = Array.from({ length: COUNT }, (_, i) => ({
    key: `key-${i % KEYS}`,
    value: JSON.stringify({ i }),
    headers: { 'x-seq': String(i), 'x-source': 'smoke' },
  }));
  await producer.send({ topic, acks: -1, messages });

  const offsets = await admin.fetchTopicOffsets(topic);
  const stored = offsets.reduce((n, p) => n + Number(p.high) - Number(p.low), 0);
  if (stored !== COUNT) {
    throw new Error(`fetchTopicOffsets counts ${stored} messages, expected ${COUNT}`);
  }

  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const received = [];
  await new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`only ${received.length}/${COUNT} messages within ${TIMEOUT_MS} ms`)),
      TIMEOUT_MS,
    );
    consumer
      .run({
        eachMessage: async ({ partition, message }) => {
          received.push({
            partition,
            key: message.key?.toString(),
            i: JSON.parse(message.value.toString()).i,
            seq: message.headers?.['x-seq']?.toString(),
            source: message.headers?.['x-source']?.toString(),
          });
          if (received.length === COUNT) {
            clearTimeout(timer);
            resolve();
          }
        },
      })
      .catch(reject);
  });

  const lastByKey = new Map();
  const partitionByKey = new Map();
  for (const m of received) {
    if (m.key !== `key-${m.i % KEYS}` || m.seq !== String(m.i) || m.source !== 'smoke') {
      throw new Error(`message mismatch: ${JSON.stringify(m)}`);
    }
    if ((lastByKey.get(m.key) ?? -1) >= m.i) {
      throw new Error(`key ${m.key} out of order at ${m.i}`);
    }
    if (partitionByKey.has(m.key) && partitionByKey.get(m.key) !== m.partition) {
      throw new Error(`key ${m.key} spread over partitions`);
    }
    lastByKey.set(m.key, m.i);
    partitionByKey.set(m.key, m.partition);
  }
  if (new Set(received.map((m) => m.i)).size !== COUNT) {
    throw new Error('duplicate or missing messages');
  }
  const partitions = new Set(received.map((m) => m.partition)).size;
  console.log(
    `kafka smoke: ok, ${COUNT} keyed messages with headers produced (idempotent, acks=all) and consumed ` +
      `by a group over ${partitions} partition(s) of ${topic} on ${brokers.join(',')} in ${Date.now() - started} ms`,
  );
}

let failed = false;
try {
  await main();
} catch (err) {
  failed = true;
  console.error(`kafka smoke: FAILED against ${brokers.join(',')}: ${err?.stack ?? err}`);
} finally {
  await consumer.disconnect().catch(() => {});
  await producer.disconnect().catch(() => {});
  await admin.deleteTopics({ topics: [topic] }).catch(() => {});
  await admin.disconnect().catch(() => {});
}
process.exit(failed ? 1 : 0);

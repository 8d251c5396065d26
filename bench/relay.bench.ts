/**
 * Relay benchmark: commit → Kafka latency and relay throughput (`npm run build && node dist/bench/relay.bench.js`).
 *
 * On a throw-away database and a topic of its own (3 partitions, on the broker `kafkaBrokers()` finds), with
 * the relay as its own process (`dist/apps/relay/src/main.js`, default settings: batch 500, idle poll 200 ms):
 *
 * 1. Latency. The relay runs and is idle; a kafkajs consumer (own group) is subscribed. One writer appends one
 *    event per transaction at a steady rate, the way the task-service does (append + view row + NOTIFY), and
 *    takes the commit time right after COMMIT returns; the consumer takes the receive time in `eachMessage`
 *    (same process, same monotonic clock). Latency = receive − commit. Then the same without NOTIFY, so the
 *    relay only finds the events by polling.
 * 2. Throughput. The relay is stopped; N events are appended (tasks of 10 events, 5 tasks per transaction);
 *    the relay is started and timed until the topic holds every event of the log (high watermarks, checked
 *    against the log count; the checkpoint must reach the last row).
 *
 * Options: `--events N` (default 50000), `--rate N` events/s (default 50), `--seconds N` (default 20) for the
 * NOTIFY phase (the poll-only phase runs half as long), `--batch-size N` (relay, default 500). Only loopback.
 */
import {
  createTestDatabase,
  KAFKA_VERSION,
  kafkaBrokers,
  PlatformProcess,
  sleep,
  uniqueTopic,
  type TestDatabase,
} from '@lib/testing';
import { Kafka, logLevel, type Consumer } from 'kafkajs';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { Pool } from 'pg';
import {
  lastLogCursor,
  newTasks,
  relayCheckpoint,
  waitForCatchUp,
  writeTransaction,
  type LogTask,
} from '../apps/relay/test/support/task-log';
import { createTopic, deleteTopic, topicSize } from '../apps/relay/test/support/topic';
import { percentile } from './support/figures';

interface Options {
  events: number;
  rate: number;
  seconds: number;
  batchSize: number;
}

const RELAY_NAME = 'task-events';
const EVENTS_PER_TASK = 10;
const TASKS_PER_TRANSACTION = 5;

function parseOptions(argv: string[]): Options {
  const options: Options = { events: 50_000, rate: 50, seconds: 20, batchSize: 500 };
  for (let i = 0; i < argv.length; i += 2) {
    const flag = argv[i] ?? '';
    const value = Number(argv[i + 1]);
    if (!Number.isFinite(value) || value <= 0) {
      throw new Error(`${flag} needs a positive number, got ${String(argv[i + 1])}`);
    }
    switch (flag) {
      case '--events':
        options.events = Math.round(value);
        break;
      case '--rate':
        options.rate = value;
        break;
      case '--seconds':
        options.seconds = value;
        break;
      case '--batch-size':
        options.batchSize = Math.round(value);
        break;
      default:
        throw new Error(
          `unknown argument ${flag} (known: --events N, --rate N, --seconds N, --batch-size N)`,
        );
    }
  }
  return options;
}

const ms = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '–');

/** CPU seconds (user + system) a process used so far; null off Linux. */
function cpuSeconds(pid: number | undefined): number | null {
  if (pid === undefined) {
    return null;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

async function machine(pool: Pool, brokers: string[]): Promise<string[]> {
  const pg = await pool.query<{ version: string }>('SELECT version()');
  const settings = await pool.query<{ name: string; setting: string }>(
    `SELECT name, setting FROM pg_settings
      WHERE name IN ('fsync', 'synchronous_commit', 'shared_buffers', 'max_connections')`,
  );
  const cpu = cpus();
  return [
    `CPU: ${cpu[0]?.model ?? 'unknown'} × ${cpu.length}, memory ${(totalmem() / 2 ** 30).toFixed(1)} GiB, ` +
      `load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    `Node ${process.version}; kafkajs 2.2.4; Kafka ${KAFKA_VERSION} at ${brokers.join(',')}`,
    `${(pg.rows[0]?.version ?? '').split(',')[0]}; ${settings.rows
      .map((r) => `${r.name}=${r.setting}`)
      .join(', ')}`,
  ];
}

function relayProcess(db: TestDatabase, brokers: string[], topic: string, options: Options) {
  return new PlatformProcess('relay', 'apps/relay/src/main.js', [], {
    POSTGRES_URL: db.url,
    KAFKA_BROKERS: brokers.join(','),
    TASK_EVENTS_TOPIC: topic,
    RELAY_NAME,
    RELAY_BATCH_SIZE: String(options.batchSize),
  });
}

interface LatencyResult {
  label: string;
  sent: number;
  received: number;
  latencies: number[];
  elapsedMs: number;
}

/** Appends one event per transaction at `rate`/s for `seconds`; latency = consumer receive − COMMIT returned. */
async function measureLatency(
  pool: Pool,
  consumerSeen: Map<string, number>,
  label: string,
  rate: number,
  seconds: number,
  notify: boolean,
): Promise<LatencyResult> {
  const committed = new Map<string, number>();
  const total = Math.round(rate * seconds);
  const tasks: LogTask[] = [];
  const started = performance.now();
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1_000) / rate;
    const wait = due - performance.now();
    if (wait > 0) {
      await sleep(wait);
    }
    // A new task every fifth event: each task gets TaskSubmitted then four more events.
    if (i % 5 === 0) {
      tasks.push(...newTasks(['bench'], 1));
    }
    const task = tasks[tasks.length - 1]!;
    const result = await writeTransaction(pool, { tasks: [task], eventsPerTask: 1, notify });
    for (const id of result.eventIds) {
      committed.set(id, result.committedAt);
    }
  }
  const deadline = performance.now() + 30_000;
  while (
    [...committed.keys()].some((id) => !consumerSeen.has(id)) &&
    performance.now() < deadline
  ) {
    await sleep(50);
  }
  const latencies = [...committed]
    .filter(([id]) => consumerSeen.has(id))
    .map(([id, at]) => consumerSeen.get(id)! - at)
    .sort((a, b) => a - b);
  return {
    label,
    sent: committed.size,
    received: latencies.length,
    latencies,
    elapsedMs: performance.now() - started,
  };
}

async function startConsumer(
  brokers: string[],
  topic: string,
  seen: Map<string, number>,
): Promise<Consumer> {
  const kafka = new Kafka({ clientId: 'relay-bench', brokers, logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({
    groupId: `relay-bench-${randomBytes(6).toString('hex')}`,
    maxWaitTimeInMs: 100,
  });
  let joined = false;
  consumer.on(consumer.events.GROUP_JOIN, () => {
    joined = true;
  });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    eachMessage: ({ message }) => {
      const at = performance.now();
      const id = message.headers?.['ce_id']?.toString();
      if (id && !seen.has(id)) {
        seen.set(id, at);
      }
      return Promise.resolve();
    },
  });
  const deadline = Date.now() + 30_000;
  while (!joined) {
    if (Date.now() > deadline) {
      throw new Error('the bench consumer did not join its group within 30 s');
    }
    await sleep(50);
  }
  return consumer;
}

/**
 * Appends at least `events` events (whole transactions): tasks of EVENTS_PER_TASK events, TASKS_PER_TRANSACTION
 * new tasks per transaction, 8 writers. Returns how many were appended.
 */
async function preload(pool: Pool, events: number): Promise<number> {
  const transactions = Math.ceil(events / (EVENTS_PER_TASK * TASKS_PER_TRANSACTION));
  let started = 0;
  let written = 0;
  const worker = async () => {
    while (started < transactions) {
      started++;
      const result = await writeTransaction(pool, {
        tasks: newTasks(['bench-a', 'bench-b'], TASKS_PER_TRANSACTION),
        eventsPerTask: EVENTS_PER_TASK,
      });
      written += result.eventIds.length;
    }
  };
  await Promise.all(Array.from({ length: 8 }, () => worker()));
  return written;
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const brokers = await kafkaBrokers();
  const db = await createTestDatabase('relay_bench');
  const topic = uniqueTopic('relay-bench');
  const pool = db.pool;
  let relay: PlatformProcess | undefined;
  let consumer: Consumer | undefined;
  try {
    await createTopic(brokers, topic);
    console.log(`relay benchmark, ${new Date().toISOString()}`);
    for (const line of await machine(pool, brokers)) {
      console.log(line);
    }
    console.log(
      `relay: default settings, RELAY_BATCH_SIZE=${options.batchSize}, RELAY_IDLE_POLL_MS=200; ` +
        `topic ${topic} (3 partitions)\n`,
    );

    // 1. commit → Kafka latency, relay idle
    relay = relayProcess(db, brokers, topic, options).start();
    await relay.waitForOutput(/relaying to/);
    const seen = new Map<string, number>();
    consumer = await startConsumer(brokers, topic, seen);
    await sleep(1_000);
    const latency: LatencyResult[] = [];
    latency.push(
      await measureLatency(
        pool,
        seen,
        'NOTIFY (as the task-service)',
        options.rate,
        options.seconds,
        true,
      ),
    );
    latency.push(
      await measureLatency(
        pool,
        seen,
        'poll only (no NOTIFY)',
        options.rate,
        options.seconds / 2,
        false,
      ),
    );
    console.log(`## Commit → Kafka latency (${options.rate} events/s, one event per transaction)`);
    console.log(
      '| wake-up | events | received | p50 ms | p90 ms | p99 ms | max ms |\n' +
        '|:--|--:|--:|--:|--:|--:|--:|',
    );
    for (const r of latency) {
      console.log(
        `| ${r.label} | ${r.sent} | ${r.received} | ${ms(percentile(r.latencies, 50))} | ` +
          `${ms(percentile(r.latencies, 90))} | ${ms(percentile(r.latencies, 99))} | ` +
          `${ms(r.latencies[r.latencies.length - 1] ?? Number.NaN)} |`,
      );
    }
    await consumer.disconnect();
    consumer = undefined;
    await waitForCatchUp(pool, RELAY_NAME, 30_000);
    await relay.stop();

    // 2. throughput: pre-load, then start the relay
    const before = await topicSize(brokers, topic);
    const loadStarted = performance.now();
    const loaded = await preload(pool, options.events);
    const loadMs = performance.now() - loadStarted;
    const logCount = Number(
      (await pool.query<{ n: string }>('SELECT count(*) AS n FROM events.messages')).rows[0]?.n,
    );
    const expected = before + loaded;
    console.log(
      `\n## Relay throughput (${loaded} events pre-loaded in ${(loadMs / 1_000).toFixed(1)} s, ` +
        `${EVENTS_PER_TASK} per task, ${TASKS_PER_TRANSACTION} tasks per transaction)`,
    );
    const spawned = performance.now();
    relay.start();
    await relay.waitForOutput(/relaying to/, 60_000);
    const ready = performance.now();
    const cpuAtReady = cpuSeconds(relay.pid);
    let size = before;
    const deadline = ready + 600_000;
    while (size < expected) {
      if (performance.now() > deadline) {
        throw new Error(`the topic has ${size} of ${expected} records after 600 s`);
      }
      await sleep(50);
      size = await topicSize(brokers, topic);
    }
    const done = performance.now();
    const cpuAtDone = cpuSeconds(relay.pid);
    await waitForCatchUp(pool, RELAY_NAME, 30_000);
    const checkpoint = await relayCheckpoint(pool, RELAY_NAME);
    const last = await lastLogCursor(pool);
    const seconds = (done - ready) / 1_000;
    console.log(
      '| events | relay start → ready ms | ready → all on the topic s | events/s | relay CPU s (per 10k events) |\n' +
        '|--:|--:|--:|--:|--:|',
    );
    const cpu =
      cpuAtReady !== null && cpuAtDone !== null
        ? `${(cpuAtDone - cpuAtReady).toFixed(2)} (${(((cpuAtDone - cpuAtReady) * 10_000) / loaded).toFixed(2)})`
        : '–';
    console.log(
      `| ${loaded} | ${Math.round(ready - spawned)} | ${seconds.toFixed(2)} | ` +
        `${Math.round(loaded / seconds)} | ${cpu} |`,
    );
    console.log(
      `\ncheck: log ${logCount} events, topic ${size} records (expected ${expected}), checkpoint ` +
        `${JSON.stringify(checkpoint)} = last row ${JSON.stringify(last)}: ` +
        `${size === logCount && JSON.stringify(checkpoint) === JSON.stringify(last) ? 'ok' : 'MISMATCH'}`,
    );
    console.log(
      `load average after: ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
  } finally {
    await consumer?.disconnect().catch(() => undefined);
    await relay?.stop().catch(() => undefined);
    await deleteTopic(brokers, topic);
    await db.drop().catch(() => undefined);
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);

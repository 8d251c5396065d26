import { tenantIdOf } from '@lib/ids';
/**
 * Push dispatcher benchmark (`npm run bench:push` = `npm run build && node dist/bench/push.bench.js`): webhook
 * deliveries/s of one dispatcher replica, and commit → webhook latency through the whole path (issue 11).
 *
 * Every phase has a throw-away database, a topic of its own (3 partitions), its own consumer group and queue
 * prefix on the shared Redis, and a receiver in this process (node:http on 127.0.0.1, 204 at once, keep-alive;
 * allowlisted for the benchmark's tenant). The dispatcher runs as its own process from `dist/`
 * (`apps/push-dispatcher/src/main.js`), with its default settings except PUSH_RECONCILE_INTERVAL_MS (1 h) and
 * what `--dispatcher-env` sets; it signs with an EC P-256 key written to a temporary file.
 *
 * 1. Throughput. One webhook per task is seeded straight into `ops.push_configs` (the rows the task-service
 *    writes for an inline registration), then N feed records are produced onto the topic with kafkajs, as the
 *    relay produces them (`toTaskEventRecord`: key = task id, CloudEvents headers, the record value with its
 *    `streamResponse`), `--events-per-task` generations per task, all tasks' first generation first, then
 *    all their second, and so on. Then the dispatcher starts on that backlog. Deliveries/s = N / (first POST
 *    received → N-th distinct delivery id received). Checks: every row of `ops.push_deliveries` `delivered`,
 *    no delivery id POSTed twice, each task's generations received in increasing order.
 * 2. Latency. The relay (`apps/relay/src/main.js`, default settings) and the dispatcher run idle on a fresh
 *    database and topic. One event per transaction is appended at `--rate` events/s for `--seconds` s, the
 *    way the task-service appends (event, view row, task notice), a new task every 5 events, whose first
 *    transaction also registers its webhook (`from_generation` 0); every event is one a stream shows, so every
 *    one is a webhook. Latency = POST received (receiver) − COMMIT returned (writer), same process and clock;
 *    split at the delivery row's `created_at` (the dispatcher inserting it after reading the feed).
 *
 * Each phase also prints the CPU time of every process involved over its measured interval (`/proc`; the
 * servers found by the port they listen on, the Postgres backends by `application_name`) and what is left
 * to the rest of the machine, the work counted by Postgres (transactions, row changes) and Redis (commands),
 * and its checks; it fails (exit code 1) when a check fails.
 *
 * Options: `--deliveries N` (20000), `--events-per-task N` (10, throughput), `--rate N` (200), `--seconds N`
 * (20), `--only throughput|latency`, `--dispatcher-env KEY=VALUE` (repeatable, e.g.
 * `PUSH_WORKER_CONCURRENCY=16`), `--cpu-prof DIR` (CPU profiles of the dispatcher, and in the latency phase
 * of the relay, over the measured interval, summarised after each phase). Needs Postgres (TEST_POSTGRES_URL),
 * Redis (REDIS_URL) and a Kafka broker (`npm run kafka:start`, or KAFKA_BROKERS).
 */
import { loadConfig, pushDispatcherSchema, testSchema } from '@lib/config';
import type { CommittedTaskEvent } from '@lib/event-store';
import { taskStreamId } from '@lib/task-domain';
import {
  createTestDatabase,
  KAFKA_VERSION,
  kafkaBrokers,
  PlatformProcess,
  repoRoot,
  sleep,
  uniqueTopic,
  type TestDatabase,
} from '@lib/testing';
import { Redis } from 'ioredis';
import { Kafka, logLevel } from 'kafkajs';
import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { Pool } from 'pg';
import { LANE_QUEUE } from '../apps/push-dispatcher/src/lane-queue';
import { toTaskEventRecord } from '../apps/relay/src/task-event-record';
import { createTopic, deleteTopic } from '../apps/relay/test/support/topic';
import {
  backendMeter,
  cpuTable,
  machineMeter,
  pidMeter,
  serverMeter,
  snapshot,
  type Meter,
  type Snapshot,
} from './support/cpu-meters';
import { formatProfile, readProfiles } from './support/cpu-profile';
import { CUT_SIGNAL } from './support/cpu-profile-on-signal';
import { ascending, fmt, percentile, table } from './support/figures';
import {
  appendDeliverable,
  deliverableEvent,
  isDeliverable,
  newPushTasks,
  seedPushConfigs,
  type PushTask,
} from './support/push-log';
import { calibrateWallClock, wallMs } from './support/wall-clock';
import { WebhookSink } from './support/webhook-sink';

type Phase = 'throughput' | 'latency';

interface Options {
  phases: Phase[];
  deliveries: number;
  eventsPerTask: number;
  rate: number;
  seconds: number;
  dispatcherEnv: Record<string, string>;
  cpuProfDir: string | null;
}

/** The tenant of every benchmark task; the dispatcher's allowlist lets it reach 127.0.0.1. */
const TENANT = tenantIdOf('push-bench');
/** Generations per task in the latency phase. */
const LATENCY_EVENTS_PER_TASK = 5;
/** Feed records per produce request in the throughput phase. */
const PRODUCE_BATCH = 1_000;
/** A phase fails when no new delivery arrives for this long. */
const STALL_MS = 60_000;
/** What the dispatcher prints once its HTTP server listens (its consumer and worker are started by then). */
const DISPATCHER_READY = /push dispatcher ready|Nest application successfully started/;

const USAGE =
  'options: --deliveries N, --events-per-task N, --rate N, --seconds N, --only throughput|latency, ' +
  '--dispatcher-env KEY=VALUE (repeatable), --cpu-prof DIR';

function parseOptions(argv: string[]): Options {
  const options: Options = {
    phases: ['throughput', 'latency'],
    deliveries: 20_000,
    eventsPerTask: 10,
    rate: 200,
    seconds: 20,
    dispatcherEnv: {},
    cpuProfDir: null,
  };
  const positive = (flag: string, value: string | undefined): number => {
    const n = Number(value);
    if (!Number.isFinite(n) || n <= 0) {
      throw new Error(`${flag} needs a positive number, got ${String(value)}`);
    }
    return n;
  };
  for (let i = 0; i < argv.length; i += 2) {
    const flag = argv[i] ?? '';
    const value = argv[i + 1];
    switch (flag) {
      case '--deliveries':
        options.deliveries = Math.round(positive(flag, value));
        break;
      case '--events-per-task':
        options.eventsPerTask = Math.round(positive(flag, value));
        break;
      case '--rate':
        options.rate = positive(flag, value);
        break;
      case '--seconds':
        options.seconds = positive(flag, value);
        break;
      case '--only':
        if (value !== 'throughput' && value !== 'latency') {
          throw new Error(`--only takes throughput or latency, got ${String(value)}`);
        }
        options.phases = [value];
        break;
      case '--dispatcher-env': {
        const match = /^([A-Z][A-Z0-9_]*)=(.*)$/s.exec(value ?? '');
        if (!match?.[1]) {
          throw new Error(`--dispatcher-env takes KEY=VALUE, got ${String(value)}`);
        }
        options.dispatcherEnv[match[1]] = match[2] ?? '';
        break;
      }
      case '--cpu-prof':
        if (!value) {
          throw new Error('--cpu-prof needs a directory');
        }
        options.cpuProfDir = resolve(value);
        break;
      default:
        throw new Error(`unknown argument ${flag} (${USAGE})`);
    }
  }
  return options;
}

// ---------------------------------------------------------------------------------------------------------
// Clean-up and the shared infrastructure

/** Clean-up steps, run last first, once, whatever happened (also on SIGINT / SIGTERM). */
class Cleanup {
  private readonly steps: { label: string; run: () => Promise<unknown> }[] = [];
  private running: Promise<void> | null = null;

  add(label: string, run: () => Promise<unknown>): void {
    this.steps.push({ label, run });
  }

  run(): Promise<void> {
    this.running ??= (async () => {
      for (const step of this.steps.reverse()) {
        try {
          await step.run();
        } catch (error) {
          console.error(`clean-up: ${step.label}: ${String(error)}`);
        }
      }
    })();
    return this.running;
  }
}

/** What every phase shares: the broker, Redis, the signing key, a temporary folder. */
interface Infra {
  brokers: string[];
  kafka: Kafka;
  redisUrl: string;
  redis: Redis;
  keyFile: string;
  profileDir: string | null;
  cleanup: Cleanup;
}

/** An EC P-256 PKCS#8 PEM key in a temporary folder (removed at the end). */
function writeSigningKey(cleanup: Cleanup): string {
  const dir = mkdtempSync(join(tmpdir(), 'push-bench-'));
  cleanup.add(`removing ${dir}`, () =>
    Promise.resolve(rmSync(dir, { recursive: true, force: true })),
  );
  const { privateKey } = generateKeyPairSync('ec', {
    namedCurve: 'P-256',
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  const file = join(dir, 'card-signing-key.pem');
  writeFileSync(file, privateKey, { mode: 0o600 });
  return file;
}

/** Removes every Redis key under a queue prefix (the lane jobs still delayed when the dispatcher stopped). */
async function dropQueueKeys(redis: Redis, prefix: string): Promise<number> {
  let cursor = '0';
  let removed = 0;
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1_000);
    cursor = next;
    if (keys.length > 0) {
      removed += await redis.del(...keys);
    }
  } while (cursor !== '0');
  return removed;
}

/** Lane jobs BullMQ holds under a queue prefix: waiting, active, delayed. */
async function laneJobs(
  redis: Redis,
  prefix: string,
): Promise<{ waiting: number; active: number; delayed: number }> {
  const key = (type: string): string => `${prefix}:${LANE_QUEUE}:${type}`;
  const [waiting, active, delayed] = await Promise.all([
    redis.llen(key('wait')),
    redis.llen(key('active')),
    redis.zcard(key('delayed')),
  ]);
  return { waiting, active, delayed };
}

/** Waits until no lane job is waiting or active (delayed ones aside); false after `timeoutMs`. */
async function untilLaneJobsRun(redis: Redis, prefix: string, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const jobs = await laneJobs(redis, prefix);
    if (jobs.waiting + jobs.active === 0) {
      return true;
    }
    if (Date.now() > deadline) {
      return false;
    }
    await sleep(50);
  }
}

/** A database, a topic, a receiver and a consumer-group / queue-prefix name of one phase, cleaned up after. */
interface PhaseSetup {
  db: TestDatabase;
  topic: string;
  sink: WebhookSink;
  name: string;
}

async function setUpPhase(infra: Infra, label: string): Promise<PhaseSetup> {
  const name = `push-bench-${label}-${randomBytes(4).toString('hex')}`;
  const db = await createTestDatabase(`push_bench_${label}`);
  infra.cleanup.add(`dropping ${db.url}`, () => db.drop());
  const topic = uniqueTopic(`push-bench-${label}`);
  infra.cleanup.add(`deleting topic ${topic}`, () => deleteTopic(infra.brokers, topic));
  await createTopic(infra.brokers, topic, 3);
  infra.cleanup.add(`Redis keys ${name}:*`, () => dropQueueKeys(infra.redis, name));
  infra.cleanup.add(`consumer group ${name}`, async () => {
    const admin = infra.kafka.admin();
    await admin.connect();
    try {
      await admin.deleteGroups([name]).catch(() => undefined);
    } finally {
      await admin.disconnect();
    }
  });
  const sink = await WebhookSink.start();
  infra.cleanup.add('closing the receiver', () => sink.close());
  return { db, topic, sink, name };
}

/** Node options that load the profile preload (`support/cpu-profile-on-signal.ts`, next to this file). */
function profilePreload(): string[] {
  return ['--require', join(__dirname, 'support', 'cpu-profile-on-signal.js')];
}

/** The dispatcher as its own process on the phase's database, topic, group and queue prefix. */
async function startDispatcher(
  infra: Infra,
  setup: PhaseSetup,
  extraEnv: Record<string, string>,
  profile: boolean,
): Promise<PlatformProcess> {
  const env: Record<string, string> = {
    POSTGRES_URL: setup.db.url,
    KAFKA_BROKERS: infra.brokers.join(','),
    TASK_EVENTS_TOPIC: setup.topic,
    PUSH_CONSUMER_GROUP: setup.name,
    PUSH_QUEUE_PREFIX: setup.name,
    PUSH_ALLOWLIST: JSON.stringify({ [TENANT]: ['127.0.0.1'] }),
    AGENT_CARD_SIGNING_KEY_FILE: infra.keyFile,
    PUSH_RECONCILE_INTERVAL_MS: '3600000',
    REDIS_URL: infra.redisUrl,
    ...extraEnv,
  };
  const nodeArgs: string[] = [];
  if (profile && infra.profileDir !== null) {
    env['BENCH_CPU_PROF_DIR'] = infra.profileDir;
    nodeArgs.push(...profilePreload());
  }
  const dispatcher = new PlatformProcess(
    'push-dispatcher',
    'apps/push-dispatcher/src/main.js',
    [],
    env,
    nodeArgs,
  );
  infra.cleanup.add('stopping the dispatcher', () => dispatcher.stop());
  dispatcher.start();
  await dispatcher.waitForOutput(DISPATCHER_READY, 60_000);
  return dispatcher;
}

/** Waits until the consumer group has a member and is stable (the dispatcher reads the feed). */
async function waitForGroup(infra: Infra, group: string, timeoutMs = 60_000): Promise<void> {
  const admin = infra.kafka.admin();
  await admin.connect();
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const described = await admin.describeGroups([group]);
      const state = described.groups[0];
      if (state?.state === 'Stable' && state.members.length > 0) {
        return;
      }
      if (Date.now() > deadline) {
        throw new Error(
          `consumer group ${group} not stable after ${timeoutMs} ms (state ${String(state?.state)}, ` +
            `${state?.members.length ?? 0} members)`,
        );
      }
      await sleep(200);
    }
  } finally {
    await admin.disconnect();
  }
}

// ---------------------------------------------------------------------------------------------------------
// CPU meters

/** The port of a `host:port` or URL on this machine; null when it is another machine's. */
function localPort(address: string, defaultPort: number): number | null {
  const url = new URL(address.includes('://') ? address : `tcp://${address}`);
  const local = ['127.0.0.1', 'localhost', '[::1]', ''].includes(url.hostname);
  return local ? Number(url.port || defaultPort) : null;
}

/** A platform process of a phase: its pid once started, the `application_name` prefix of its connections. */
interface MeteredProcess {
  name: string;
  pid: () => number | undefined;
  backends: string;
}

/**
 * The processes a phase reports: its own platform processes, the Postgres backends of their connections,
 * the servers they use when they run on this machine (found by the port they listen on), this process.
 */
function phaseMeters(
  infra: Infra,
  pool: Pool,
  dbUrl: string,
  processes: readonly MeteredProcess[],
  writerBackends: boolean,
): Meter[] {
  const list: Meter[] = [];
  for (const p of processes) {
    list.push(pidMeter(p.name, p.pid));
  }
  const pgPort = localPort(dbUrl, 5432);
  const postgres = pgPort === null ? null : serverMeter('Postgres server, all databases', pgPort);
  if (postgres) {
    list.push(postgres);
    for (const p of processes) {
      list.push(backendMeter(`backends of the ${p.name}`, pool, p.backends));
    }
    if (writerBackends) {
      list.push(backendMeter("backends of this bench's writer", pool, 'a2a-test'));
    }
  }
  const redisPort = localPort(infra.redisUrl, 6379);
  const redis = redisPort === null ? null : serverMeter('Redis server', redisPort);
  const kafkaPort = infra.brokers[0] ? localPort(infra.brokers[0], 9092) : null;
  const kafka = kafkaPort === null ? null : serverMeter('Kafka broker', kafkaPort);
  list.push(
    ...[redis, kafka].filter((m): m is Meter => m !== null),
    pidMeter('this bench (receiver, writer)', () => process.pid),
    machineMeter,
  );
  return list;
}

/** The dispatcher's Postgres connections, sampled every 250 ms: most open, most and mean active. */
class ConnectionSampler {
  maxOpen = 0;
  maxActive = 0;
  private activeSum = 0;
  private samples = 0;
  private stopped = false;
  private loop: Promise<void> | null = null;

  constructor(private readonly pool: Pool) {}

  start(): void {
    this.loop = (async () => {
      while (!this.stopped) {
        try {
          const result = await this.pool.query<{ open: number; active: number }>(
            `SELECT count(*)::integer AS open, count(*) FILTER (WHERE state = 'active')::integer AS active
               FROM pg_stat_activity
              WHERE datname = current_database() AND application_name LIKE 'a2a-push-dispatcher%'`,
          );
          const row = result.rows[0];
          if (row) {
            this.maxOpen = Math.max(this.maxOpen, row.open);
            this.maxActive = Math.max(this.maxActive, row.active);
            this.activeSum += row.active;
            this.samples++;
          }
        } catch {
          // a sample less
        }
        await sleep(250);
      }
    })();
  }

  get meanActive(): number {
    return this.samples > 0 ? this.activeSum / this.samples : Number.NaN;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }
}

// ---------------------------------------------------------------------------------------------------------
// Machine

async function printMachine(infra: Infra, pool: Pool): Promise<void> {
  const pg = await pool.query<{ version: string }>('SELECT version()');
  const settings = await pool.query<{ name: string; setting: string }>(
    `SELECT name, setting FROM pg_settings
      WHERE name IN ('fsync', 'synchronous_commit', 'shared_buffers', 'max_connections')`,
  );
  const redisInfo = await infra.redis.info('server');
  const redisVersion = /^redis_version:(.+)$/m.exec(redisInfo)?.[1]?.trim() ?? 'unknown';
  const deps = (
    JSON.parse(readFileSync(join(repoRoot(), 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    }
  ).dependencies;
  const cpu = cpus();
  console.log('## Machine');
  console.log(
    `CPU: ${cpu[0]?.model.trim() ?? 'unknown'} × ${cpu.length}, memory ${(totalmem() / 2 ** 30).toFixed(1)} GiB, ` +
      `load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
  );
  console.log(
    `Node ${process.version}; kafkajs ${deps['kafkajs'] ?? '?'}, bullmq ${deps['bullmq'] ?? '?'}, ` +
      `ioredis ${deps['ioredis'] ?? '?'}, pg ${deps['pg'] ?? '?'}`,
  );
  console.log(
    `Kafka ${KAFKA_VERSION} at ${infra.brokers.join(',')}; Redis ${redisVersion} at ${infra.redisUrl}`,
  );
  console.log(
    `${(pg.rows[0]?.version ?? '').split(',')[0]}; ${settings.rows
      .map((r) => `${r.name}=${r.setting}`)
      .join(', ')}`,
  );
}

const loadAverage = (): string =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

// ---------------------------------------------------------------------------------------------------------
// Shared waits and checks

/**
 * Resolves when `done()` holds; rejects when the receiver got no new delivery for STALL_MS, or after
 * `timeoutMs`, saying how far it got and what the dispatcher printed last.
 */
async function waitForDeliveries(
  sink: WebhookSink,
  expected: number,
  dispatcher: PlatformProcess,
  timeoutMs: number,
): Promise<void> {
  const started = wallMs();
  let seen = sink.distinct;
  let progressAt = started;
  while (sink.distinct < expected) {
    const now = wallMs();
    if (sink.distinct !== seen) {
      seen = sink.distinct;
      progressAt = now;
    }
    const problem =
      now - progressAt > STALL_MS
        ? `no new delivery for ${STALL_MS / 1_000} s`
        : now - started > timeoutMs
          ? `not done after ${Math.round(timeoutMs / 1_000)} s`
          : !dispatcher.running
            ? 'the dispatcher exited'
            : null;
    if (problem !== null) {
      throw new Error(
        `${problem}: ${sink.distinct} of ${expected} deliveries received (${sink.posts} POSTs). ` +
          `Dispatcher output (tail):\n${dispatcher.log.slice(-3_000)}`,
      );
    }
    await sleep(20);
  }
}

/** Delivery rows per state, once every row is settled (a POST is answered before its row says delivered). */
async function settledStates(
  pool: Pool,
  expected: number,
  timeoutMs = 20_000,
): Promise<Map<string, number>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const result = await pool.query<{ state: string; n: number }>(
      'SELECT state, count(*)::integer AS n FROM ops.push_deliveries GROUP BY state ORDER BY state',
    );
    const states = new Map(result.rows.map((r) => [r.state, r.n]));
    const open = (states.get('pending') ?? 0) + (states.get('sending') ?? 0);
    const rows = [...states.values()].reduce((sum, n) => sum + n, 0);
    if ((open === 0 && rows >= expected) || Date.now() > deadline) {
      return states;
    }
    await sleep(100);
  }
}

function checkLine(
  sink: WebhookSink,
  states: ReadonlyMap<string, number>,
  expected: number,
  unknown: number,
): { ok: boolean; text: string } {
  const delivered = states.get('delivered') ?? 0;
  const rows = [...states.values()].reduce((sum, n) => sum + n, 0);
  const ok =
    rows === expected &&
    delivered === expected &&
    sink.distinct === expected &&
    sink.repeats === 0 &&
    sink.outOfOrder === 0 &&
    sink.malformed === 0 &&
    unknown === 0;
  const text =
    `check: ${rows} delivery rows (expected ${expected}), states ` +
    `${[...states].map(([s, n]) => `${s} ${n}`).join(', ') || 'none'}; receiver: ${sink.posts} POSTs, ` +
    `${sink.distinct} distinct delivery ids, ${sink.repeats} repeated, ${sink.outOfOrder} out of order` +
    `${sink.outOfOrderSamples.length > 0 ? ` (${sink.outOfOrderSamples.join('; ')})` : ''}, ` +
    `${sink.malformed} without delivery headers, ${unknown} not of a sent event: ${ok ? 'ok' : 'FAILED'}`;
  return { ok, text };
}

/** Work counted by Postgres and Redis: transactions, row changes of `ops.push_deliveries`, Redis commands. */
interface WorkCounters {
  commits: number;
  inserted: number;
  updated: number;
  hotUpdated: number;
  redisCommands: number;
}

async function workCounters(pool: Pool, redis: Redis): Promise<WorkCounters> {
  const db = await pool.query<{ commits: string }>(
    'SELECT xact_commit::text AS commits FROM pg_stat_database WHERE datname = current_database()',
  );
  const rows = await pool.query<{ ins: string; upd: string; hot: string }>(
    `SELECT n_tup_ins::text AS ins, n_tup_upd::text AS upd, n_tup_hot_upd::text AS hot
       FROM pg_stat_user_tables WHERE schemaname = 'ops' AND relname = 'push_deliveries'`,
  );
  const stats = await redis.info('stats');
  return {
    commits: Number(db.rows[0]?.commits ?? 0),
    inserted: Number(rows.rows[0]?.ins ?? 0),
    updated: Number(rows.rows[0]?.upd ?? 0),
    hotUpdated: Number(rows.rows[0]?.hot ?? 0),
    redisCommands: Number(/^total_commands_processed:(\d+)/m.exec(stats)?.[1] ?? 0),
  };
}

/** The work between two counts, in all and per delivery. */
function workLine(from: WorkCounters, to: WorkCounters, deliveries: number): string {
  const per = (n: number): string => fmt(n / deliveries, 2);
  const commits = to.commits - from.commits;
  const updated = to.updated - from.updated;
  const hot = to.hotUpdated - from.hotUpdated;
  const redis = to.redisCommands - from.redisCommands;
  return (
    `work (Postgres statistics, Redis INFO): ${commits} transactions committed in the database (${per(commits)} ` +
    `per delivery); ops.push_deliveries ${to.inserted - from.inserted} rows inserted, ${updated} updated ` +
    `(${per(updated)} per delivery, ${fmt(updated > 0 ? (100 * hot) / updated : null, 0)} % HOT); ` +
    `${redis} Redis commands on the server (${per(redis)} per delivery)`
  );
}

// ---------------------------------------------------------------------------------------------------------
// 1. Throughput

/** The feed records of `tasks` × `perTask` generations (at most `limit`), generation by generation. */
function feedRecords(tasks: readonly PushTask[], perTask: number, limit: number) {
  const records: { key: string; value: string; headers: Record<string, string> }[] = [];
  let position = 0;
  for (let generation = 1; generation <= perTask; generation++) {
    for (const task of tasks) {
      if (records.length >= limit) {
        return records;
      }
      position++;
      const event = deliverableEvent(task, generation);
      const row: CommittedTaskEvent = {
        eventId: randomUUID(),
        tenantId: task.tenantId,
        streamId: taskStreamId(task.tenantId, task.taskId),
        streamVersion: generation,
        globalPosition: String(position),
        transactionId: String(1_000 + position),
        event,
        schemaVersion: 1,
        metadata: {
          actor: { kind: generation === 1 ? 'caller' : 'agent-worker', id: 'push-bench' },
          binding: 'bench',
        },
        recordedAt: new Date().toISOString(),
        contextId: task.contextId,
        agentId: task.agentId,
      };
      records.push(toTaskEventRecord(row));
    }
  }
  return records;
}

/** Produces the records as the relay does (idempotent producer, acks=all, uncompressed); returns the ms. */
async function produce(
  infra: Infra,
  topic: string,
  records: readonly { key: string; value: string; headers: Record<string, string> }[],
): Promise<number> {
  const producer = infra.kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  const started = wallMs();
  try {
    for (let start = 0; start < records.length; start += PRODUCE_BATCH) {
      await producer.send({
        topic,
        acks: -1,
        messages: records.slice(start, start + PRODUCE_BATCH),
      });
    }
  } finally {
    await producer.disconnect();
  }
  return wallMs() - started;
}

/** The newest profile of `pid` whose sequence number is `sequence`, waiting up to 10 s for it. */
async function profileFile(dir: string, pid: number, sequence: number): Promise<string | null> {
  const suffix = `.${pid}.0.${String(sequence).padStart(3, '0')}.cpuprofile`;
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const found = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith(suffix)) : [];
    if (found.length > 0) {
      // Give the write a moment to finish (it is one synchronous write in the dispatcher).
      await sleep(200);
      return found.toSorted().at(-1) ?? null;
    }
    await sleep(100);
  }
  return null;
}

/**
 * The profile cuts of one process started with the profile preload (`--cpu-prof`): each cut writes the
 * profile so far; the one after the last cut's predecessor is the measured interval.
 */
class ProfileCuts {
  private cuts = 0;

  constructor(
    private readonly dir: string | null,
    private readonly pid: () => number | undefined,
  ) {}

  cut(): void {
    const pid = this.pid();
    if (this.dir !== null && pid !== undefined) {
      process.kill(pid, CUT_SIGNAL);
      this.cuts++;
    }
  }

  /** Prints the profile written by the last cut (the interval since the cut before), if profiling. */
  async print(label: string): Promise<void> {
    const pid = this.pid();
    if (this.dir === null || pid === undefined || this.cuts === 0) {
      return;
    }
    const file = await profileFile(this.dir, pid, this.cuts);
    const summary = file ? readProfiles(this.dir, [file])[0] : undefined;
    console.log('');
    console.log(
      summary
        ? formatProfile(summary, `${label} (under the profiler)`, 30)
        : `no profile of ${label} in ${this.dir}`,
    );
  }
}

async function throughputPhase(infra: Infra, options: Options): Promise<boolean> {
  const setup = await setUpPhase(infra, 'tput');
  const { db, sink } = setup;
  const perTask = options.eventsPerTask;
  const tasks = newPushTasks(TENANT, Math.ceil(options.deliveries / perTask));
  await seedPushConfigs(db.pool, tasks, sink.url);
  const records = feedRecords(tasks, perTask, options.deliveries);
  const total = records.length;
  const produceMs = await produce(infra, setup.topic, records);
  const known = new Set(records.map((r) => `${r.key}#${r.headers['generation'] ?? ''}`));

  console.log('');
  console.log(
    `## 1. Throughput: one dispatcher replica, ${total} deliveries (${tasks.length} tasks × ${perTask} events)`,
  );
  console.log(
    `${tasks.length} webhook configs seeded into ops.push_configs; ${total} feed records produced onto ` +
      `${setup.topic} (3 partitions) in ${fmt(produceMs / 1_000, 2)} s before the dispatcher starts; receiver ` +
      `${sink.url} (204 at once, keep-alive). Dispatcher settings: defaults, PUSH_RECONCILE_INTERVAL_MS=3600000` +
      `${Object.entries(options.dispatcherEnv)
        .map(([k, v]) => `, ${k}=${v}`)
        .join('')}.`,
  );

  const workBefore = await workCounters(db.pool, infra.redis);
  const spawnedAt = wallMs();
  let firstAt = 0;
  let lastAt = 0;
  let dispatcher: PlatformProcess | null = null;
  const sampler = new ConnectionSampler(db.pool);
  const list = phaseMeters(
    infra,
    db.pool,
    db.url,
    [{ name: 'push-dispatcher', pid: () => dispatcher?.pid, backends: 'a2a-push-dispatcher' }],
    false,
  );
  let from: Promise<Snapshot> | null = null;
  let to: Promise<Snapshot> | null = null;
  // What BullMQ holds at the last delivery (set in the receiver's callback).
  const end: { queued: ReturnType<typeof laneJobs> | null } = { queued: null };
  // The profiled dispatcher writes its profile at the first POST and at the last.
  const profile = new ProfileCuts(infra.profileDir, () => dispatcher?.pid);
  sink.onArrival = (arrival, distinct) => {
    if (distinct === 1) {
      firstAt = arrival.atMs;
      from = snapshot(list);
      profile.cut();
      sampler.start();
    }
    if (distinct === total) {
      lastAt = arrival.atMs;
      to = snapshot(list);
      profile.cut();
      end.queued = laneJobs(infra.redis, setup.name);
    }
  };
  dispatcher = await startDispatcher(
    infra,
    setup,
    options.dispatcherEnv,
    infra.profileDir !== null,
  );
  const readyAt = wallMs();
  await waitForDeliveries(sink, total, dispatcher, 30 * 60_000);
  const cpu = await Promise.all([from ?? snapshot(list), to ?? snapshot(list)]);
  await sampler.stop();
  const states = await settledStates(db.pool, total);
  // The lane jobs still queued at the last delivery find their lanes empty; they are part of the cost.
  const drainStarted = wallMs();
  const drained = await untilLaneJobsRun(infra.redis, setup.name, 60_000);
  const drainedAt = wallMs();
  const cpuDrained = await snapshot(list);
  // Idle backends report their statistics up to 10 s late; a backend that exits reports them at once.
  await dispatcher.stop();
  await sleep(500);
  const workAfter = await workCounters(db.pool, infra.redis);
  const spans = await db.pool.query<{ first_ms: number; last_ms: number }>(
    `SELECT extract(epoch FROM min(created_at)) * 1000 AS first_ms,
            extract(epoch FROM max(created_at)) * 1000 AS last_ms
       FROM ops.push_deliveries`,
  );
  const span = spans.rows[0];
  const unknown = [...sink.arrivals.keys()].filter((k) => !known.has(k)).length;

  const seconds = (lastAt - firstAt) / 1_000;
  console.log(
    table(
      [
        'deliveries',
        'dispatcher spawn → ready s',
        'ready → first POST s',
        'first POST → last delivery s',
        'deliveries/s',
        'rows derived: first → last s',
      ],
      [
        [
          String(total),
          fmt((readyAt - spawnedAt) / 1_000, 2),
          fmt((firstAt - readyAt) / 1_000, 2),
          fmt(seconds, 2),
          fmt(total / seconds, 0),
          span ? fmt((Number(span.last_ms) - Number(span.first_ms)) / 1_000, 2) : '-',
        ],
      ],
    ),
  );
  console.log('');
  console.log(
    `CPU from the first POST to the last delivery (${fmt(seconds, 2)} s; 100 % = one core):`,
  );
  console.log(cpuTable(list, cpu[0], cpu[1], seconds, total, 'delivery'));
  console.log(
    `dispatcher Postgres connections (pg_stat_activity every 250 ms): at most ${sampler.maxOpen} open, ` +
      `${sampler.maxActive} active (mean ${fmt(sampler.meanActive, 1)})`,
  );
  console.log(
    `${workLine(workBefore, workAfter, total)} (from the dispatcher's start to its stop)`,
  );
  const left = await end.queued;
  if (left) {
    console.log(
      `lane jobs BullMQ still held when the last delivery arrived: ${left.waiting} waiting, ` +
        `${left.active} active, ${left.delayed} delayed (the delayed ones are claim-end checks, due after ` +
        `PUSH_CLAIM_TIMEOUT_MS); the waiting and active ones ${drained ? 'ran' : 'had not all run'} within ` +
        `${fmt((drainedAt - drainStarted) / 1_000, 2)} s after the rows were settled.`,
    );
    const fullSeconds = (drainedAt - firstAt) / 1_000;
    console.log(
      `CPU from the first POST until those jobs had run too (${fmt(fullSeconds, 2)} s), per delivery:`,
    );
    console.log(cpuTable(list, cpu[0], cpuDrained, fullSeconds, total, 'delivery'));
  }
  const check = checkLine(sink, states, total, unknown);
  console.log(check.text);

  await profile.print('dispatcher, first POST → last delivery');
  return check.ok;
}

// ---------------------------------------------------------------------------------------------------------
// 2. Latency

interface Sent {
  task: PushTask;
  generation: number;
  committedAtMs: number;
}

/**
 * Appends `total` events at `rate`/s (open loop: each at its due time, without waiting for the previous one,
 * except that a task's events go one after the other), a new task every LATENCY_EVENTS_PER_TASK events.
 */
async function writeAtRate(
  pool: Pool,
  webhookUrl: string,
  rate: number,
  total: number,
): Promise<{ sent: Sent[]; elapsedMs: number }> {
  const sent: Sent[] = [];
  const failures: Error[] = [];
  /** The last append of each task so far: the next one of the task waits for it. */
  const tails: Promise<void>[] = [];
  let task: PushTask | undefined;
  const started = wallMs();
  for (let i = 0; i < total && failures.length === 0; i++) {
    const wait = started + (i * 1_000) / rate - wallMs();
    if (wait > 0) {
      await sleep(wait);
    }
    const generation = (i % LATENCY_EVENTS_PER_TASK) + 1;
    if (generation === 1 || task === undefined) {
      task = newPushTasks(TENANT, 1)[0]!;
      tails.push(Promise.resolve());
    }
    const current = task;
    const previous = tails[tails.length - 1] ?? Promise.resolve();
    tails[tails.length - 1] = previous
      .then(async () => {
        const committed = await appendDeliverable(
          pool,
          current,
          generation,
          generation === 1 ? webhookUrl : undefined,
        );
        sent.push({ task: current, generation, committedAtMs: committed.committedAtMs });
      })
      .catch((error: unknown) => {
        failures.push(
          error instanceof Error ? error : new Error(`append failed: ${String(error)}`),
        );
      });
  }
  await Promise.all(tails);
  if (failures[0]) {
    throw failures[0];
  }
  return { sent, elapsedMs: wallMs() - started };
}

interface LatencyFigures {
  sent: number;
  received: number;
  total: number[];
  toRow: number[];
  rowToPost: number[];
}

async function latencyFigures(
  pool: Pool,
  sink: WebhookSink,
  sent: readonly Sent[],
): Promise<LatencyFigures> {
  const created = await pool.query<{ task_id: string; generation: number; created_ms: number }>(
    `SELECT task_id, generation, extract(epoch FROM created_at) * 1000 AS created_ms
       FROM ops.push_deliveries`,
  );
  const createdAt = new Map(
    created.rows.map((r) => [`${r.task_id}#${r.generation}`, Number(r.created_ms)]),
  );
  const total: number[] = [];
  const toRow: number[] = [];
  const rowToPost: number[] = [];
  for (const s of sent) {
    const key = `${s.task.taskId}#${s.generation}`;
    const arrival = sink.arrivals.get(key);
    if (!arrival) {
      continue;
    }
    total.push(arrival.atMs - s.committedAtMs);
    const row = createdAt.get(key);
    if (row !== undefined) {
      toRow.push(row - s.committedAtMs);
      rowToPost.push(arrival.atMs - row);
    }
  }
  return {
    sent: sent.length,
    received: total.length,
    total: ascending(total),
    toRow: ascending(toRow),
    rowToPost: ascending(rowToPost),
  };
}

async function latencyPhase(infra: Infra, options: Options): Promise<boolean> {
  const setup = await setUpPhase(infra, 'latency');
  const { db, sink } = setup;
  // Every event the writer appends must be one a stream (hence a webhook) shows.
  const probe = newPushTasks(TENANT, 1)[0]!;
  for (let g = 1; g <= LATENCY_EVENTS_PER_TASK; g++) {
    if (!isDeliverable(probe, deliverableEvent(probe, g))) {
      throw new Error(`generation ${g} of a benchmark task would not be delivered`);
    }
  }
  const relay = new PlatformProcess(
    'relay',
    'apps/relay/src/main.js',
    [],
    {
      POSTGRES_URL: db.url,
      KAFKA_BROKERS: infra.brokers.join(','),
      TASK_EVENTS_TOPIC: setup.topic,
      RELAY_NAME: 'push-bench',
      ...(infra.profileDir === null ? {} : { BENCH_CPU_PROF_DIR: infra.profileDir }),
    },
    infra.profileDir === null ? [] : profilePreload(),
  );
  infra.cleanup.add('stopping the relay', () => relay.stop());
  relay.start();
  await relay.waitForOutput(/relaying to/, 60_000);
  const dispatcher = await startDispatcher(
    infra,
    setup,
    options.dispatcherEnv,
    infra.profileDir !== null,
  );
  await waitForGroup(infra, setup.name);
  const profiles = [
    { label: 'relay', cuts: new ProfileCuts(infra.profileDir, () => relay.pid) },
    { label: 'dispatcher', cuts: new ProfileCuts(infra.profileDir, () => dispatcher.pid) },
  ];

  // Warm-up (not measured): connections, pools, prepared statements, the receiver's keep-alive sockets.
  const warmUp = Math.min(50, Math.max(10, Math.round(options.rate)));
  const warmUpWritten = await writeAtRate(db.pool, sink.url, options.rate, warmUp);
  await waitForDeliveries(sink, warmUp, dispatcher, 60_000);
  await sleep(1_000);

  const total = Math.round(options.rate * options.seconds);
  const workBefore = await workCounters(db.pool, infra.redis);
  const list = phaseMeters(
    infra,
    db.pool,
    db.url,
    [
      { name: 'relay', pid: () => relay.pid, backends: 'a2a-relay' },
      { name: 'push-dispatcher', pid: () => dispatcher.pid, backends: 'a2a-push-dispatcher' },
    ],
    true,
  );
  const from = await snapshot(list);
  profiles.forEach((p) => p.cuts.cut());
  const startedAt = wallMs();
  const written = await writeAtRate(db.pool, sink.url, options.rate, total);
  const deadline = wallMs() + 30_000;
  const pending = (): number =>
    written.sent.filter((s) => !sink.arrivals.has(`${s.task.taskId}#${s.generation}`)).length;
  while (pending() > 0 && wallMs() < deadline && dispatcher.running) {
    await sleep(50);
  }
  const to = await snapshot(list);
  profiles.forEach((p) => p.cuts.cut());
  const seconds = (wallMs() - startedAt) / 1_000;
  const expected = warmUp + total;
  const states = await settledStates(db.pool, expected);
  // Idle backends report their statistics up to 10 s late; a backend that exits reports them at once.
  await dispatcher.stop();
  await relay.stop();
  await sleep(500);
  const workAfter = await workCounters(db.pool, infra.redis);
  const figures = await latencyFigures(db.pool, sink, written.sent);
  const known = new Set(
    [...warmUpWritten.sent, ...written.sent].map((s) => `${s.task.taskId}#${s.generation}`),
  );
  const unknown = [...sink.arrivals.keys()].filter((k) => !known.has(k)).length;

  console.log('');
  console.log(
    `## 2. Commit → webhook latency: ${options.rate} events/s for ${options.seconds} s, log → relay → Kafka → ` +
      'dispatcher → receiver',
  );
  console.log(
    `One event per transaction with a task notice, a new task every ${LATENCY_EVENTS_PER_TASK} events (its ` +
      `first transaction registers the webhook), every event a webhook; relay and dispatcher with default ` +
      `settings (dispatcher: PUSH_RECONCILE_INTERVAL_MS=3600000${Object.entries(
        options.dispatcherEnv,
      )
        .map(([k, v]) => `, ${k}=${v}`)
        .join(
          '',
        )}); ${warmUp} warm-up events before. Written in ${fmt(written.elapsedMs / 1_000, 2)} s ` +
      `(${fmt(figures.sent / (written.elapsedMs / 1_000), 0)} events/s achieved).`,
  );
  const row = (label: string, values: readonly number[], count = true): string[] => [
    label,
    count ? String(figures.sent) : '',
    String(values.length),
    fmt(percentile(values, 50)),
    fmt(percentile(values, 90)),
    fmt(percentile(values, 99)),
    fmt(values.at(-1)),
    String(values.filter((v) => v > 100).length),
  ];
  console.log(
    table(
      ['ms', 'sent', 'received', 'p50', 'p90', 'p99', 'max', '> 100 ms'],
      [
        row('COMMIT → POST received', figures.total),
        row('  COMMIT → delivery row inserted', figures.toRow, false),
        row('  delivery row inserted → POST received', figures.rowToPost, false),
      ],
      [0],
    ),
  );
  console.log('');
  console.log(`CPU while writing and delivering (${fmt(seconds, 2)} s; 100 % = one core):`);
  console.log(cpuTable(list, from, to, seconds, Math.max(1, figures.received), 'delivery'));
  console.log(workLine(workBefore, workAfter, Math.max(1, figures.received)));
  const check = checkLine(sink, states, expected, unknown);
  console.log(check.text);
  for (const p of profiles) {
    await p.cuts.print(`${p.label}, while writing and delivering`);
  }
  return check.ok && figures.received === figures.sent;
}

// ---------------------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  calibrateWallClock();
  const cleanup = new Cleanup();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      console.error(`${signal}: cleaning up`);
      void cleanup.run().finally(() => process.exit(130));
    });
  }
  try {
    const brokers = await kafkaBrokers();
    const { REDIS_URL: redisUrl } = loadConfig(pushDispatcherSchema.pick({ REDIS_URL: true }));
    const redis = new Redis(redisUrl, {
      connectionName: 'push-bench',
      maxRetriesPerRequest: 1,
      lazyConnect: true,
    });
    redis.on('error', () => undefined);
    await redis.connect().catch((error: unknown) => {
      throw new Error(`Redis at ${redisUrl} is not reachable: ${String(error)}`);
    });
    cleanup.add('closing the Redis connection', () => redis.quit());
    let profileDir: string | null = null;
    if (options.cpuProfDir !== null) {
      mkdirSync(options.cpuProfDir, { recursive: true });
      profileDir = mkdtempSync(join(options.cpuProfDir, 'push-'));
    }
    const infra: Infra = {
      brokers,
      kafka: new Kafka({ clientId: 'push-bench', brokers, logLevel: logLevel.NOTHING }),
      redisUrl,
      redis,
      keyFile: writeSigningKey(cleanup),
      profileDir,
      cleanup,
    };
    console.log(`# Push dispatcher benchmark, ${new Date().toISOString()}`);
    const server = new Pool({ connectionString: loadConfig(testSchema).TEST_POSTGRES_URL, max: 1 });
    try {
      await printMachine(infra, server);
    } finally {
      await server.end();
    }
    let ok = true;
    for (const phase of options.phases) {
      ok =
        (phase === 'throughput'
          ? await throughputPhase(infra, options)
          : await latencyPhase(infra, options)) && ok;
    }
    console.log('');
    console.log(`load average after: ${loadAverage()}`);
    return ok ? 0 : 1;
  } finally {
    await cleanup.run();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);

/**
 * `npm run drill`: the production overlay's Deployments run as local processes, as a cluster would run
 * them (docs/deploy.md "The cluster drill"): the migrations Job first, then every replica with the
 * manifest's command, environment (ConfigMap and Secret references resolved from local values, ports
 * moved per replica, Service names resolved to the replicas) and probes; example workers; client load over
 * JSON-RPC; a rolling restart of every Deployment and a SIGKILL of one replica of each. Prints what the
 * clients saw and exits 1 when a rule is broken.
 *
 * Options: `--rate N` SendMessage calls per second (default 8), `--streams N` streams followed at once
 * (default 4), `--logs` (the processes' last output at the end). Environment: TEST_POSTGRES_URL (where the
 * fresh database is created), KAFKA_BROKERS, REDIS_URL.
 */
import { loadConfig, pushDispatcherSchema, relaySchema, testSchema } from '@lib/config';
import { createPool } from '@lib/event-store';
import { seedTenant } from '@lib/tenancy';
import { repoRoot, startAgentWorker, type PlatformProcess } from '@lib/testing';
import { AGENT_PROFILES } from '@lib/worker-sdk';
import { Redis } from 'ioredis';
import { Kafka, logLevel } from 'kafkajs';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'pg';
import { renderKustomization } from '../k8s/kustomize';
import { DrillLoad } from './load';
import { LocalCluster } from './local-cluster';
import { clusterPlan } from './plan';
import type { Replica, Shutdown } from './replica';
import { brokenRules, formatReport, streamGaps, type DrillResult } from './report';

const READY_TIMEOUT_MS = 90_000;
/**
 * How long after the load stopped every accepted task may take to end (a SIGKILLed task-service's leases
 * expire first): only a task that never ends misses it (issue 30: no rule of the drill is a speed).
 */
const TERMINAL_WAIT_MS = 180_000;
/** The container port of every app's ops listener (docs/deploy.md "Probes"). */
const OPS_PORT = 9464;
/** The order of the rolling restart; each Deployment's replicas one after another. */
const ROLLOUT = [
  'a2a-task-service',
  'a2a-ingress',
  'a2a-relay',
  'a2a-push-dispatcher',
  'a2a-admin-api',
  'a2a-bridge',
];
const WORKER_AGENTS = ['echo', 'countdown'] as const;

interface Options {
  rate: number;
  streams: number;
  logs: boolean;
}

function parseArgs(argv: string[]): Options {
  const options: Options = { rate: 8, streams: 4, logs: false };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const number = (): number => {
      const value = Number(argv[++i]);
      if (!Number.isInteger(value) || value <= 0) {
        throw new Error(`${flag} needs a positive integer`);
      }
      return value;
    };
    if (flag === '--rate') {
      options.rate = number();
    } else if (flag === '--streams') {
      options.streams = number();
    } else if (flag === '--logs') {
      options.logs = true;
    } else {
      throw new Error(`unknown argument ${flag} (known: --rate N, --streams N, --logs)`);
    }
  }
  return options;
}

function log(line: string): void {
  console.log(`[drill ${new Date().toISOString().slice(11, 19)}] ${line}`);
}

async function main(): Promise<number> {
  const options = parseArgs(process.argv.slice(2));
  const root = repoRoot();
  const id = randomBytes(3).toString('hex');
  const tenant = `drill-${id}`;
  const apiKey = randomBytes(16).toString('hex');
  const workerSecret = randomBytes(16).toString('hex');
  const adminToken = randomBytes(24).toString('hex');
  const postgres = new URL(loadConfig(testSchema).TEST_POSTGRES_URL);
  const database = `a2a_drill_${id}`;
  const databaseUrl = new URL(postgres.toString());
  databaseUrl.pathname = `/${database}`;
  const { KAFKA_BROKERS } = loadConfig(relaySchema.pick({ KAFKA_BROKERS: true }));
  const { REDIS_URL } = loadConfig(pushDispatcherSchema.pick({ REDIS_URL: true }));
  const topic = `a2a.task-events.v1.drill-${id}`;
  const queuePrefix = `a2a-push-drill-${id}`;
  // The role the apps connect as (a cluster's a2a_runtime): nothing but what the migrations Job grants it.
  const runtimeRole = `a2a_runtime_drill_${id}`;
  const runtimeUrl = new URL(databaseUrl.toString());
  runtimeUrl.username = runtimeRole;
  runtimeUrl.password = '';
  await createRole(postgres.toString(), runtimeRole);

  // The Secrets, as the cluster would hold them; Secret volumes become folders of files.
  const secretsDir = mkdtempSync(join(tmpdir(), 'a2a-drill-'));
  const secrets: Record<string, Record<string, string>> = {
    'a2a-postgres-app': { uri: databaseUrl.toString() },
    'a2a-postgres-runtime': { uri: runtimeUrl.toString(), username: runtimeRole, password: '' },
    // The local broker speaks plaintext without SASL: the Kafka TLS and SCRAM settings are left out below.
    'a2a-relay': { password: 'unused-here' },
    'a2a-push-dispatcher': { password: 'unused-here' },
    'a2a-kafka-cluster-ca-cert': { 'ca.crt': '' },
    'a2a-redis': { url: REDIS_URL },
    'a2a-admin': { 'bootstrap-token': adminToken },
    'a2a-upstream': { UPSTREAM_SECRETS_KEY: randomBytes(32).toString('base64') },
    'a2a-card-signing-key': {
      'signing-key.pem': generateKeyPairSync('ec', { namedCurve: 'P-256' })
        .privateKey.export({ format: 'pem', type: 'pkcs8' })
        .toString(),
    },
  };
  const secretDirs: Record<string, string> = {};
  for (const [name, data] of Object.entries(secrets)) {
    const dir = join(secretsDir, name);
    mkdirSync(dir, { mode: 0o700 });
    Object.entries(data).forEach(([key, value]) =>
      writeFileSync(join(dir, key), value, { mode: 0o400 }),
    );
    secretDirs[name] = dir;
  }

  const plan = clusterPlan(renderKustomization('overlays/production'));
  const cluster = await LocalCluster.create(
    plan,
    {
      secrets,
      secretDirs,
      configOverrides: {
        KAFKA_BROKERS,
        // This run's own topic, consumer group and queue keys on the shared local broker and Redis.
        TASK_EVENTS_TOPIC: topic,
        PUSH_CONSUMER_GROUP: `push-dispatcher-drill-${id}`,
        PUSH_QUEUE_PREFIX: queuePrefix,
        SCHEMA_RUNTIME_ROLE: runtimeRole,
      },
      unset: [
        'KAFKA_TLS',
        'KAFKA_TLS_CA_FILE',
        'KAFKA_SASL_MECHANISM',
        'KAFKA_SASL_USERNAME',
        'KAFKA_SASL_PASSWORD',
      ],
      podFields: { 'metadata.namespace': 'a2a', 'spec.nodeName': hostname() },
      extraEnv: { NO_COLOR: '1' },
    },
    root,
  );
  const workers: PlatformProcess[] = [];
  const shutdowns: Shutdown[] = [];
  const kills: string[] = [];
  let load: DrillLoad | null = null;
  try {
    log(`database ${database}, topic ${topic}, tenant ${tenant}, apps as ${runtimeRole}`);
    // A first install as `kubectl apply -k` makes it: the Deployments start with the Job, before the
    // database even exists. Every replica must wait for its schema, unready, until the Job has run.
    for (const replica of cluster.all()) {
      replica.start();
    }
    const waited = await waitingForSchema(cluster.all());
    const readyBeforeJob = cluster
      .all()
      .filter((replica) => replica.ready)
      .map((replica) => replica.name);
    log(`waiting for the schema before the Job: ${waited.join(', ')}`);
    const jobStarted = Date.now();
    const jobExit = await cluster.runJob('a2a-migrate');
    const migrations = {
      exitCode: jobExit,
      ms: Date.now() - jobStarted,
      waitedForSchema: waited,
      readyBeforeJob,
    };
    log(`migrations Job: exit ${jobExit} in ${migrations.ms} ms`);
    if (jobExit !== 0) {
      throw new Error('the migrations Job failed');
    }
    await seed(databaseUrl.toString(), tenant, apiKey, workerSecret);
    await Promise.all(cluster.all().map((replica) => replica.waitReady(READY_TIMEOUT_MS)));
    log(
      `ready: ${cluster
        .all()
        .map((r) => r.name)
        .join(', ')}`,
    );

    // Example workers, not part of the deployment: one of each agent per task-service replica, each with
    // every replica in its target (grpc-js picks the first that answers; the order is rotated).
    const workerAddresses = cluster.addresses('a2a-task-service', 'worker-grpc');
    for (const [i] of workerAddresses.entries()) {
      const rotated = [...workerAddresses.slice(i), ...workerAddresses.slice(0, i)];
      for (const agent of WORKER_AGENTS) {
        workers.push(
          await startAgentWorker(agent, `ipv4:${rotated.join(',')}`, `${workerSecret}:${agent}`, {
            NO_COLOR: '1',
          }),
        );
      }
    }
    log(`${workers.length} example workers connected`);

    load = new DrillLoad(cluster, {
      tenant,
      apiKey,
      adminToken,
      ratePerSecond: options.rate,
      streams: options.streams,
    });
    load.start();
    await sleep(5_000);

    for (const name of ROLLOUT) {
      for (const replica of cluster.of(name)) {
        log(`rolling restart: terminating ${replica.name}`);
        const shutdown = await replica.terminate();
        shutdowns.push(shutdown);
        log(
          `${replica.name} exited ${shutdown.exitCode} after ${shutdown.exitMs} ms; starting its successor`,
        );
        replica.start();
        await replica.waitReady(READY_TIMEOUT_MS);
      }
    }
    for (const name of ROLLOUT) {
      const victim = cluster.of(name)[0];
      if (victim) {
        log(`SIGKILL ${victim.name}`);
        kills.push(victim.name);
        await cluster.killAndRestart(victim, READY_TIMEOUT_MS);
        log(`${victim.name} restarted and ready`);
      }
    }
    await sleep(5_000);
    log('stopping the load');
    await load.stop();

    const result = await verify(load, cluster, migrations, shutdowns, kills);
    console.log('');
    console.log(formatReport(result));
    const broken = brokenRules(result);
    console.log('');
    console.log(broken.length === 0 ? 'drill: PASS' : `drill: FAIL\n  ${broken.join('\n  ')}`);
    if (options.logs || broken.length > 0) {
      for (const replica of cluster.all()) {
        console.log(`\n## last output of ${replica.name}\n${replica.log.slice(-3_000)}`);
      }
    }
    return broken.length === 0 ? 0 : 1;
  } finally {
    await load?.stop();
    await Promise.all([...workers.map((w) => w.stop()), ...cluster.all().map((r) => r.stop())]);
    await cleanUp(postgres.toString(), database, KAFKA_BROKERS, topic, REDIS_URL, queuePrefix);
    await dropRole(postgres.toString(), runtimeRole);
    rmSync(secretsDir, { recursive: true, force: true });
  }
}

/**
 * Waits until every replica's ops listener says it waits for the schema (503, `waitingFor: schema…`), probing
 * a few times over at least two readiness periods; returns the names of those that did. One that never
 * says so within the deadline is left out (the report then names the rule it broke).
 */
async function waitingForSchema(replicas: Replica[]): Promise<string[]> {
  const seen = new Set<string>();
  const deadline = Date.now() + READY_TIMEOUT_MS;
  const settled = Date.now() + 2 * 5_000;
  while (Date.now() < deadline && (seen.size < replicas.length || Date.now() < settled)) {
    for (const replica of replicas) {
      const answer = await fetch(`http://127.0.0.1:${replica.port(OPS_PORT)}/readyz`)
        .then(async (reply) => ({ status: reply.status, body: await reply.text() }))
        .catch(() => null);
      if (answer?.status === 503 && /"waitingFor":"schema/.test(answer.body)) {
        seen.add(replica.name);
      }
    }
    await sleep(500);
  }
  return replicas.filter((replica) => seen.has(replica.name)).map((replica) => replica.name);
}

async function createRole(adminUrl: string, role: string): Promise<void> {
  const pool = new Pool({ connectionString: adminUrl, max: 1 });
  await pool.query(`CREATE ROLE "${role}" LOGIN`).finally(() => pool.end());
}

/** After its database is dropped, the role holds nothing any more. */
async function dropRole(adminUrl: string, role: string): Promise<void> {
  const pool = new Pool({ connectionString: adminUrl, max: 1 });
  await pool.query(`DROP ROLE IF EXISTS "${role}"`).finally(() => pool.end());
}

async function seed(url: string, tenant: string, apiKey: string, workerSecret: string) {
  const pool = createPool(url, { max: 1, applicationName: 'a2a-drill:seed' });
  try {
    await seedTenant(pool, {
      tenantId: tenant,
      displayName: 'Cluster drill',
      apiKeys: [{ keyId: `${tenant}-client`, principalId: 'drill-client', secret: apiKey }],
      agents: WORKER_AGENTS.map((agentId) => ({
        agentId,
        profile: AGENT_PROFILES[agentId],
        onLeaseLost: 'redispatch' as const,
        maxAttempts: 5,
        workerSecret: `${workerSecret}:${agentId}`,
      })),
    });
  } finally {
    await pool.end();
  }
}

/** Every accepted task terminal (waiting for leases that a kill left behind), every stream complete. */
async function verify(
  load: DrillLoad,
  cluster: LocalCluster,
  migrations: DrillResult['migrations'],
  shutdowns: Shutdown[],
  kills: string[],
): Promise<DrillResult> {
  log(`checking ${load.accepted.size} tasks and ${load.streams.length} streams`);
  const terminal = new Set([
    'TASK_STATE_COMPLETED',
    'TASK_STATE_FAILED',
    'TASK_STATE_CANCELED',
    'TASK_STATE_REJECTED',
  ]);
  const pending = new Map<string, string | null>([...load.accepted.keys()].map((t) => [t, null]));
  // A SIGKILLed task-service's leases expire after LEASE_TTL_MS; the tasks are then dispatched again.
  const deadline = Date.now() + TERMINAL_WAIT_MS;
  while (pending.size > 0 && Date.now() < deadline) {
    for (const taskId of [...pending.keys()]) {
      const state = await load.taskState(load.accepted.get(taskId)?.agent ?? 'echo', taskId);
      if (state !== null && terminal.has(state)) {
        pending.delete(taskId);
      } else {
        pending.set(taskId, state);
      }
    }
    if (pending.size > 0) {
      await sleep(2_000);
    }
  }
  const gaps: DrillResult['gaps'] = [];
  const unreplayed: string[] = [];
  for (const stream of load.streams) {
    if (stream.taskId === null) {
      continue;
    }
    const replay = await load.replay(stream.agent, stream.taskId);
    if (replay === null) {
      unreplayed.push(stream.taskId);
    } else {
      gaps.push({ taskId: stream.taskId, ...streamGaps(stream.ids, replay) });
    }
  }
  return {
    migrations,
    replicas: Object.fromEntries(cluster.plan.deployments.map((d) => [d.workload, d.replicas])),
    sent: load.sent,
    adminCalls: load.adminCalls,
    accepted: load.accepted.size,
    lost: [...pending].map(([taskId, state]) => {
      const { agent = '?', how = '?' } = load.accepted.get(taskId) ?? {};
      return { taskId, how: `${how} to ${agent}`, state };
    }),
    abandoned: load.abandoned,
    errors: load.errors,
    streams: load.streams,
    gaps,
    unreplayed,
    shutdowns,
    kills,
    events: cluster.events,
    workerSessions: Object.fromEntries(
      await Promise.all(
        cluster
          .of('a2a-task-service')
          .map(async (replica) => [replica.name, await workerSessions(replica)] as const),
      ),
    ),
  };
}

/** The replica's `a2a_worker_sessions` gauge, read from its ops listener's /metrics. */
async function workerSessions(replica: Replica): Promise<number | null> {
  try {
    const response = await fetch(`http://127.0.0.1:${replica.port(OPS_PORT)}/metrics`);
    const gauge = /^a2a_worker_sessions (\d+)$/m.exec(await response.text());
    return gauge?.[1] === undefined ? null : Number(gauge[1]);
  } catch {
    return null;
  }
}

/** Drops the run's database, topic and queue keys. */
async function cleanUp(
  adminUrl: string,
  database: string,
  brokers: string,
  topic: string,
  redisUrl: string,
  queuePrefix: string,
): Promise<void> {
  const pool = new Pool({ connectionString: adminUrl, max: 1 });
  await pool.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`).finally(() => pool.end());
  const admin = new Kafka({ brokers: brokers.split(','), logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
  await admin.disconnect();
  const redis = new Redis(redisUrl);
  const keys = await redis.keys(`${queuePrefix}:*`);
  if (keys.length > 0) {
    await redis.del(...keys);
  }
  redis.disconnect();
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    process.exit(1);
  },
);

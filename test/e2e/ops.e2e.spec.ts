/**
 * The ops listener of every deployable (docs/deploy.md, docs/observability.md): liveness, readiness by the
 * dependencies each app needs, Prometheus metrics after a known workload, and the graceful drain on SIGTERM
 * (a task-service hands its workers over to another replica; an ingress ends its streams, which resume on
 * another ingress with no gap). Every app runs as its own process, two task-services and two ingresses.
 */
import { status as GrpcStatus } from '@grpc/grpc-js';
import { seedTenant } from '@lib/tenancy';
import {
  createTestDatabase,
  freePort,
  kafkaBrokers,
  PlatformProcess,
  RawWorker,
  startAgentWorker,
  startIngress,
  startTaskService,
  uniqueTopic,
  type TestDatabase,
} from '@lib/testing';
import { AGENT_PROFILES, type ExampleAgentId } from '@lib/worker-sdk';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { RESUMABLE_STREAMS_URI } from '../../apps/ingress/src/streaming/resumable-streams';
import { createTopic } from '../../apps/relay/test/support/topic';
import { jsonRpcUrl, rawRpc, request, sentTask, taskResult } from './support/json-rpc';
import { streamsWithGaps, taskEvents } from './support/platform';
import {
  generationOf,
  openSse,
  resultOf,
  streamedGenerations,
  type SseConnection,
  type SseFrame,
} from './support/sse';

const API_KEY = 'ops-key';
const ADMIN_TOKEN = 'ops-e2e-bootstrap-token-0123456789';
const workerSecret = (agent: string): string => `ops-worker-secret:${agent}`;
const auth = { apiKey: API_KEY };
const WAIT = { timeout: 15_000, interval: 100 };
/**
 * How long a SIGTERMed app may take to exit by itself before the test SIGKILLs it: more than its own limit
 * (SHUTDOWN_GRACE_MS below + at most 10 s for the modules' close, after which it exits 1 by itself).
 */
const STOP_DEADLINE_MS = 30_000;

interface App {
  name: string;
  process: PlatformProcess;
  ops: string;
}

let db: TestDatabase | undefined;
let keyDir = '';
const apps: App[] = [];
const workers: PlatformProcess[] = [];
let taskServiceA: App;
let taskServiceB: App;
let ingress1: App & { baseUrl: string };
let ingress2: App & { baseUrl: string };
let shared: Record<string, string> & { POSTGRES_URL: string };
const LEASE_TTL_MS = 60_000;

/** An app process on free ports with its ops listener on a free port of its own. */
async function opsPort(): Promise<{ OPS_PORT: string; url: string }> {
  const port = await freePort();
  return { OPS_PORT: String(port), url: `http://127.0.0.1:${port}` };
}

async function startApp(
  name: string,
  entry: string,
  env: Record<string, string>,
  ready: RegExp,
): Promise<App> {
  const { OPS_PORT, url } = await opsPort();
  const proc = new PlatformProcess(name, entry, [], { ...env, OPS_PORT }).start();
  await proc.waitForOutput(ready, 60_000);
  const app = { name, process: proc, ops: url };
  apps.push(app);
  return app;
}

async function get(url: string): Promise<{ status: number; text: string }> {
  const response = await fetch(url);
  return { status: response.status, text: await response.text() };
}

/** The value of one sample of a Prometheus text exposition; undefined when the sample is absent. */
function sample(
  text: string,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const wanted = Object.entries(labels);
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) {
      continue;
    }
    const match = /^([^{ ]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    const found = Object.fromEntries(
      [...(match?.[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]),
    );
    if (match && wanted.every(([key, value]) => found[key] === value)) {
      return Number(match[3]);
    }
  }
  return undefined;
}

async function scrape(app: App): Promise<string> {
  const { status, text } = await get(`${app.ops}/metrics`);
  expect(status).toBe(200);
  return text;
}

beforeAll(async () => {
  db = await createTestDatabase('e2e_ops');
  // `interview` has no worker process: a raw worker of the test's own takes its tasks.
  const agents: ExampleAgentId[] = ['echo', 'countdown', 'interview'];
  await seedTenant(db.pool, {
    tenantId: 'demo',
    displayName: 'Demo tenant',
    apiKeys: [{ keyId: 'ops-default', principalId: 'ops-user', secret: API_KEY }],
    agents: agents.map((agentId) => ({
      agentId,
      profile: AGENT_PROFILES[agentId],
      onLeaseLost: 'redispatch',
      maxAttempts: 3,
      workerSecret: workerSecret(agentId),
    })),
  });
  keyDir = mkdtempSync(join(tmpdir(), 'ops-e2e-'));
  const keyFile = join(keyDir, 'card-key.pem');
  writeFileSync(
    keyFile,
    generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({
      type: 'pkcs8',
      format: 'pem',
    }),
  );
  const brokers = await kafkaBrokers();
  const topic = uniqueTopic('ops-e2e');
  await createTopic(brokers, topic);
  const suffix = randomUUID().slice(0, 8);
  shared = {
    POSTGRES_URL: db.url,
    // Long enough that an expiry seen within seconds can only come from a lease handed back.
    LEASE_TTL_MS: String(LEASE_TTL_MS),
    KAFKA_BROKERS: brokers.join(','),
    TASK_EVENTS_TOPIC: topic,
    AGENT_CARD_SIGNING_KEY_FILE: keyFile,
    SHUTDOWN_GRACE_MS: '10000',
  };

  const targets: { command: string; worker: string }[] = [];
  const startReplica = async (id: string): Promise<App> => {
    const { OPS_PORT, url } = await opsPort();
    const started = await startTaskService({ ...shared, REPLICA_ID: id, OPS_PORT });
    targets.push({ command: started.commandTarget, worker: started.workerTarget });
    const app = { name: id, process: started.process, ops: url };
    apps.push(app);
    return app;
  };
  taskServiceA = await startReplica('replica-a');
  taskServiceB = await startReplica('replica-b');
  const startFront = async (name: string): Promise<App & { baseUrl: string }> => {
    const { OPS_PORT, url } = await opsPort();
    const started = await startIngress(
      { ...shared, OPS_PORT },
      targets.map((t) => t.command),
    );
    const app = { name, process: started.process, ops: url, baseUrl: started.baseUrl };
    apps.push(app);
    return app;
  };
  ingress1 = await startFront('ingress-1');
  ingress2 = await startFront('ingress-2');
  await startApp(
    'relay',
    'apps/relay/src/main.js',
    { ...shared, RELAY_IDLE_POLL_MS: '50' },
    /relay ready/,
  );
  await startApp(
    'push-dispatcher',
    'apps/push-dispatcher/src/main.js',
    {
      ...shared,
      PUSH_CONSUMER_GROUP: `ops-e2e-${suffix}`,
      PUSH_QUEUE_PREFIX: `ops-e2e-${suffix}`,
    },
    /push dispatcher ready/,
  );
  await startApp(
    'admin-api',
    'apps/admin-api/src/main.js',
    { ...shared, ADMIN_API_PORT: String(await freePort()), ADMIN_BOOTSTRAP_TOKEN: ADMIN_TOKEN },
    /admin API ready/,
  );
  // Workers are given both replicas; pick-first connects them to replica A while it takes sessions.
  const workerTarget = `ipv4:${targets.map((t) => t.worker).join(',')}`;
  for (const agent of ['echo', 'countdown']) {
    workers.push(await startAgentWorker(agent, workerTarget, workerSecret(agent)));
  }
}, 240_000);

afterAll(async () => {
  for (const proc of [...workers, ...apps.map((app) => app.process)].reverse()) {
    await proc.stop();
  }
  await db?.drop();
  rmSync(keyDir, { recursive: true, force: true });
});

describe('ops endpoints of every app', () => {
  it('answers /livez, and /readyz ready with the state of the shared dependencies each app uses', async () => {
    const expected: Record<string, string[]> = {
      'replica-a': ['postgres'],
      'replica-b': ['postgres'],
      'ingress-1': ['postgres'],
      'ingress-2': ['postgres'],
      relay: ['postgres', 'kafka'],
      'push-dispatcher': ['postgres', 'redis', 'kafka'],
      'admin-api': ['postgres'],
    };
    for (const app of apps) {
      expect(await get(`${app.ops}/livez`), app.name).toMatchObject({ status: 200 });
      await vi.waitFor(async () => {
        const ready = await get(`${app.ops}/readyz`);
        expect(ready.status, `${app.name}: ${ready.text}`).toBe(200);
        const body = JSON.parse(ready.text) as {
          status: string;
          dependencies: Record<string, { status: string }>;
        };
        expect(body.status).toBe('ok');
        expect(Object.keys(body.dependencies).sort()).toStrictEqual(expected[app.name]?.sort());
        expect(Object.values(body.dependencies).map((d) => d.status)).not.toContain('down');
      }, WAIT);
      const scraped = await get(`${app.ops}/metrics`);
      for (const dependency of expected[app.name] ?? []) {
        expect(scraped.text, app.name).toContain(`a2a_dependency_up{dependency="${dependency}"} 1`);
      }
      expect((await get(`${app.ops}/nothing`)).status).toBe(404);
    }
  });

  it('counts requests, errors, durations, tasks, work, relay output and streams after a known workload', async () => {
    const url = jsonRpcUrl(ingress1.baseUrl, 'demo', 'echo');
    const before = await scrape(ingress1);
    const sent =
      sample(before, 'a2a_requests_total', { binding: 'JSONRPC', method: 'SendMessage' }) ?? 0;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const reply = await rawRpc(
        url,
        request('SendMessage', {
          message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: `metric ${i}` }] },
        }),
        auth,
      );
      ids.push(sentTask(reply).id);
    }
    const missing = await rawRpc(url, request('GetTask', { id: randomUUID() }), auth);
    expect(missing.json.error?.code).toBe(-32001);
    const restGet = await fetch(`${ingress1.baseUrl}/agents/demo/echo/rest/tasks/${ids[0]}`, {
      headers: { 'X-API-Key': API_KEY, 'A2A-Version': '1.0' },
    });
    expect(restGet.status).toBe(200);

    const text = await scrape(ingress1);
    const jsonrpc = { binding: 'JSONRPC' };
    expect(sample(text, 'a2a_requests_total', { ...jsonrpc, method: 'SendMessage' })).toBe(
      sent + 5,
    );
    expect(
      sample(text, 'a2a_request_duration_seconds_count', { ...jsonrpc, method: 'SendMessage' }),
    ).toBe(sent + 5);
    expect(
      sample(text, 'a2a_request_errors_total', {
        ...jsonrpc,
        method: 'GetTask',
        reason: 'TASK_NOT_FOUND',
      }),
    ).toBe(1);
    expect(sample(text, 'a2a_requests_total', { binding: 'HTTP+JSON', method: 'GetTask' })).toBe(1);
    expect(
      sample(text, 'a2a_request_errors_total', { binding: 'HTTP+JSON', method: 'GetTask' }),
    ).toBe(undefined);
    expect(sample(text, 'process_cpu_seconds_total')).toBeGreaterThan(0);

    // Tasks by state and the work queue come from Postgres: every replica sees all of them.
    const replica = await scrape(taskServiceB);
    expect(sample(replica, 'a2a_tasks', { state: 'TASK_STATE_COMPLETED' })).toBeGreaterThanOrEqual(
      5,
    );
    expect(sample(replica, 'a2a_work_queue_depth')).toBe(0);
    expect(sample(replica, 'a2a_leases_held')).toBe(0);
    // The workers went to replica A (pick-first); replica B has none.
    expect(sample(await scrape(taskServiceA), 'a2a_worker_sessions')).toBe(2);
    expect(sample(replica, 'a2a_worker_sessions')).toBe(0);

    const relay = apps.find((app) => app.name === 'relay')!;
    await vi.waitFor(async () => {
      const published = sample(await scrape(relay), 'a2a_relay_events_published_total') ?? 0;
      expect(published).toBeGreaterThanOrEqual(5 * 4);
    }, WAIT);
    const push = apps.find((app) => app.name === 'push-dispatcher')!;
    const pushed = await scrape(push);
    expect(sample(pushed, 'a2a_push_backlog')).toBe(0);
    expect(sample(pushed, 'a2a_push_dead_letters_total')).toBe(0);

    // A stream open on ingress 2 is counted there, and no longer once it is closed.
    const countdown = jsonRpcUrl(ingress2.baseUrl, 'demo', 'countdown');
    const stream = await openSse(
      countdown,
      request('SendStreamingMessage', {
        message: {
          messageId: randomUUID(),
          role: 'ROLE_USER',
          parts: [{ text: '2' }],
          metadata: { stepMs: 200 },
        },
      }),
      auth,
    );
    expect(await stream.next()).not.toBeNull();
    expect(sample(await scrape(ingress2), 'a2a_stream_subscribers')).toBe(1);
    const rest: SseFrame[] = [];
    for await (const frame of stream) {
      rest.push(frame);
    }
    expect(rest.length).toBeGreaterThan(0);
    await vi.waitFor(
      async () => expect(sample(await scrape(ingress2), 'a2a_stream_subscribers')).toBe(0),
      WAIT,
    );
  });
});

describe('graceful drain on SIGTERM', () => {
  it('a task-service turns unready, drains by itself, and its worker carries a running task over to the other replica', async () => {
    const url = jsonRpcUrl(ingress1.baseUrl, 'demo', 'countdown');
    const reply = await rawRpc(
      url,
      request('SendMessage', {
        message: {
          messageId: randomUUID(),
          role: 'ROLE_USER',
          parts: [{ text: '6' }],
          metadata: { stepMs: 500 },
        },
        configuration: { returnImmediately: true },
      }),
      auth,
    );
    const taskId = sentTask(reply).id;
    await vi.waitFor(async () => {
      const events = await taskEvents(db!.pool, 'demo', taskId);
      expect(events.some((e) => e.event_type === 'TaskLeaseGranted')).toBe(true);
    }, WAIT);
    const stopped = taskServiceA.process.stop('SIGTERM', STOP_DEADLINE_MS);
    // Unready before it is gone (or gone already: nothing answers then either).
    await vi.waitFor(
      async () => {
        const ready = await get(`${taskServiceA.ops}/readyz`).catch(() => ({
          status: 0,
          text: '',
        }));
        expect([503, 0]).toContain(ready.status);
      },
      { ...WAIT, interval: 20 },
    );
    await stopped;
    expect(taskServiceA.process.log).toMatch(
      /[1-9]\d* lease\(s\) handed back, 2 worker session\(s\) closed/,
    );
    // It exited by itself (exit 0 follows this line), every drain step finished rather than being cut.
    expect(taskServiceA.process.log).toMatch(/shut down in \d+ ms/);
    expect(taskServiceA.process.log).not.toMatch(/drain step \S+: (timed out|failed)/);

    // The worker reconnected to replica B with its lease and finished: one lease, never re-dispatched.
    await vi.waitFor(
      async () => {
        const read = await rawRpc(url, request('GetTask', { id: taskId }), auth);
        expect(taskResult(read).status.state).toBe('TASK_STATE_COMPLETED');
      },
      { timeout: 20_000, interval: 100 },
    );
    const events = await taskEvents(db!.pool, 'demo', taskId);
    expect(events.filter((e) => e.event_type === 'TaskLeaseGranted')).toHaveLength(1);
    expect(events.filter((e) => e.event_type === 'TaskLeaseExpired')).toHaveLength(0);
    expect(sample(await scrape(taskServiceB), 'a2a_worker_sessions')).toBe(2);
    expect(await streamsWithGaps(db!.pool)).toStrictEqual([]);
  });

  it('a draining task-service hands back the leases of a worker that does not come back: another replica expires them before the lease TTL could', async () => {
    const { OPS_PORT } = await opsPort();
    const replicaC = await startTaskService({ ...shared, REPLICA_ID: 'replica-c', OPS_PORT });
    const raw = new RawWorker(replicaC.workerTarget, workerSecret('interview'));
    try {
      await raw.connect(1);
      const reply = await rawRpc(
        jsonRpcUrl(ingress1.baseUrl, 'demo', 'interview'),
        request('SendMessage', {
          message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'hold on' }] },
          configuration: { returnImmediately: true },
        }),
        auth,
      );
      const taskId = sentTask(reply).id;
      const assignment = await raw.nextAssignment(15_000);
      expect(assignment.taskId).toBe(taskId);
      await replicaC.process.stop('SIGTERM', STOP_DEADLINE_MS);
      expect(raw.closedWith?.code).toBe(GrpcStatus.UNAVAILABLE);
      // The raw worker never reconnects: a sweeper of replica B expires the lease it was handed back. The
      // stop and this wait (at most 30 s + 15 s) end before the lease's own TTL (60 s from its grant) could
      // run out: an expiry here comes from the hand-back.
      await vi.waitFor(async () => {
        const events = await taskEvents(db!.pool, 'demo', taskId);
        expect(events.map((e) => e.event_type)).toContain('TaskLeaseExpired');
      }, WAIT);
    } finally {
      raw.disconnect();
      await replicaC.process.stop();
    }
  });

  it('an ingress ends its streams on SIGTERM and they resume on another ingress with no gap', async () => {
    const resumable = { ...auth, extensions: [RESUMABLE_STREAMS_URI] };
    const started = await rawRpc(
      jsonRpcUrl(ingress2.baseUrl, 'demo', 'countdown'),
      request('SendMessage', {
        message: {
          messageId: randomUUID(),
          role: 'ROLE_USER',
          parts: [{ text: '8' }],
          metadata: { stepMs: 400 },
        },
        configuration: { returnImmediately: true },
      }),
      auth,
    );
    const taskId = sentTask(started).id;
    const first: SseConnection = await openSse(
      jsonRpcUrl(ingress2.baseUrl, 'demo', 'countdown'),
      request('SubscribeToTask', { id: taskId }),
      resumable,
    );
    const seen: number[] = [];
    for (let i = 0; i < 2; i++) {
      const frame = await first.next();
      expect(frame).not.toBeNull();
      seen.push(generationOf(frame!));
    }
    const stopped = ingress2.process.stop('SIGTERM', STOP_DEADLINE_MS);
    // The stream ends (without a final event) rather than being cut: read it to its end.
    for await (const frame of first) {
      seen.push(generationOf(frame));
      expect(resultOf(frame)).toBeDefined();
    }
    expect(first.ended).toBe(true);
    await stopped;
    expect(ingress2.process.log).toMatch(/drain step ingress-streams: done/);

    const last = seen[seen.length - 1]!;
    const resumed = await openSse(
      jsonRpcUrl(ingress1.baseUrl, 'demo', 'countdown'),
      request('SubscribeToTask', { id: taskId }),
      { ...resumable, headers: { 'Last-Event-ID': String(last) } },
      30_000,
    );
    let final = '';
    for await (const frame of resumed) {
      seen.push(generationOf(frame));
      const response = resultOf(frame);
      if ('statusUpdate' in response) {
        final = response.statusUpdate.status.state;
      }
    }
    expect(final).toBe('TASK_STATE_COMPLETED');
    // The snapshot's generation, then every later generation a stream shows, once, in order.
    const logged = await streamedGenerations(db!.pool, 'demo', taskId);
    expect(seen).toStrictEqual([seen[0], ...logged.filter((g) => g > seen[0]!)]);
  });
});

/**
 * The connected workers of the admin API across task-service replicas (issue 14, docs/admin.md "Workers"): two
 * replicas as separate processes, each writing its sessions to `ops.worker_sessions`, and the admin API as a
 * process of its own reading them. A replica that dies leaves rows that turn stale and are then removed by the
 * other; its worker's lease expires and the task is re-dispatched, which the task's timeline shows. The admin
 * API process without a console build answers 404 at /console/ and keeps working.
 */
import { seedTenant } from '@lib/tenancy';
import {
  createTestDatabase,
  freePort,
  PlatformProcess,
  startAgentWorker,
  startIngress,
  startTaskService,
  type TestDatabase,
} from '@lib/testing';
import { AGENT_PROFILES } from '@lib/worker-sdk';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, rawRpc, rawUserMessage, request, sentTask } from './support/json-rpc';

const TOKEN = `bootstrap-${randomUUID()}`;
const API_KEY = `reg-${randomUUID()}`;
const workerSecret = (agent: string): string => `registry-worker:${agent}`;
const RETAIN_STALE_MS = 10_000;

let db: TestDatabase;
const processes: PlatformProcess[] = [];
let replicaA: Awaited<ReturnType<typeof startTaskService>>;
let replicaB: Awaited<ReturnType<typeof startTaskService>>;
let adminUrl: string;
let ingressUrl: string;

interface Worker {
  sessionId: string;
  agentId: string;
  replicaId: string;
  stale: boolean;
  inFlight: number;
  leases: { taskId: string; leaseEpoch: number; expiresAt: string }[];
}

async function workers(): Promise<Worker[]> {
  const response = await fetch(`${adminUrl}/admin/v1/tenants/reg/workers`, {
    headers: { Authorization: `Bearer ${TOKEN}` },
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { workers: Worker[] }).workers;
}

beforeAll(async () => {
  db = await createTestDatabase('e2e_worker_registry');
  await seedTenant(db.pool, {
    tenantId: 'reg',
    displayName: 'Registry tenant',
    apiKeys: [{ keyId: 'reg-default', principalId: 'reg-user', secret: API_KEY }],
    agents: (['echo', 'countdown'] as const).map((agentId) => ({
      agentId,
      profile: AGENT_PROFILES[agentId],
      onLeaseLost: 'redispatch',
      maxAttempts: 3,
      workerSecret: workerSecret(agentId),
    })),
  });
  const shared = {
    POSTGRES_URL: db.url,
    WORKER_SESSIONS_REFRESH_MS: '300',
    // Stale rows stay listed this long: time enough for the listing to see them stale before they go.
    WORKER_SESSIONS_RETAIN_STALE_MS: String(RETAIN_STALE_MS),
    LEASE_TTL_MS: '3000',
    HEARTBEAT_INTERVAL_MS: '500',
  };
  replicaA = await startTaskService({ ...shared, REPLICA_ID: 'replica-a' });
  processes.push(replicaA.process);
  replicaB = await startTaskService({ ...shared, REPLICA_ID: 'replica-b' });
  processes.push(replicaB.process);
  const ingress = await startIngress({ POSTGRES_URL: db.url }, [replicaB.commandTarget]);
  processes.push(ingress.process);
  ingressUrl = ingress.baseUrl;
  const port = await freePort();
  const adminApi = new PlatformProcess('admin-api', 'apps/admin-api/src/main.js', [], {
    POSTGRES_URL: db.url,
    ADMIN_API_PORT: String(port),
    ADMIN_BOOTSTRAP_TOKEN: TOKEN,
    ADMIN_CONSOLE_DIR: join(tmpdir(), `no-console-${randomUUID()}`),
    OPS_PORT: String(await freePort()),
  }).start();
  processes.push(adminApi);
  await adminApi.waitForOutput(/admin API ready/);
  adminUrl = `http://127.0.0.1:${port}`;
  processes.push(await startAgentWorker('echo', replicaB.workerTarget, workerSecret('echo')));
  processes.push(
    await startAgentWorker('countdown', replicaA.workerTarget, workerSecret('countdown')),
  );
});

afterAll(async () => {
  for (const process of [...processes].reverse()) {
    await process.stop();
  }
  await db?.drop();
});

describe('the connected workers of two task-service replicas', () => {
  let taskId: string;

  it('are listed with the replica each is connected to, fresh', async () => {
    const listed = await eventually(workers, (found) => found.length === 2);
    expect(listed.map((w) => [w.agentId, w.replicaId, w.stale])).toEqual([
      ['countdown', 'replica-a', false],
      ['echo', 'replica-b', false],
    ]);
  });

  it('show the lease a worker of one replica holds on a task accepted by the other', async () => {
    const reply = await rawRpc(
      `${ingressUrl}/agents/reg/countdown/jsonrpc`,
      request('SendMessage', {
        message: rawUserMessage('10', { metadata: { stepMs: 1_000 } }),
        configuration: { returnImmediately: true },
      }),
      { apiKey: API_KEY },
    );
    taskId = sentTask(reply).id;
    const seen = await eventually(workers, (found) =>
      // The lease is read from the work queue, the count from the replica's latest refresh.
      found.some((w) => w.agentId === 'countdown' && w.leases.length === 1 && w.inFlight === 1),
    );
    const countdown = seen.find((w) => w.agentId === 'countdown');
    expect(countdown).toMatchObject({
      replicaId: 'replica-a',
      inFlight: 1,
      leases: [{ taskId, leaseEpoch: 1 }],
    });
  });

  it('of a replica that dies turn stale, then are removed by the other replica', async () => {
    await replicaA.process.kill();
    // Listed as stale first (not removed at once)…
    const stale = await eventually(workers, (found) =>
      found.some((w) => w.replicaId === 'replica-a' && w.stale),
    );
    expect(stale.find((w) => w.replicaId === 'replica-b')?.stale).toBe(false);
    // …then removed, after the retention, by the other replica's refresh.
    const rows = await eventually(
      workers,
      (found) => found.every((w) => w.replicaId !== 'replica-a'),
      RETAIN_STALE_MS + 30_000,
    );
    expect(rows.map((w) => [w.agentId, w.replicaId, w.stale])).toEqual([
      ['echo', 'replica-b', false],
    ]);
  });

  it('lose their lease with their replica: the task is re-dispatched, and its timeline shows it', async () => {
    processes.push(
      await startAgentWorker('countdown', replicaB.workerTarget, workerSecret('countdown')),
    );
    const timeline = await eventually(
      async () => {
        const response = await fetch(`${adminUrl}/admin/v1/tenants/reg/tasks/${taskId}/events`, {
          headers: { Authorization: `Bearer ${TOKEN}` },
        });
        return ((await response.json()) as { events: Record<string, unknown>[] }).events;
      },
      (events) => events.filter((e) => e['type'] === 'TaskLeaseGranted').length === 2,
      15_000,
    );
    const leases = timeline.filter((e) => String(e['type']).startsWith('TaskLease'));
    expect(leases.map((e) => [e['type'], e['binding'], e['summary']])).toEqual([
      ['TaskLeaseGranted', 'dispatcher', expect.objectContaining({ leaseEpoch: 1, attempt: 1 })],
      ['TaskLeaseExpired', 'lease-sweeper', expect.objectContaining({ leaseEpoch: 1 })],
      ['TaskLeaseGranted', 'dispatcher', expect.objectContaining({ leaseEpoch: 2, attempt: 2 })],
    ]);
    expect(leases.map((e) => (e['actor'] as { id: string }).id)).toEqual([
      'replica-a',
      'replica-b',
      'replica-b',
    ]);
  });

  it('of a replica that stops are removed at once', async () => {
    await eventually(workers, (found) => found.length === 2);
    await replicaB.process.stop();
    const result = await db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ops.worker_sessions WHERE replica_id = 'replica-b'`,
    );
    expect(result.rows[0]?.n).toBe(0);
  });
});

describe('the admin API process without a console build', () => {
  it('answers 404 at /console/ saying why, with the console headers, and keeps serving the API', async () => {
    const page = await fetch(`${adminUrl}/console/`);
    expect(page.status).toBe(404);
    expect(await page.text()).toMatch(/web console is not built/);
    expect(page.headers.get('content-security-policy')).toMatch(/^default-src 'none'/);
    const whoami = await fetch(`${adminUrl}/admin/v1/whoami`, {
      headers: { Authorization: `Bearer ${TOKEN}` },
    });
    expect(whoami.status).toBe(200);
  });
});

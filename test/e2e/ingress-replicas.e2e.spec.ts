/**
 * What one operator change means for every ingress replica (issue 12): two ingress processes in front of
 * one task-service share each tenant's quotas (request rate counted in Redis, active tasks from the task
 * counts), and a revoked key or a changed agent definition counts on the other replica.
 */
import {
  AgentStore,
  CredentialStore,
  seedTenant,
  tenantIdOf,
  TenantStore,
  type TenantId,
} from '@lib/tenancy';
import {
  createTestDatabase,
  startAgentWorker,
  startIngress,
  startTaskService,
  type PlatformProcess,
  type TestDatabase,
} from '@lib/testing';
import { AGENT_PROFILES } from '@lib/worker-sdk';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  eventually,
  jsonRpcUrl,
  rawRpc,
  rawUserMessage,
  request,
  rpcReasonOf,
  sentTask,
} from './support/json-rpc';

/** A tenant of its own per run: request counts live in the shared Redis. */
const TENANT = `quota-${randomUUID().slice(0, 8)}`;
const KEY = `key-${randomUUID()}`;
const secret = (agent: string) => `worker-${TENANT}:${agent}`;

let db: TestDatabase;
const processes: PlatformProcess[] = [];
let replicas: string[];
let tenant: TenantId;

const call = (replica: string, method: string, params: unknown, key = KEY, agent = 'echo') =>
  rawRpc(jsonRpcUrl(replica, TENANT, agent), request(method, params), { apiKey: key });

beforeAll(async () => {
  db = await createTestDatabase('e2e_ingress_replicas');
  tenant = tenantIdOf(TENANT);
  await seedTenant(db.pool, {
    tenantId: TENANT,
    displayName: 'Quota tenant',
    apiKeys: [{ keyId: `${TENANT}-key`, principalId: 'quinn', secret: KEY }],
    agents: (['echo', 'interview'] as const).map((agentId) => ({
      agentId,
      profile: AGENT_PROFILES[agentId],
      workerSecret: secret(agentId),
    })),
  });
  const service = await startTaskService({ POSTGRES_URL: db.url });
  processes.push(service.process);
  replicas = [];
  for (let i = 0; i < 2; i++) {
    const ingress = await startIngress({ POSTGRES_URL: db.url }, [service.commandTarget]);
    processes.push(ingress.process);
    replicas.push(ingress.baseUrl);
  }
  for (const agent of ['echo', 'interview']) {
    processes.push(await startAgentWorker(agent, service.workerTarget, secret(agent)));
  }
});

afterAll(async () => {
  for (const process of [...processes].reverse()) {
    await process.stop();
  }
  await db?.drop();
});

/**
 * Waits until both replicas act on the agent's row as it is now. After a change of the tenant's quotas, the
 * agent's card is changed too (a commit after the quotas'), and each replica is polled until it serves the
 * new card: it then read the row again, quotas included (the ingress reads both at once: AgentRegistry).
 * The deadline (`eventually`'s) only fails a replica that never hears of the change.
 */
async function untilBothReplicasReload(agent: 'echo' | 'interview'): Promise<void> {
  const marker = `reloaded ${randomUUID()}`;
  await new AgentStore(db.pool).put(tenant, agent, {
    card: { ...AGENT_PROFILES[agent], description: marker },
  });
  for (const replica of replicas) {
    await eventually(
      async () => {
        const card = await fetch(
          `${replica}/agents/${TENANT}/${agent}/.well-known/agent-card.json`,
        );
        return ((await card.json()) as { description: string }).description;
      },
      (description) => description === marker,
    );
  }
}

/** Waits for the start of a second, so that a short burst falls in one counting window (of the two the
 * sliding window weighs, the previous one being empty). */
async function startOfSecond(): Promise<void> {
  const rest = 1_000 - (Date.now() % 1_000);
  await new Promise((resolve) => setTimeout(resolve, rest + 5));
}

describe('quotas across two ingress replicas', () => {
  it('counts the request rate of a tenant once for both replicas', async () => {
    await new TenantStore(db.pool).update(tenant, { quotas: { requestsPerSecond: 20 } });
    const [a = '', b = ''] = replicas;
    await untilBothReplicasReload('echo');
    // A burst in one counting window; on a machine too busy to send it within that second, again.
    let replies: Awaited<ReturnType<typeof call>>[] = [];
    for (let attempt = 0; attempt < 5; attempt++) {
      await startOfSecond();
      const started = Date.now();
      replies = await Promise.all(
        Array.from({ length: 60 }, (_, i) => call(i % 2 === 0 ? a : b, 'ListTasks', {})),
      );
      // The whole burst within one second of the clock the ingress counts by (a late timer can start it
      // well after the boundary, and then it crosses into the next window).
      if (Math.floor(started / 1_000) === Math.floor(Date.now() / 1_000)) {
        break;
      }
      replies = [];
      // The burst that crossed a boundary still fills the sliding window: let it leave.
      await new Promise((resolve) => setTimeout(resolve, 2_000));
    }
    expect(replies, 'no burst fit in one second').toHaveLength(60);
    const accepted = replies.filter((r) => r.status === 200);
    const refused = replies.filter((r) => r.status === 429);
    expect(accepted).toHaveLength(20);
    expect(refused).toHaveLength(40);
    expect(rpcReasonOf(refused[0]!)).toBe('QUOTA_EXCEEDED');
    expect(refused[0]!.headers.get('retry-after')).toBe('1');
    // Both replicas refused some: each alone would have let 20 through.
    const refusedBy = new Set(
      replies.map((r, i) => (r.status === 429 ? i % 2 : -1)).filter((side) => side >= 0),
    );
    expect(refusedBy).toEqual(new Set([0, 1]));
    await new TenantStore(db.pool).update(tenant, { quotas: { requestsPerSecond: null } });
  });

  it('refuses a new task over the active-task quota, on either replica; a running task goes on', async () => {
    const [a = '', b = ''] = replicas;
    await new TenantStore(db.pool).update(tenant, { quotas: { maxActiveTasks: 2 } });
    await untilBothReplicasReload('interview');
    const first = sentTask(
      await call(a, 'SendMessage', { message: rawUserMessage('hi') }, KEY, 'interview'),
    );
    sentTask(await call(b, 'SendMessage', { message: rawUserMessage('hi') }, KEY, 'interview'));
    for (const replica of [a, b]) {
      const over = await call(
        replica,
        'SendMessage',
        { message: rawUserMessage('hi') },
        KEY,
        'interview',
      );
      expect(over.status).toBe(429);
      expect(rpcReasonOf(over)).toBe('QUOTA_EXCEEDED');
    }
    const going = await call(
      b,
      'SendMessage',
      { message: rawUserMessage('Ada', { taskId: first.id, contextId: first.contextId }) },
      KEY,
      'interview',
    );
    expect(going.status).toBe(200);
    await new TenantStore(db.pool).update(tenant, { quotas: { maxActiveTasks: null } });
  });
});

describe('operator changes reach the other replica', () => {
  it('a revoked key', async () => {
    const [a = '', b = ''] = replicas;
    const issued = await new CredentialStore(db.pool).issueApiKey(tenant, { principalId: 'rita' });
    for (const replica of [a, b]) {
      expect((await call(replica, 'ListTasks', {}, issued.secret)).status).toBe(200);
    }
    await new CredentialStore(db.pool).revokeApiKey(tenant, issued.credential.keyId);
    for (const replica of [a, b]) {
      const refused = await eventually(
        () => call(replica, 'ListTasks', {}, issued.secret),
        (reply) => reply.status === 401,
      );
      expect(rpcReasonOf(refused)).toBe('UNAUTHENTICATED');
    }
  });

  it('a changed agent definition, with a new card ETag', async () => {
    const [, b = ''] = replicas;
    const url = `${b}/agents/${TENANT}/echo/.well-known/agent-card.json`;
    const before = await fetch(url);
    const etag = before.headers.get('etag');
    await new AgentStore(db.pool).put(tenant, 'echo', {
      card: { ...AGENT_PROFILES.echo, description: 'Changed by the operator' },
    });
    const after = await eventually(
      async () => {
        const response = await fetch(url);
        return {
          etag: response.headers.get('etag'),
          description: ((await response.json()) as { description: string }).description,
        };
      },
      (seen) => seen.description === 'Changed by the operator',
    );
    expect(after.etag).not.toBe(etag);
  });
});

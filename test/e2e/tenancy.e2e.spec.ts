/**
 * Tenant, agent and principal isolation end to end (spec digest §10.7, §10.9, §10.13: "every operation MUST be
 * authorization-checked; unauthorized resources SHOULD look like not found"). A second tenant `acme` hosts its
 * own `echo` agent served by its own worker process; the demo tenant gets a second API key of another
 * principal.
 */
import { GetTaskRequest, ListTasksRequest } from '@a2a-js/sdk';
import type { ListTasksResponse, Task as WireTask } from '@lib/a2a-protocol';
import { seedTenant } from '@lib/tenancy';
import { startAgentWorker, type PlatformProcess } from '@lib/testing';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  expectRpcError,
  listResult,
  rawRpc,
  rawUserMessage,
  request,
  sentTask,
  taskResult,
  withoutTaskId,
  type RawOptions,
} from './support/json-rpc';
import { bootStandalone, seedAcme, taskEvents, type Standalone } from './support/platform';
import { asTask, sdkClientFromCard, sendRequest, stateName, textOf } from './support/sdk-client';
import { PLATFORM_DOMAIN } from './support/wire';

const DEMO_KEY = 'demo-key';
const ACME_KEY = `acme-key-${randomUUID()}`;
const ACME_WORKER_SECRET = `acme-worker-secret-${randomUUID()}:echo`;
/** A second API key of the demo tenant, held by another principal. */
const DEMO_OTHER_KEY = `demo-other-${randomUUID()}`;

let platform: Standalone;
let acmeWorker: PlatformProcess | undefined;

const demoEcho = (): string => platform.endpoint('demo', 'echo');
const demoInterview = (): string => platform.endpoint('demo', 'interview');
const acmeEcho = (): string => platform.endpoint('acme', 'echo');

/** Tasks of the demo tenant's first principal (`demo-user`). */
let demoDone: WireTask;
let demoWaiting: WireTask;
/** Number of events of each demo task once settled. */
const demoEventCounts = new Map<string, number>();

beforeAll(async () => {
  platform = await bootStandalone('e2e_tenancy');
  await seedAcme(platform.db.pool, ACME_KEY, ACME_WORKER_SECRET);
  await seedTenant(platform.db.pool, {
    tenantId: 'demo',
    displayName: 'Demo tenant',
    apiKeys: [{ keyId: 'demo-other', principalId: 'demo-other-user', secret: DEMO_OTHER_KEY }],
    agents: [],
  });
  acmeWorker = await startAgentWorker('echo', platform.workerTarget, ACME_WORKER_SECRET);
  demoDone = sentTask(
    await rawRpc(demoEcho(), request('SendMessage', { message: rawUserMessage('demo secret') })),
  );
  demoWaiting = sentTask(
    await rawRpc(demoInterview(), request('SendMessage', { message: rawUserMessage('hello') })),
  );
  expect(demoDone.status.state).toBe('TASK_STATE_COMPLETED');
  expect(demoWaiting.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
  for (const task of [demoDone, demoWaiting]) {
    demoEventCounts.set(task.id, (await taskEvents(platform.db.pool, 'demo', task.id)).length);
  }
});

afterAll(async () => {
  await acmeWorker?.stop();
  await platform?.close();
});

/**
 * Sends the same request once with a task id the caller must not see and once with an id that never
 * existed, and asserts both replies are -32001 and identical apart from the id itself.
 */
async function expectLooksUnknown(
  endpoint: string,
  options: RawOptions,
  build: (taskId: string) => object,
  hiddenTaskId: string,
): Promise<void> {
  const randomId = randomUUID();
  const hidden = await rawRpc(endpoint, build(hiddenTaskId), options);
  const unknown = await rawRpc(endpoint, build(randomId), options);
  expectRpcError(unknown, {
    code: -32001,
    reason: 'TASK_NOT_FOUND',
    domain: 'a2a-protocol.org',
    id: 'probe',
    metadata: { taskId: randomId },
  });
  expect(withoutTaskId(hidden, hiddenTaskId)).toStrictEqual(withoutTaskId(unknown, randomId));
}

const probes: [string, (taskId: string) => object][] = [
  ['GetTask', (id) => request('GetTask', { id }, 'probe')],
  ['GetTask with historyLength', (id) => request('GetTask', { id, historyLength: 10 }, 'probe')],
  ['CancelTask', (id) => request('CancelTask', { id }, 'probe')],
  [
    'SendMessage continuing it',
    (id) =>
      request(
        'SendMessage',
        { message: rawUserMessage('Mallory', { messageId: 'probe-message', taskId: id }) },
        'probe',
      ),
  ],
];

/** The demo tasks are untouched: same state, same number of events. */
async function expectDemoTasksUntouched(): Promise<void> {
  const done = taskResult(await rawRpc(demoEcho(), request('GetTask', { id: demoDone.id })));
  expect(done).toStrictEqual(demoDone);
  const waiting = taskResult(
    await rawRpc(demoInterview(), request('GetTask', { id: demoWaiting.id })),
  );
  expect(waiting).toStrictEqual(demoWaiting);
  for (const [taskId, count] of demoEventCounts) {
    expect(await taskEvents(platform.db.pool, 'demo', taskId)).toHaveLength(count);
  }
}

describe('tenant isolation (§10.9, §10.13)', () => {
  it("acme's own echo agent works end to end through the official SDK from acme's card", async () => {
    const acme = await sdkClientFromCard(
      platform.baseUrl,
      '/agents/acme/echo/.well-known/agent-card.json',
      ACME_KEY,
    );
    expect(acme.card.supportedInterfaces[0]?.url).toBe(acmeEcho());
    const task = asTask(await acme.client.sendMessage(sendRequest(rawUserMessage('hello acme'))));
    expect(stateName(task)).toBe('TASK_STATE_COMPLETED');
    expect(textOf(task.artifacts[0]?.parts)).toBe('hello acme');
    const again = await acme.client.getTask(GetTaskRequest.fromJSON({ id: task.id }));
    expect(again.id).toBe(task.id);
    // Executed by acme's own worker process, whose credential binds it to (acme, echo).
    const connected = (acmeWorker?.log ?? '')
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .find((line) => line['msg'] === 'connected' && line['tenantId'] === 'acme');
    expect(connected?.['agentId'], acmeWorker?.log).toBe('echo');
    const events = await taskEvents(platform.db.pool, 'acme', task.id);
    const lease = events.find((e) => e.event_type === 'TaskLeaseGranted');
    expect(lease?.data['workerId']).toBe(connected?.['workerId']);
    expect(await taskEvents(platform.db.pool, 'demo', task.id)).toHaveLength(0);
  });

  it("§10.13: demo's API key on acme's endpoint is 401, exactly like a wrong key", async () => {
    const withDemoKey = await rawRpc(acmeEcho(), request('ListTasks', {}, 'k1'), {
      apiKey: DEMO_KEY,
    });
    const withWrongKey = await rawRpc(acmeEcho(), request('ListTasks', {}, 'k1'), {
      apiKey: 'wrong',
    });
    for (const reply of [withDemoKey, withWrongKey]) {
      expectRpcError(reply, {
        http: 401,
        code: -32000,
        reason: 'UNAUTHENTICATED',
        domain: PLATFORM_DOMAIN,
        id: 'k1',
      });
      expect(reply.headers.get('www-authenticate')).toMatch(/X-API-Key/);
    }
    expect(withDemoKey.text).toBe(withWrongKey.text);
  });

  it("§10.13: acme's API key on demo's endpoint is 401, exactly like a wrong key", async () => {
    const withAcmeKey = await rawRpc(demoEcho(), request('GetTask', { id: demoDone.id }, 'k2'), {
      apiKey: ACME_KEY,
    });
    const withWrongKey = await rawRpc(demoEcho(), request('GetTask', { id: demoDone.id }, 'k2'), {
      apiKey: 'wrong',
    });
    for (const reply of [withAcmeKey, withWrongKey]) {
      expectRpcError(reply, {
        http: 401,
        code: -32000,
        reason: 'UNAUTHENTICATED',
        domain: PLATFORM_DOMAIN,
        id: 'k2',
      });
    }
    expect(withAcmeKey.text).toBe(withWrongKey.text);
    expect(withAcmeKey.text).not.toContain('demo secret');
  });

  it.each(probes)(
    "§10.13: acme asking for demo's task on acme's endpoint (%s) gets -32001, exactly like a random id",
    async (_name, build) => {
      for (const hidden of [demoDone.id, demoWaiting.id]) {
        await expectLooksUnknown(acmeEcho(), { apiKey: ACME_KEY }, build, hidden);
      }
      await expectDemoTasksUntouched();
    },
  );

  it('§10.7: ListTasks on acme never lists demo tasks, and demo never lists acme tasks', async () => {
    const acmeTask = sentTask(
      await rawRpc(acmeEcho(), request('SendMessage', { message: rawUserMessage('acme only') }), {
        apiKey: ACME_KEY,
      }),
    );
    const all = async (endpoint: string, apiKey: string): Promise<ListTasksResponse> =>
      listResult(await rawRpc(endpoint, request('ListTasks', { pageSize: 100 }), { apiKey }));
    const acme = await all(acmeEcho(), ACME_KEY);
    const acmeRows = await platform.db.pool.query<{ task_id: string }>(
      "SELECT task_id FROM read.task_view WHERE tenant_id = 'acme' AND agent_id = 'echo'",
    );
    expect(acme.tasks.map((t) => t.id).sort()).toStrictEqual(
      acmeRows.rows.map((r) => r.task_id).sort(),
    );
    expect(acme.totalSize).toBe(acmeRows.rows.length);
    expect(acme.tasks.map((t) => t.id)).toContain(acmeTask.id);
    expect(acme.tasks.map((t) => t.id)).not.toContain(demoDone.id);
    expect(JSON.stringify(acme)).not.toContain('demo secret');
    // Filters cannot reach across either: demo's context id on acme's endpoint finds nothing.
    const byContext = listResult(
      await rawRpc(acmeEcho(), request('ListTasks', { contextId: demoDone.contextId }), {
        apiKey: ACME_KEY,
      }),
    );
    expect(byContext).toMatchObject({ tasks: [], totalSize: 0, nextPageToken: '' });

    const demo = await all(demoEcho(), DEMO_KEY);
    expect(demo.tasks.map((t) => t.id)).toContain(demoDone.id);
    expect(demo.tasks.map((t) => t.id)).not.toContain(acmeTask.id);
  });

  it('§6 idempotency is per tenant: the same messageId in demo and acme makes two separate tasks', async () => {
    const messageId = `both-${randomUUID()}`;
    const inDemo = sentTask(
      await rawRpc(
        demoEcho(),
        request('SendMessage', { message: rawUserMessage('from demo', { messageId }) }),
      ),
    );
    const inAcme = sentTask(
      await rawRpc(
        acmeEcho(),
        request('SendMessage', { message: rawUserMessage('from acme', { messageId }) }),
        {
          apiKey: ACME_KEY,
        },
      ),
    );
    expect(inAcme.id).not.toBe(inDemo.id);
    expect(inAcme.artifacts?.[0]?.parts[0]?.text).toBe('from acme');
    expect(inDemo.artifacts?.[0]?.parts[0]?.text).toBe('from demo');
  });
});

describe('agent and principal isolation inside one tenant (§10.9, §10.13)', () => {
  it.each(probes)(
    "another principal of the demo tenant asking for demo-user's task (%s) gets -32001, exactly like a random id",
    async (_name, build) => {
      await expectLooksUnknown(demoEcho(), { apiKey: DEMO_OTHER_KEY }, build, demoDone.id);
      await expectLooksUnknown(demoInterview(), { apiKey: DEMO_OTHER_KEY }, build, demoWaiting.id);
      await expectDemoTasksUntouched();
    },
  );

  it("another principal's ListTasks never lists demo-user's tasks; its own tasks are its own", async () => {
    const other = await sdkClientFromCard(
      platform.baseUrl,
      '/agents/demo/echo/.well-known/agent-card.json',
      DEMO_OTHER_KEY,
    );
    const before = await other.client.listTasks(ListTasksRequest.fromJSON({}));
    expect(before.totalSize).toBe(0);
    expect(before.tasks).toHaveLength(0);
    // The same messageId demo-user used: a task of its own, not demo-user's.
    const demoMessageId = (demoDone.history ?? [])[0]?.messageId;
    expect(demoMessageId).toBeDefined();
    const own = asTask(
      await other.client.sendMessage(
        sendRequest(
          rawUserMessage('mine', { messageId: demoMessageId, contextId: demoDone.contextId }),
        ),
      ),
    );
    expect(own.id).not.toBe(demoDone.id);
    expect(textOf(own.artifacts[0]?.parts)).toBe('mine');
    const after = await other.client.listTasks(
      ListTasksRequest.fromJSON({ contextId: demoDone.contextId }),
    );
    expect(after.tasks.map((t) => t.id)).toStrictEqual([own.id]);
    expect(after.totalSize).toBe(1);
    const firstPrincipal = listResult(
      await rawRpc(demoEcho(), request('ListTasks', { contextId: demoDone.contextId })),
    );
    expect(firstPrincipal.tasks.map((t) => t.id)).toStrictEqual([demoDone.id]);
  });

  it("a task is scoped to its agent: demo's echo task is -32001 on demo's interview endpoint", async () => {
    await expectLooksUnknown(
      demoInterview(),
      { apiKey: DEMO_KEY },
      (id) => request('GetTask', { id }, 'probe'),
      demoDone.id,
    );
    await expectLooksUnknown(
      demoEcho(),
      { apiKey: DEMO_KEY },
      (id) => request('CancelTask', { id }, 'probe'),
      demoWaiting.id,
    );
    await expectDemoTasksUntouched();
  });
});

/**
 * Agents in Python (issue 33): the example agents of the Python worker SDK (`sdks/python/examples`) run as
 * worker processes of a standalone platform, each agent defined and its worker credential issued through
 * the admin API, and the official JS client drives them over JSON-RPC, HTTP+JSON and gRPC. Then the
 * worker's failure paths: a SIGKILL mid-task, a stale lease epoch after a worker stood still (SIGSTOP), a
 * SIGTERM drain.
 */
import {
  CancelTaskRequest,
  GetTaskRequest,
  Role,
  TaskState,
  type StreamResponse,
} from '@a2a-js/sdk';
import {
  RawWorker,
  startPythonWorker,
  workerErrorReason,
  type PythonExample,
  type PythonWorkerProcess,
} from '@lib/testing';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminClient } from './support/admin-client';
import { eventually, rawUserMessage } from './support/json-rpc';
import {
  bootStandalone,
  taskEvents,
  type Standalone,
  type StoredEventRow,
} from './support/platform';
import {
  asTask,
  SDK_TRANSPORTS,
  sdkClientOver,
  sendRequest,
  stateName,
  textOf,
  type SdkAgent,
  type SdkTransport,
} from './support/sdk-client';

const TOKEN = `python-admin-${randomUUID()}`;
const TENANT = 'demo';
const API_KEY = 'demo-key';
/** The failure cases' agent: a short lease, so that a dead or frozen worker's task is leased again soon. */
const FRAGILE = 'py-fragile';
const FRAGILE_LEASE_TTL_MS = 2_000;
/** How long a client reads a stream before it gives up (a generous bound, not a speed). */
const STREAM_TIMEOUT_MS = 30_000;

interface CardFields {
  name: string;
  /** The agent may answer with a bare Message instead of a task. */
  messageReplies?: boolean;
}

/** The agents this file defines, each served by one Python example. */
const AGENTS = {
  'py-echo': { example: 'echo', card: { name: 'Python echo' } },
  'py-countdown': { example: 'countdown', card: { name: 'Python countdown' } },
  'py-interview': { example: 'interview', card: { name: 'Python interview' } },
  'py-shout': { example: 'shout', card: { name: 'Python shout', messageReplies: true } },
} as const satisfies Record<string, { example: PythonExample; card: CardFields }>;
type Agent = keyof typeof AGENTS | typeof FRAGILE;

let platform: Standalone;
const admin = adminClient(() => platform.baseUrl, TOKEN);
const workers: PythonWorkerProcess[] = [];
const clients = new Map<string, SdkAgent>();
let fragileSecret = '';

const cardPath = (agent: Agent): string => `/agents/${TENANT}/${agent}/.well-known/agent-card.json`;

/** Defines `agent` through the admin API and issues a worker credential for it; returns its secret. */
async function defineAgent(
  agent: Agent,
  card: CardFields,
  policy: Record<string, unknown> = {},
): Promise<string> {
  const put = await admin('PUT', `/admin/v1/tenants/${TENANT}/agents/${agent}`, {
    card: {
      description: `${card.name}, an example of the Python worker SDK.`,
      version: '1.0.0',
      ...card,
    },
    policy,
  });
  expect(put.status, JSON.stringify(put.body)).toBe(201);
  const issued = await admin(
    'POST',
    `/admin/v1/tenants/${TENANT}/agents/${agent}/worker-credentials`,
    { label: 'python e2e' },
  );
  expect(issued.status, JSON.stringify(issued.body)).toBe(201);
  return issued.body['secret'] as string;
}

async function startWorker(
  example: PythonExample,
  secret: string,
  env: Record<string, string> = {},
): Promise<PythonWorkerProcess> {
  const worker = await startPythonWorker(example, platform.workerTarget, secret, env);
  workers.push(worker);
  return worker;
}

/** The official client of `agent` over `transport`, built from the agent's card once it is served. */
async function clientOf(transport: SdkTransport, agent: Agent): Promise<SdkAgent> {
  const key = `${transport} ${agent}`;
  const known = clients.get(key);
  if (known) {
    return known;
  }
  await eventually(
    async () => (await fetch(`${platform.baseUrl}${cardPath(agent)}`)).status,
    (status) => status === 200,
  );
  const client = await sdkClientOver(transport, platform.baseUrl, cardPath(agent), API_KEY);
  clients.set(key, client);
  return client;
}

const events = (taskId: string): Promise<StoredEventRow[]> =>
  taskEvents(platform.db.pool, TENANT, taskId);

interface Grant {
  leaseEpoch: number;
  workerId: string;
  attempt: number;
}

async function grantsOf(taskId: string): Promise<Grant[]> {
  return (await events(taskId))
    .filter((e) => e.event_type === 'TaskLeaseGranted')
    .map((e) => e.data as unknown as Grant);
}

/** The Python worker a lease was granted to: the one that logged that worker id when it was welcomed. */
function workerHolding(grant: Grant): PythonWorkerProcess {
  const holder = workers.find((w) => w.log.includes(`worker ${grant.workerId}`));
  if (!holder) {
    throw new Error(`no Python worker logged the worker id ${grant.workerId}`);
  }
  return holder;
}

/** A countdown request: `n` steps of `stepMs` each. */
const countdownRequest = (n: number, stepMs: number, returnImmediately = false) =>
  sendRequest(rawUserMessage(String(n), { metadata: { stepMs } }), { returnImmediately });

/** One stream event in a line: `status <STATE> <text>`, `chunk <text> <append>/<lastChunk>`, … */
function describeEvent(event: StreamResponse): string {
  const payload = event.payload;
  switch (payload?.$case) {
    case 'task':
      return `task ${stateName(payload.value)}`;
    case 'statusUpdate': {
      const status = payload.value.status;
      const state = TaskState[status?.state ?? TaskState.TASK_STATE_UNSPECIFIED];
      return `status ${state} ${textOf(status?.message?.parts)}`.trim();
    }
    case 'artifactUpdate':
      return `chunk ${textOf(payload.value.artifact?.parts)} ${payload.value.append}/${payload.value.lastChunk}`;
    case 'message':
      return `message ${textOf(payload.value.parts)}`;
    case undefined:
      return 'nothing';
  }
}

beforeAll(async () => {
  platform = await bootStandalone('e2e_python_worker', {
    ADMIN_BOOTSTRAP_TOKEN: TOKEN,
    // Heartbeats well within the fragile agent's 2 s leases.
    HEARTBEAT_INTERVAL_MS: '500',
  });
  fragileSecret = await defineAgent(
    FRAGILE,
    { name: 'Python fragile countdown' },
    { leaseTtlMs: FRAGILE_LEASE_TTL_MS },
  );
  await Promise.all([
    ...Object.entries(AGENTS).map(async ([agent, { example, card }]) =>
      startWorker(example, await defineAgent(agent as Agent, card)),
    ),
    // Two workers with room for one task each (see 'a Python worker that fails').
    startWorker('countdown', fragileSecret, { WORKER_CONCURRENCY: '1' }),
    startWorker('countdown', fragileSecret, { WORKER_CONCURRENCY: '1' }),
  ]);
}, 180_000);

afterAll(async () => {
  await Promise.all(workers.map((worker) => worker.stop()));
  await platform?.close();
});

describe.each(SDK_TRANSPORTS)('the Python example agents, called over %s', (transport) => {
  it('echo answers with the text as the artifact echo; the log holds the lease and the worker’s three events', async () => {
    const sdk = await clientOf(transport, 'py-echo');
    const text = `hello from ${transport}`;
    const task = asTask(await sdk.client.sendMessage(sendRequest(rawUserMessage(text))));
    expect(stateName(task)).toBe('TASK_STATE_COMPLETED');
    expect(task.artifacts.map((a) => [a.artifactId, a.name, textOf(a.parts)])).toStrictEqual([
      ['echo', 'echo', text],
    ]);
    const log = await events(task.id);
    expect(log.map((e) => e.event_type)).toStrictEqual([
      'TaskSubmitted',
      'TaskLeaseGranted',
      'TaskStatusUpdated',
      'ArtifactChunkAppended',
      'TaskStatusUpdated',
    ]);
    expect(log.slice(2).map((e) => e.metadata.actor.kind)).toStrictEqual([
      'agent-worker',
      'agent-worker',
      'agent-worker',
    ]);
  });

  it('countdown streams its steps and chunks in order, ending COMPLETED', async () => {
    const sdk = await clientOf(transport, 'py-countdown');
    const seen: string[] = [];
    for await (const event of sdk.client.sendMessageStream(countdownRequest(3, 50), {
      signal: AbortSignal.timeout(STREAM_TIMEOUT_MS),
    })) {
      seen.push(describeEvent(event));
    }
    expect(seen).toStrictEqual([
      'task TASK_STATE_SUBMITTED',
      'status TASK_STATE_WORKING step 1/3',
      'chunk 3 false/false',
      'status TASK_STATE_WORKING step 2/3',
      'chunk 2 true/false',
      'status TASK_STATE_WORKING step 3/3',
      'chunk 1 true/true',
      'status TASK_STATE_COMPLETED Counted down from 3.',
    ]);
  });

  it('countdown, canceled once its first chunk is streamed, stops: its worker publishes CANCELED', async () => {
    const sdk = await clientOf(transport, 'py-countdown');
    const seen: string[] = [];
    let taskId = '';
    for await (const event of sdk.client.sendMessageStream(countdownRequest(100, 100), {
      signal: AbortSignal.timeout(STREAM_TIMEOUT_MS),
    })) {
      seen.push(describeEvent(event));
      if (event.payload?.$case === 'task') {
        taskId = event.payload.value.id;
      }
      if (event.payload?.$case === 'artifactUpdate' && !event.payload.value.append) {
        const canceled = await sdk.client.cancelTask(CancelTaskRequest.fromJSON({ id: taskId }));
        expect(stateName(canceled)).toBe('TASK_STATE_CANCELED');
      }
    }
    expect(seen.at(-1)).toBe('status TASK_STATE_CANCELED');
    // Canceled mid-way: the chunks arrived while the task ran.
    expect(seen.filter((line) => line.startsWith('chunk')).length).toBeLessThan(100);
    const log = await events(taskId);
    expect(log.map((e) => e.event_type)).toContain('TaskCancelRequested');
    const last = log.at(-1);
    expect(last?.event_type).toBe('TaskStatusUpdated');
    expect((last?.data['status'] as { state: string }).state).toBe('TASK_STATE_CANCELED');
    expect(last?.metadata.actor.kind).toBe('agent-worker');
  });

  it('interview asks (INPUT_REQUIRED), then greets the answer given on the same task', async () => {
    const sdk = await clientOf(transport, 'py-interview');
    const asked = asTask(await sdk.client.sendMessage(sendRequest(rawUserMessage('Hello'))));
    expect(stateName(asked)).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(textOf(asked.status?.message?.parts)).toBe('What is your name?');
    const answered = asTask(
      await sdk.client.sendMessage(
        sendRequest(rawUserMessage('Ada', { taskId: asked.id, contextId: asked.contextId })),
      ),
    );
    expect(answered.id).toBe(asked.id);
    expect(stateName(answered)).toBe('TASK_STATE_COMPLETED');
    expect(answered.artifacts.map((a) => [a.artifactId, textOf(a.parts)])).toStrictEqual([
      ['greeting', 'Nice to meet you, Ada!'],
    ]);
  });

  it('shout, a plain function, answers with a bare Message, and fails a task with a message for blank text', async () => {
    const sdk = await clientOf(transport, 'py-shout');
    const contextId = `python-shout-${randomUUID()}`;
    const reply = await sdk.client.sendMessage(sendRequest(rawUserMessage('hello', { contextId })));
    if (!('messageId' in reply)) {
      expect.fail(`expected a Message, got the task ${reply.id}`);
    }
    expect(reply.role).toBe(Role.ROLE_AGENT);
    expect(reply.contextId).toBe(contextId);
    expect(textOf(reply.parts)).toBe('HELLO!');
    const failed = asTask(await sdk.client.sendMessage(sendRequest(rawUserMessage('   '))));
    expect(stateName(failed)).toBe('TASK_STATE_FAILED');
    expect(textOf(failed.status?.message?.parts)).toBe('there is nothing to shout');
    // The worker lives on: the next message is answered.
    const again = await sdk.client.sendMessage(sendRequest(rawUserMessage('again')));
    expect('messageId' in again && textOf(again.parts)).toBe('AGAIN!');
  });
});

/**
 * The fragile agent starts with two workers that have room for one task each: the one left after the SIGKILL
 * holds the next task alone. The platform leases a task to the worker with the most room, so the worker
 * started (room for 8) after that one froze takes its task, not the frozen one.
 */
describe('a Python worker that fails', () => {
  /** Steps of 100 ms of each countdown: time enough for a signal to reach its worker mid-task. */
  const STEPS = 20;
  const COUNTED = Array.from({ length: STEPS }, (_, i) => String(STEPS - i));
  let sdk: SdkAgent;

  beforeAll(async () => {
    sdk = await clientOf('JSONRPC', FRAGILE);
  });

  const stateOf = async (taskId: string): Promise<string> =>
    stateName(await sdk.client.getTask(GetTaskRequest.fromJSON({ id: taskId })));

  /** The chunks of the task's countdown artifact. */
  const countedOf = async (taskId: string): Promise<string[][]> =>
    (await sdk.client.getTask(GetTaskRequest.fromJSON({ id: taskId }))).artifacts.map((a) =>
      a.parts.map((p) => textOf([p])),
    );

  /** Starts a countdown on the fragile agent and waits until its first chunk is in the log. */
  async function startedCountdown(): Promise<{ taskId: string; grant: Grant }> {
    const task = asTask(await sdk.client.sendMessage(countdownRequest(STEPS, 100, true)));
    await expect
      .poll(async () => (await events(task.id)).map((e) => e.event_type))
      .toContain('ArtifactChunkAppended');
    const [grant] = await grantsOf(task.id);
    return { taskId: task.id, grant: grant! };
  }

  it('SIGKILLed mid-task: the task is leased again and completes on another Python worker', async () => {
    const { taskId, grant } = await startedCountdown();
    const killed = workerHolding(grant);
    await killed.kill();
    await expect.poll(() => stateOf(taskId), { timeout: 30_000 }).toBe('TASK_STATE_COMPLETED');
    const grants = await grantsOf(taskId);
    expect(grants.map((g) => g.attempt)).toStrictEqual([1, 2]);
    expect(workerHolding(grants[1]!)).not.toBe(killed);
    expect(await countedOf(taskId)).toStrictEqual([COUNTED]);
  });

  it('frozen past its lease: its old epoch is refused with LEASE_LOST, and once thawed it stops working on the task', async () => {
    const { taskId, grant } = await startedCountdown();
    const frozen = workerHolding(grant);
    frozen.freeze(true);
    try {
      const other = await startWorker('countdown', fragileSecret);
      await expect
        .poll(async () => (await grantsOf(taskId)).length, { timeout: 30_000 })
        .toBeGreaterThanOrEqual(2);
      const [, second] = await grantsOf(taskId);
      expect(second!.leaseEpoch).toBeGreaterThan(grant.leaseEpoch);
      expect(workerHolding(second!)).toBe(other);
      const raw = new RawWorker(platform.workerTarget, fragileSecret);
      const refused = await raw
        .publishStatus(taskId, grant.leaseEpoch, { state: 'TASK_STATE_COMPLETED' })
        .then(
          () => 'accepted',
          (error: unknown) => workerErrorReason(error),
        );
      raw.vanish();
      expect(refused).toBe('LEASE_LOST');
    } finally {
      frozen.freeze(false);
    }
    await frozen.waitForOutput(new RegExp(`stopped working on task ${taskId}`), 30_000);
    expect(frozen.running).toBe(true);
    await expect.poll(() => stateOf(taskId), { timeout: 30_000 }).toBe('TASK_STATE_COMPLETED');
    expect(await countedOf(taskId)).toStrictEqual([COUNTED]);
  });

  it('SIGTERM drains: the task in flight still completes, its lease never left to expire, and the worker exits 0', async () => {
    const { taskId, grant } = await startedCountdown();
    const draining = workerHolding(grant);
    await draining.stop('SIGTERM', 30_000);
    expect(draining.exitCode).toBe(0);
    await expect.poll(() => stateOf(taskId), { timeout: 30_000 }).toBe('TASK_STATE_COMPLETED');
    const types = (await events(taskId)).map((e) => e.event_type);
    expect(types).not.toContain('TaskLeaseExpired');
    expect(await countedOf(taskId)).toStrictEqual([COUNTED]);
  });
});

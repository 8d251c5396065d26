/**
 * The official `@a2a-js/sdk` client over each of the platform's three bindings (spec digest §7 JSON-RPC, §8
 * HTTP+JSON, §8b gRPC), built the way a user builds it: from the agent card URL, with every transport factory
 * the SDK ships and the binding under test named in `preferredTransports`. Every binding must serve the same
 * operations with the same results and the same typed errors (§10.11: "All bindings MUST be functionally
 * equivalent").
 */
import {
  CancelTaskRequest,
  DeleteTaskPushNotificationConfigRequest,
  GetExtendedAgentCardRequest,
  GetTaskPushNotificationConfigRequest,
  GetTaskRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTasksRequest,
  Role,
  SubscribeToTaskRequest,
  TaskPushNotificationConfig,
  TaskState,
  type StreamResponse,
  type Task,
} from '@a2a-js/sdk';
import {
  ServiceParameters,
  TenantTransportDecorator,
  withA2AVersion,
  type RequestOptions,
} from '@a2a-js/sdk/client';
import {
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from '@a2a-js/sdk/errors';
import { AGENT_PROFILES } from '@lib/worker-sdk';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, rawUserMessage } from './support/json-rpc';
import { bootStandalone, taskEvents, type Standalone } from './support/platform';
import {
  apiKeyHeaderOf,
  asTask,
  SDK_TRANSPORTS,
  sdkClientOver,
  sendRequest,
  stateName,
  textOf,
  type SdkAgent,
  type SdkTransport,
} from './support/sdk-client';

const TENANT = 'demo';
const API_KEY = 'demo-key';
const AGENTS = ['echo', 'interview', 'countdown', 'units'] as const;
type Agent = (typeof AGENTS)[number];
const STREAM_TIMEOUT_MS = 20_000;

/** The parts of a downloaded (ProtoJSON) agent card the tests read. */
interface PublicCard {
  name: string;
  description: string;
  capabilities: { extendedAgentCard?: boolean };
  skills: { id: string }[];
  supportedInterfaces: { protocolBinding: string; url: string }[];
}

let platform: Standalone;
/** One client per transport and agent, each built from that agent's card. */
const clients = new Map<SdkTransport, Record<Agent, SdkAgent>>();
/** Tasks the per-transport tests made, compared across the three transports at the end. */
const madeTasks: { transport: SdkTransport; agent: Agent; id: string }[] = [];

const cardPath = (agent: Agent): string => `/agents/${TENANT}/${agent}/.well-known/agent-card.json`;

function sdk(transport: SdkTransport, agent: Agent): SdkAgent {
  const agents = clients.get(transport);
  if (!agents) {
    throw new Error(`no ${transport} clients`);
  }
  return agents[agent];
}

/** A countdown request: `n` steps of `stepMs` each. */
const countdownRequest = (n: number, stepMs: number, returnImmediately = false) =>
  sendRequest(rawUserMessage(String(n), { metadata: { stepMs } }), { returnImmediately });

/** Reads a stream to its end, noting when each event arrived. */
async function collect<T>(stream: AsyncIterable<T>): Promise<{ events: T[]; arrivals: number[] }> {
  const events: T[] = [];
  const arrivals: number[] = [];
  for await (const event of stream) {
    events.push(event);
    arrivals.push(performance.now());
  }
  return { events, arrivals };
}

/**
 * The events came while the task ran, not all at once at its end (a binding that buffered the stream, or a
 * client that read it whole first, would hand them over together).
 */
function expectLive(arrivals: readonly number[], atLeastMs: number): void {
  expect(arrivals[arrivals.length - 1]! - arrivals[0]!).toBeGreaterThanOrEqual(atLeastMs);
}

/**
 * The options a caller passes when it calls the client's transport itself (for operations the `Client` answers
 * from the card without asking the server): the same service parameters the client and its API-key
 * interceptor would send.
 */
function directOptions(agent: SdkAgent): RequestOptions {
  return {
    serviceParameters: ServiceParameters.create(
      withA2AVersion(agent.client.protocolVersion),
      (parameters) => {
        parameters[apiKeyHeaderOf(agent.card)] = API_KEY;
      },
    ),
  };
}

/**
 * The calls made since exchange `from` went over `transport` only: HTTP calls to the interface the card
 * declares for it, or, for gRPC, no HTTP call at all.
 */
function expectOnlyOver(agent: SdkAgent, transport: SdkTransport, from: number): void {
  const calls = agent.exchanges.slice(from).map((e) => `${e.method} ${e.url}`);
  const declared = agent.card.supportedInterfaces.find((i) => i.protocolBinding === transport);
  expect(declared, `the card declares ${transport}`).toBeDefined();
  if (transport === 'GRPC') {
    expect(calls).toStrictEqual([]);
    return;
  }
  expect(calls.length).toBeGreaterThan(0);
  for (const call of calls) {
    if (transport === 'JSONRPC') {
      expect(call).toBe(`POST ${declared!.url}`);
    } else {
      expect(call.slice(call.indexOf(' ') + 1).startsWith(`${declared!.url}/`), call).toBe(true);
    }
  }
  for (const { requestHeaders } of agent.exchanges.slice(from)) {
    expect(requestHeaders).toMatchObject({ 'a2a-version': '1.0', 'x-api-key': API_KEY });
  }
}

/** The platform recorded the binding that carried the call that created the task. */
async function expectCreatedOver(taskId: string, transport: SdkTransport): Promise<void> {
  const [first] = await taskEvents(platform.db.pool, TENANT, taskId);
  expect(first?.metadata.binding).toBe(transport);
}

/**
 * §10.6 rules a countdown stream must follow: the task first, then only status and artifact updates of that
 * task, step statuses in order, artifact chunks in order (`countdown` N … 1, counting the chunks the first
 * snapshot already holds), and the COMPLETED status last. Returns the first snapshot.
 */
function expectCountdownStream(events: readonly StreamResponse[], n: number): Task {
  const [first, ...updates] = events;
  expect(first?.payload?.$case).toBe('task');
  const snapshot = first!.payload!.value as Task;
  const statusTexts = snapshot.status?.message ? [textOf(snapshot.status.message.parts)] : [];
  const chunks = (snapshot.artifacts.find((a) => a.artifactId === 'countdown')?.parts ?? []).map(
    (p) => textOf([p]),
  );
  for (const event of updates) {
    const payload = event.payload;
    if (payload?.$case === 'statusUpdate') {
      expect(payload.value).toMatchObject({ taskId: snapshot.id, contextId: snapshot.contextId });
      statusTexts.push(textOf(payload.value.status?.message?.parts));
    } else if (payload?.$case === 'artifactUpdate') {
      expect(payload.value).toMatchObject({ taskId: snapshot.id, contextId: snapshot.contextId });
      expect(payload.value.artifact?.artifactId).toBe('countdown');
      chunks.push(textOf(payload.value.artifact?.parts));
    } else {
      expect.fail(`unexpected event after the task: ${JSON.stringify(event)}`);
    }
  }
  const last = updates[updates.length - 1]?.payload;
  expect(last?.$case).toBe('statusUpdate');
  expect(last?.$case === 'statusUpdate' && last.value.status?.state).toBe(
    TaskState.TASK_STATE_COMPLETED,
  );
  expect(statusTexts[statusTexts.length - 1]).toBe(`Counted down from ${n}.`);
  const steps = statusTexts
    .map((text) => new RegExp(`^step (\\d+)/${n}$`).exec(text)?.[1])
    .filter((step): step is string => step !== undefined)
    .map(Number);
  expect(steps.length).toBeGreaterThan(0);
  expect(steps).toStrictEqual(
    Array.from({ length: steps.length }, (_, i) => n - steps.length + 1 + i),
  );
  expect(chunks).toStrictEqual(Array.from({ length: n }, (_, i) => String(n - i)));
  return snapshot;
}

beforeAll(async () => {
  platform = await bootStandalone('e2e_sdk_transports');
  await Promise.all(
    SDK_TRANSPORTS.map(async (transport) => {
      const [echo, interview, countdown, units] = await Promise.all(
        AGENTS.map((agent) => sdkClientOver(transport, platform.baseUrl, cardPath(agent), API_KEY)),
      );
      clients.set(transport, {
        echo: echo!,
        interview: interview!,
        countdown: countdown!,
        units: units!,
      });
    }),
  );
});

afterAll(async () => {
  await platform?.close();
});

describe.each(SDK_TRANSPORTS)('the @a2a-js/sdk client over %s', (transport) => {
  it('§10.11 is built from the card (its first HTTP call) on the preferred binding; over gRPC, the card is its only HTTP call', () => {
    for (const agent of AGENTS) {
      const { client, card, exchanges } = sdk(transport, agent);
      expect(client.transport.protocolName).toBe(transport);
      // §10.9: only the gRPC interface declares a tenant, which the factory then puts in every request.
      expect(client.transport instanceof TenantTransportDecorator).toBe(transport === 'GRPC');
      expect(client.protocolVersion).toBe('1.0');
      expect(exchanges[0]).toMatchObject({
        method: 'GET',
        url: `${platform.baseUrl}${cardPath(agent)}`,
        status: 200,
      });
      expect(card.supportedInterfaces.map((i) => i.protocolBinding)).toContain(transport);
      if (transport === 'GRPC') {
        expect(exchanges).toHaveLength(1);
      }
    }
  });

  it('§10.4 sendMessage to echo blocks until the task is COMPLETED with the echo artifact', async () => {
    const echo = sdk(transport, 'echo');
    const mark = echo.exchanges.length;
    const text = `hello over ${transport}`;
    const task = asTask(await echo.client.sendMessage(sendRequest(rawUserMessage(text))));
    expect(stateName(task)).toBe('TASK_STATE_COMPLETED');
    expect(task.artifacts.map((a) => [a.artifactId, a.name, textOf(a.parts)])).toStrictEqual([
      ['echo', 'echo', text],
    ]);
    expectOnlyOver(echo, transport, mark);
    await expectCreatedOver(task.id, transport);
    madeTasks.push({ transport, agent: 'echo', id: task.id });
  });

  it('§6 interview takes two turns: INPUT_REQUIRED with the question, then the answer on the same task completes it', async () => {
    const interview = sdk(transport, 'interview');
    const mark = interview.exchanges.length;
    const asked = asTask(await interview.client.sendMessage(sendRequest(rawUserMessage('Hello'))));
    expect(stateName(asked)).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(textOf(asked.status?.message?.parts)).toBe('What is your name?');
    const answered = asTask(
      await interview.client.sendMessage(
        sendRequest(rawUserMessage('Ada', { taskId: asked.id, contextId: asked.contextId })),
      ),
    );
    expect(answered.id).toBe(asked.id);
    expect(stateName(answered)).toBe('TASK_STATE_COMPLETED');
    expect(answered.artifacts.map((a) => [a.artifactId, textOf(a.parts)])).toStrictEqual([
      ['greeting', 'Nice to meet you, Ada!'],
    ]);
    expectOnlyOver(interview, transport, mark);
    await expectCreatedOver(asked.id, transport);
    madeTasks.push({ transport, agent: 'interview', id: asked.id });
  });

  it('§10.5 getTask honours historyLength: all messages when unset, the N most recent when set, none for 0', async () => {
    const interview = sdk(transport, 'interview');
    const asked = asTask(await interview.client.sendMessage(sendRequest(rawUserMessage('Hi'))));
    await interview.client.sendMessage(
      sendRequest(rawUserMessage('Grace', { taskId: asked.id, contextId: asked.contextId })),
    );
    const mark = interview.exchanges.length;
    const get = (historyLength?: number) =>
      interview.client.getTask(
        GetTaskRequest.fromJSON({
          id: asked.id,
          ...(historyLength === undefined ? {} : { historyLength }),
        }),
      );
    const full = await get();
    expect(stateName(full)).toBe('TASK_STATE_COMPLETED');
    const texts = full.history.map((m) => textOf(m.parts));
    expect(texts).toContain('Hi');
    expect(texts).toContain('Grace');
    expect(texts.length).toBeGreaterThanOrEqual(3);
    expect((await get(1)).history).toStrictEqual(full.history.slice(-1));
    expect((await get(2)).history).toStrictEqual(full.history.slice(-2));
    expect((await get(0)).history).toStrictEqual([]);
    const { history: _history, ...rest } = await get(0);
    const { history: _fullHistory, ...fullRest } = full;
    expect(rest).toStrictEqual(fullRest);
    expectOnlyOver(interview, transport, mark);
  });

  it('§10.7 listTasks pages newest first with pageSize, nextPageToken ("" on the last page) and totalSize', async () => {
    const echo = sdk(transport, 'echo');
    for (const text of ['page one', 'page two', 'page three']) {
      await echo.client.sendMessage(sendRequest(rawUserMessage(text)));
    }
    const mark = echo.exchanges.length;
    const listed: Task[] = [];
    let pageToken = '';
    let totalSize = -1;
    do {
      const page = await echo.client.listTasks(
        ListTasksRequest.fromJSON({ pageSize: 2, ...(pageToken ? { pageToken } : {}) }),
      );
      expect(page.pageSize).toBe(2);
      expect(page.tasks.length).toBeLessThanOrEqual(2);
      if (totalSize === -1) {
        totalSize = page.totalSize;
      }
      expect(page.totalSize).toBe(totalSize);
      listed.push(...page.tasks);
      pageToken = page.nextPageToken;
      expect(pageToken === '' || page.tasks.length === 2).toBe(true);
    } while (pageToken !== '' && listed.length <= totalSize);
    expect(totalSize).toBeGreaterThanOrEqual(3);
    expect(listed).toHaveLength(totalSize);
    expect(new Set(listed.map((t) => t.id)).size).toBe(totalSize);
    const stamps = listed.map((t) => Date.parse(t.status?.timestamp ?? ''));
    expect(stamps.every((s, i) => !Number.isNaN(s) && (i === 0 || s <= stamps[i - 1]!))).toBe(true);
    // §10.7: artifacts only on request.
    expect(listed.every((t) => t.artifacts.length === 0)).toBe(true);
    const withArtifacts = await echo.client.listTasks(
      ListTasksRequest.fromJSON({ pageSize: 1, includeArtifacts: true }),
    );
    expect(textOf(withArtifacts.tasks[0]?.artifacts[0]?.parts)).toBe('page three');
    expectOnlyOver(echo, transport, mark);
  });

  it('§10.6 sendMessageStream on countdown: the task first, then ordered updates, ending on COMPLETED', async () => {
    const countdown = sdk(transport, 'countdown');
    const mark = countdown.exchanges.length;
    const { events, arrivals } = await collect(
      countdown.client.sendMessageStream(countdownRequest(4, 100), {
        signal: AbortSignal.timeout(STREAM_TIMEOUT_MS),
      }),
    );
    const task = expectCountdownStream(events, 4);
    expectLive(arrivals, 200);
    const done = await countdown.client.getTask(GetTaskRequest.fromJSON({ id: task.id }));
    expect(stateName(done)).toBe('TASK_STATE_COMPLETED');
    expect(done.artifacts.map((a) => a.parts.map((p) => textOf([p])))).toStrictEqual([
      ['4', '3', '2', '1'],
    ]);
    expectOnlyOver(countdown, transport, mark);
    await expectCreatedOver(task.id, transport);
    madeTasks.push({ transport, agent: 'countdown', id: task.id });
  });

  it('§6 sendMessage answered with a bare Message (units converts one value): the client gets a Message in its context, and no task exists', async () => {
    const units = sdk(transport, 'units');
    const mark = units.exchanges.length;
    const contextId = `sdk-reply-${randomUUID()}`;
    const result = await units.client.sendMessage(
      sendRequest(rawUserMessage('convert 10 km to mi', { contextId })),
    );
    if (!('messageId' in result)) {
      expect.fail(`expected a Message, got the task ${result.id}`);
    }
    expect(result.role).toBe(Role.ROLE_AGENT);
    expect(result.contextId).toBe(contextId);
    expect(result.taskId).toBe('');
    expect(textOf(result.parts)).toBe('10 km = 6.2137 mi');
    const listed = await units.client.listTasks(ListTasksRequest.fromJSON({ contextId }));
    expect(listed.tasks).toStrictEqual([]);
    expectOnlyOver(units, transport, mark);
  });

  it('§10.6 sendMessageStream answered with a bare Message: exactly that one message event, then the stream closes', async () => {
    const units = sdk(transport, 'units');
    const { events } = await collect(
      units.client.sendMessageStream(sendRequest(rawUserMessage('100 c in f')), {
        signal: AbortSignal.timeout(STREAM_TIMEOUT_MS),
      }),
    );
    expect(events.map((event) => event.payload?.$case)).toStrictEqual(['message']);
    const reply = events[0]?.payload?.$case === 'message' ? events[0].payload.value : undefined;
    expect(textOf(reply?.parts)).toBe('100 °C = 212 °F');
    expect(reply?.role).toBe(Role.ROLE_AGENT);
  });

  it('§6 the same agent answers a table request with a task: COMPLETED with the units-table artifact', async () => {
    const units = sdk(transport, 'units');
    const task = asTask(
      await units.client.sendMessage(sendRequest(rawUserMessage('table km to mi 1..3'))),
    );
    expect(stateName(task)).toBe('TASK_STATE_COMPLETED');
    expect(task.artifacts.map((a) => [a.artifactId, textOf(a.parts)])).toStrictEqual([
      ['units-table', 'km,mi\n1,0.6214\n2,1.2427\n3,1.8641\n'],
    ]);
  });

  it('§10.6 resubscribeTask on a running countdown: the current task first, then the remaining updates until COMPLETED', async () => {
    const countdown = sdk(transport, 'countdown');
    const mark = countdown.exchanges.length;
    const started = asTask(await countdown.client.sendMessage(countdownRequest(6, 150, true)));
    await eventually(
      () => countdown.client.getTask(GetTaskRequest.fromJSON({ id: started.id })),
      (t) => stateName(t) === 'TASK_STATE_WORKING',
    );
    const { events, arrivals } = await collect(
      countdown.client.resubscribeTask(SubscribeToTaskRequest.fromJSON({ id: started.id }), {
        signal: AbortSignal.timeout(STREAM_TIMEOUT_MS),
      }),
    );
    const snapshot = expectCountdownStream(events, 6);
    expectLive(arrivals, 300);
    expect(snapshot.id).toBe(started.id);
    expect(stateName(snapshot)).toBe('TASK_STATE_WORKING');
    expectOnlyOver(countdown, transport, mark);
  });

  it('§10.8 cancelTask on a running countdown returns it CANCELED', async () => {
    const countdown = sdk(transport, 'countdown');
    const mark = countdown.exchanges.length;
    const started = asTask(await countdown.client.sendMessage(countdownRequest(50, 200, true)));
    await eventually(
      () => countdown.client.getTask(GetTaskRequest.fromJSON({ id: started.id })),
      (t) => stateName(t) === 'TASK_STATE_WORKING',
    );
    const canceled = await countdown.client.cancelTask(
      CancelTaskRequest.fromJSON({ id: started.id }),
    );
    expect(canceled.id).toBe(started.id);
    expect(stateName(canceled)).toBe('TASK_STATE_CANCELED');
    const after = await countdown.client.getTask(GetTaskRequest.fromJSON({ id: started.id }));
    expect(stateName(after)).toBe('TASK_STATE_CANCELED');
    expectOnlyOver(countdown, transport, mark);
    madeTasks.push({ transport, agent: 'countdown', id: started.id });
  });

  describe('§9.1 errors surface as the SDK typed errors', () => {
    it('getTask of an unknown id → TaskNotFoundError', async () => {
      const echo = sdk(transport, 'echo');
      const mark = echo.exchanges.length;
      await expect(
        echo.client.getTask(GetTaskRequest.fromJSON({ id: randomUUID() })),
      ).rejects.toBeInstanceOf(TaskNotFoundError);
      expectOnlyOver(echo, transport, mark);
    });

    it('cancelTask of a COMPLETED task → TaskNotCancelableError', async () => {
      const echo = sdk(transport, 'echo');
      const done = asTask(await echo.client.sendMessage(sendRequest(rawUserMessage('done'))));
      expect(stateName(done)).toBe('TASK_STATE_COMPLETED');
      const mark = echo.exchanges.length;
      await expect(
        echo.client.cancelTask(CancelTaskRequest.fromJSON({ id: done.id })),
      ).rejects.toBeInstanceOf(TaskNotCancelableError);
      expectOnlyOver(echo, transport, mark);
    });

    it('push notification configs: create, get, list and delete on a task of echo (§6 rows 7–11)', async () => {
      const echo = sdk(transport, 'echo');
      expect(echo.card.capabilities?.pushNotifications).toBe(true);
      const done = asTask(await echo.client.sendMessage(sendRequest(rawUserMessage('push'))));
      const mark = echo.exchanges.length;
      const config = TaskPushNotificationConfig.fromJSON({
        taskId: done.id,
        id: 'config-1',
        url: 'https://client.example/hook',
        token: 'tok',
        authentication: { scheme: 'Bearer', credentials: 'secret' },
      });
      const created = await echo.client.createTaskPushNotificationConfig(config);
      expect(TaskPushNotificationConfig.toJSON(created)).toMatchObject({
        taskId: done.id,
        id: 'config-1',
        url: 'https://client.example/hook',
        token: 'tok',
        authentication: { scheme: 'Bearer', credentials: 'secret' },
      });
      const got = await echo.client.getTaskPushNotificationConfig(
        GetTaskPushNotificationConfigRequest.fromJSON({ taskId: done.id, id: 'config-1' }),
      );
      expect(got).toStrictEqual(created);
      const listed = await echo.client.listTaskPushNotificationConfig(
        ListTaskPushNotificationConfigsRequest.fromJSON({ taskId: done.id }),
      );
      expect(listed.configs).toStrictEqual([created]);
      await echo.client.deleteTaskPushNotificationConfig(
        DeleteTaskPushNotificationConfigRequest.fromJSON({ taskId: done.id, id: 'config-1' }),
      );
      await expect(
        echo.client.getTaskPushNotificationConfig(
          GetTaskPushNotificationConfigRequest.fromJSON({ taskId: done.id, id: 'config-1' }),
        ),
      ).rejects.toBeInstanceOf(TaskNotFoundError);
      expectOnlyOver(echo, transport, mark);
    });

    it('§10.11 getExtendedAgentCard on countdown (no extendedAgentCard capability) → UnsupportedOperationError', async () => {
      const countdown = sdk(transport, 'countdown');
      expect(countdown.card.capabilities?.extendedAgentCard).toBe(false);
      const mark = countdown.exchanges.length;
      // `Client.getAgentCard` returns the public card without a call when the card lacks the capability.
      await expect(
        countdown.client.transport.getExtendedAgentCard(
          GetExtendedAgentCardRequest.fromJSON({}),
          directOptions(countdown),
        ),
      ).rejects.toBeInstanceOf(UnsupportedOperationError);
      expectOnlyOver(countdown, transport, mark);
    });

    it('§10.11 echo: getAgentCard fetches the extended card over the binding when the public card declares the capability, else GetExtendedAgentCard → UnsupportedOperationError', async () => {
      const echo = sdk(transport, 'echo');
      // The card as downloaded (the client's own `card` is already the extended one when declared).
      const publicCard = echo.exchanges[0]!.responseBody as PublicCard;
      const mark = echo.exchanges.length;
      if (publicCard.capabilities.extendedAgentCard) {
        const extended = await echo.client.getAgentCard();
        const profile = AGENT_PROFILES.echo.extendedCard;
        expect(extended.name).toBe(publicCard.name);
        expect(extended.description).toBe(profile?.description ?? publicCard.description);
        expect(extended.skills.map((s) => s.id)).toStrictEqual([
          ...publicCard.skills.map((s) => s.id),
          ...(profile?.skills ?? []).map((s) => s.id),
        ]);
        expect(extended.supportedInterfaces.map((i) => [i.protocolBinding, i.url])).toStrictEqual(
          publicCard.supportedInterfaces.map((i) => [i.protocolBinding, i.url]),
        );
      } else {
        await expect(
          echo.client.transport.getExtendedAgentCard(
            GetExtendedAgentCardRequest.fromJSON({}),
            directOptions(echo),
          ),
        ).rejects.toBeInstanceOf(UnsupportedOperationError);
      }
      expectOnlyOver(echo, transport, mark);
    });
  });
});

describe('the same results through the three transports', () => {
  it('§10.11 getTask (whole, and with historyLength 1) of every task the transports made is deep-equal across JSONRPC, HTTP+JSON and GRPC', async () => {
    expect(new Set(madeTasks.map((t) => t.transport))).toStrictEqual(new Set(SDK_TRANSPORTS));
    for (const { agent, id } of madeTasks) {
      for (const historyLength of [undefined, 1]) {
        const request = GetTaskRequest.fromJSON({
          id,
          ...(historyLength === undefined ? {} : { historyLength }),
        });
        const [viaJsonRpc, viaRest, viaGrpc] = await Promise.all(
          SDK_TRANSPORTS.map((transport) => sdk(transport, agent).client.getTask(request)),
        );
        expect(viaJsonRpc!.id).toBe(id);
        expect(viaRest, `${id} over HTTP+JSON`).toStrictEqual(viaJsonRpc);
        expect(viaGrpc, `${id} over GRPC`).toStrictEqual(viaJsonRpc);
      }
    }
  });

  it('§10.7 listTasks with artifacts and history is deep-equal across the three transports', async () => {
    const request = ListTasksRequest.fromJSON({
      pageSize: 5,
      includeArtifacts: true,
      historyLength: 2,
    });
    const [viaJsonRpc, viaRest, viaGrpc] = await Promise.all(
      SDK_TRANSPORTS.map((transport) => sdk(transport, 'countdown').client.listTasks(request)),
    );
    expect(viaJsonRpc!.tasks.length).toBeGreaterThan(0);
    expect(viaRest).toStrictEqual(viaJsonRpc);
    expect(viaGrpc).toStrictEqual(viaJsonRpc);
  });

  it('§10.11 getAgentCard of echo (the extended card when declared) is deep-equal across the three transports', async () => {
    const [viaJsonRpc, viaRest, viaGrpc] = await Promise.all(
      SDK_TRANSPORTS.map((transport) => sdk(transport, 'echo').client.getAgentCard()),
    );
    expect(viaJsonRpc!.name).toBe(AGENT_PROFILES.echo.name);
    expect(viaRest).toStrictEqual(viaJsonRpc);
    expect(viaGrpc).toStrictEqual(viaJsonRpc);
  });
});

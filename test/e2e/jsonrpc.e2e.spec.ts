/**
 * The JSON-RPC binding end to end (spec digest §6, §7, §9, §10.1, §10.3–§10.8, §13), against the built
 * standalone platform with its three example workers. Happy paths go through the official `@a2a-js/sdk`
 * client created from the agent card; wire-level rules (codes, ErrorInfo, HTTP statuses, echoed ids) are
 * checked with raw `fetch`.
 */
import {
  CancelTaskRequest,
  GetTaskRequest,
  ListTasksRequest,
  TaskState,
  type Task,
} from '@a2a-js/sdk';
import { TaskNotCancelableError, TaskNotFoundError } from '@a2a-js/sdk/errors';
import type { ListTasksResponse, Task as WireTask } from '@lib/a2a-protocol';
import { AGENT_PROFILES, type ExampleAgentId } from '@lib/worker-sdk';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  A2A_DOMAIN,
  eventually,
  expectRpcError,
  expectRpcResult,
  PLATFORM_DOMAIN,
  rawRpc,
  rawUserMessage,
  request,
  sentTask,
  taskResult,
  type ExpectedError,
  type RawOptions,
  type RpcReply,
} from './support/json-rpc';
import { bootStandalone, taskEvents, writeCounts, type Standalone } from './support/platform';
import {
  apiKeyHeaderOf,
  asTask,
  isTerminal,
  sdkClientFromCard,
  sendRequest,
  stateName,
  stateOf,
  textOf,
  type SdkAgent,
} from './support/sdk-client';

const MAX_BODY_BYTES = 65_536;
const CANCEL_GRACE_MS = 20_000;
const RFC3339_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/;

/** Tasks made once for the whole file; every one of them is settled (terminal or waiting for input). */
interface Fixtures {
  completedEcho: WireTask;
  completedInterview: WireTask;
  waitingInterview: WireTask;
}

let platform: Standalone;
let fixtures: Fixtures;
let echo: SdkAgent;
let interview: SdkAgent;
let countdown: SdkAgent;

const url = (agent: string): string => platform.endpoint('demo', agent);
const cardPath = (agent: string): string => `/agents/demo/${agent}/.well-known/agent-card.json`;

/** The wire JSON of the SDK client's latest call (what its model types cannot show: absent keys). */
const wireResult = <T>(agent: SdkAgent): T => {
  const response = agent.lastResponse();
  expect(response).not.toHaveProperty('error');
  return response.result as T;
};

async function blockingSend(agent: string, text: string, extra: Record<string, unknown> = {}) {
  return sentTask(
    await rawRpc(url(agent), request('SendMessage', { message: rawUserMessage(text, extra) })),
  );
}

beforeAll(async () => {
  platform = await bootStandalone('e2e_jsonrpc', {
    MAX_BODY_BYTES: String(MAX_BODY_BYTES),
    // Long enough that a CANCELED seen within seconds can only come from the worker, not the deadline.
    CANCEL_GRACE_MS: String(CANCEL_GRACE_MS),
  });
  const client = (agent: string) =>
    sdkClientFromCard(platform.baseUrl, cardPath(agent), 'demo-key');
  [echo, interview, countdown] = await Promise.all([
    client('echo'),
    client('interview'),
    client('countdown'),
  ]);
  const completedEcho = await blockingSend('echo', 'fixture');
  const asked = await blockingSend('interview', 'Hello');
  const completedInterview = await blockingSend('interview', 'Grace', { taskId: asked.id });
  const waitingInterview = await blockingSend('interview', 'Hi again');
  expect(completedEcho.status.state).toBe('TASK_STATE_COMPLETED');
  expect(completedInterview.status.state).toBe('TASK_STATE_COMPLETED');
  expect(waitingInterview.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
  fixtures = { completedEcho, completedInterview, waitingInterview };
});

afterAll(async () => {
  await platform?.close();
});

describe('agent cards (§10.11, §13 "Agent card")', () => {
  const agents: ExampleAgentId[] = ['echo', 'interview', 'countdown'];

  async function fetchCard(
    path: string,
  ): Promise<{ response: Response; card: Record<string, unknown> }> {
    const response = await fetch(`${platform.baseUrl}${path}`);
    expect(response.status, path).toBe(200);
    expect(response.headers.get('content-type'), path).toMatch(/^application\/json/);
    return { response, card: (await response.json()) as Record<string, unknown> };
  }

  it.each(agents)(
    '§10.11/§4.5: the card of %s has the v1.0 fields, a JSONRPC interface at protocolVersion "1.0" and the X-API-Key header scheme',
    async (agent) => {
      const { response, card } = await fetchCard(cardPath(agent));
      const profile = AGENT_PROFILES[agent];
      expect(response.headers.get('cache-control')).toMatch(/max-age=\d+/);
      expect(card).toMatchObject({
        name: profile.name,
        description: profile.description,
        version: profile.version,
        capabilities: {
          streaming: true,
          pushNotifications: false,
          // Only echo offers an extended card to authenticated callers (test/e2e/agent-cards.e2e.spec.ts).
          extendedAgentCard: agent === 'echo',
          extensions: [
            {
              uri: 'https://a2a-platform.dev/extensions/resumable-streams/v1',
              // `required` is a plain proto3 bool: false is its default, so ProtoJSON omits it.
              description: expect.any(String),
            },
          ],
        },
        defaultInputModes: profile.defaultInputModes,
        defaultOutputModes: profile.defaultOutputModes,
      });
      expect(card['supportedInterfaces']).toStrictEqual([
        {
          url: `${platform.baseUrl}/agents/demo/${agent}/jsonrpc`,
          protocolBinding: 'JSONRPC',
          protocolVersion: '1.0',
        },
        {
          url: `${platform.baseUrl}/agents/demo/${agent}/rest`,
          protocolBinding: 'HTTP+JSON',
          protocolVersion: '1.0',
        },
        {
          url: platform.grpcTarget,
          protocolBinding: 'GRPC',
          tenant: `demo/${agent}`,
          protocolVersion: '1.0',
        },
      ]);
      const skills = card['skills'] as Record<string, unknown>[];
      expect(skills.length).toBeGreaterThan(0);
      for (const skill of skills) {
        expect(typeof skill['id']).toBe('string');
        expect(typeof skill['name']).toBe('string');
        expect(typeof skill['description']).toBe('string');
        expect((skill['tags'] as string[]).length).toBeGreaterThan(0);
      }
      // §4.6: a ProtoJSON oneof wrapper, referenced by a security requirement.
      const schemes = card['securitySchemes'] as Record<string, Record<string, unknown>>;
      const apiKeySchemes = Object.entries(schemes).filter(([, s]) => 'apiKeySecurityScheme' in s);
      expect(apiKeySchemes).toHaveLength(1);
      const [schemeName, scheme] = apiKeySchemes[0]!;
      expect(scheme['apiKeySecurityScheme']).toMatchObject({
        location: 'header',
        name: 'X-API-Key',
      });
      expect(card['securityRequirements']).toStrictEqual([{ schemes: { [schemeName]: {} } }]);
      // §11: none of the 0.3 card fields.
      for (const legacy of [
        'url',
        'protocolVersion',
        'preferredTransport',
        'additionalInterfaces',
        'security',
        'supportsAuthenticatedExtendedCard',
        'kind',
      ]) {
        expect(card, legacy).not.toHaveProperty(legacy);
      }
      expect(JSON.stringify(schemes)).not.toMatch(/"type"\s*:|"in"\s*:/);
    },
  );

  it('§10.11: /.well-known/agent-card.json serves the default agent (demo/echo); an unknown agent has no card', async () => {
    const root = await fetchCard('/.well-known/agent-card.json');
    const own = await fetchCard(cardPath('echo'));
    expect(root.card).toStrictEqual(own.card);
    // Caching (§10.11 SHOULD): an ETag, honoured by If-None-Match.
    const etag = own.response.headers.get('etag');
    expect(etag).toMatch(/^(W\/)?".+"$/);
    const revalidated = await fetch(`${platform.baseUrl}${cardPath('echo')}`, {
      // An explicit Cache-Control keeps fetch from adding `no-cache`, which forbids a 304 by design.
      headers: { 'If-None-Match': etag!, 'Cache-Control': 'max-age=0' },
    });
    expect(revalidated.status).toBe(304);
    const missing = await fetch(`${platform.baseUrl}${cardPath('no-such-agent')}`);
    expect(missing.status).toBe(404);
  });

  it('§10.11: the JSONRPC url the card declares is the endpoint that serves the agent', async () => {
    const { card } = await fetchCard(cardPath('echo'));
    const [iface] = card['supportedInterfaces'] as { url: string }[];
    const reply = await rawRpc(
      iface!.url,
      request('GetTask', { id: fixtures.completedEcho.id }, 'card-url'),
    );
    expect(taskResult(reply, 'card-url').id).toBe(fixtures.completedEcho.id);
  });

  it('the SDK client built from the card posts to that url and sends A2A-Version 1.0 and the declared API key header (§10.1, §10.11)', async () => {
    // The SDK's own parse of the card: v1.0 interface, the header scheme the interceptor relies on.
    expect(echo.card.supportedInterfaces.map((i) => i.protocolBinding)).toStrictEqual([
      'JSONRPC',
      'HTTP+JSON',
      'GRPC',
    ]);
    expect(echo.card.supportedInterfaces[0]).toMatchObject({
      protocolBinding: 'JSONRPC',
      protocolVersion: '1.0',
    });
    expect(apiKeyHeaderOf(echo.card)).toBe('X-API-Key');
    expect(echo.card.capabilities).toMatchObject({ streaming: true, pushNotifications: false });
    expect(echo.client.protocolVersion).toBe('1.0');
    const cardFetch = echo.exchanges[0]!;
    expect(cardFetch).toMatchObject({
      method: 'GET',
      status: 200,
      url: `${platform.baseUrl}${cardPath('echo')}`,
    });
    expect(cardFetch.requestHeaders['a2a-version']).toBe('1.0');
    await echo.client.getTask(GetTaskRequest.fromJSON({ id: fixtures.completedEcho.id }));
    const call = echo.exchanges[echo.exchanges.length - 1]!;
    expect(call.url).toBe(echo.card.supportedInterfaces[0]?.url);
    expect(call.method).toBe('POST');
    expect(call.requestHeaders['a2a-version']).toBe('1.0');
    expect(call.requestHeaders['x-api-key']).toBe('demo-key');
    expect(call.requestBody).toMatchObject({ jsonrpc: '2.0', method: 'GetTask' });
  });
});

describe('SendMessage, GetTask and CancelTask through the official SDK (§6, §10.3–§10.5, §10.8)', () => {
  it('§13: GetTask of an unknown id surfaces in the SDK as TaskNotFoundError (-32001)', async () => {
    const error = await echo.client
      .getTask(GetTaskRequest.fromJSON({ id: `missing-${randomUUID()}` }))
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(TaskNotFoundError);
    expect(echo.lastResponse().error).toMatchObject({ code: -32001 });
  });

  it('§10.4: a blocking SendMessage to echo returns the COMPLETED task with the artifact "echo" echoing the text', async () => {
    const messageId = `echo-${randomUUID()}`;
    const text = 'Hello, platform! ✓';
    const task = asTask(
      await echo.client.sendMessage(sendRequest(rawUserMessage(text, { messageId }))),
    );
    expect(stateName(task)).toBe('TASK_STATE_COMPLETED');
    expect(task.id).not.toBe('');
    expect(task.contextId).not.toBe('');
    expect(task.artifacts).toHaveLength(1);
    expect(task.artifacts[0]).toMatchObject({ artifactId: 'echo', name: 'echo' });
    expect(textOf(task.artifacts[0]?.parts)).toBe(text);
    expect(task.history.map((m) => m.messageId)).toContain(messageId);
    // ProtoJSON on the wire (§3): a {"task":…} wrapper, enum names, RFC 3339 timestamps, no `kind`.
    const wire = wireResult<{ task: WireTask }>(echo);
    expect(wire.task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(wire.task.status.timestamp).toMatch(RFC3339_UTC);
    expect(wire.task.history?.[0]?.role).toBe('ROLE_USER');
    expect(JSON.stringify(wire)).not.toContain('"kind"');
  });

  it('§10.4: returnImmediately returns a non-terminal task at once; GetTask polling then sees it COMPLETED', async () => {
    const first = asTask(
      await countdown.client.sendMessage(
        sendRequest(rawUserMessage('3', { metadata: { stepMs: 200 } }), {
          returnImmediately: true,
        }),
      ),
    );
    expect([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING]).toContain(
      stateOf(first),
    );
    const done = await eventually(
      () => countdown.client.getTask(GetTaskRequest.fromJSON({ id: first.id })),
      isTerminal,
    );
    expect(stateName(done)).toBe('TASK_STATE_COMPLETED');
    expect(done.contextId).toBe(first.contextId);
    expect(done.artifacts.map((a) => a.artifactId)).toStrictEqual(['countdown']);
    expect(done.artifacts[0]?.parts.map((p) => textOf([p]))).toStrictEqual(['3', '2', '1']);
    expect(textOf(done.status?.message?.parts)).toBe('Counted down from 3.');
  });

  it('§10.3: interview asks for input (INPUT_REQUIRED with the question), the answer on the same taskId completes it', async () => {
    const asked = asTask(
      await interview.client.sendMessage(sendRequest(rawUserMessage('Hi there'))),
    );
    expect(stateName(asked)).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(asked.status?.message?.role).toBe(2 /* ROLE_AGENT */);
    expect(textOf(asked.status?.message?.parts)).toBe('What is your name?');
    // Continue with taskId only: the server infers the contextId (§10.3).
    const done = asTask(
      await interview.client.sendMessage(sendRequest(rawUserMessage('Ada', { taskId: asked.id }))),
    );
    expect(done.id).toBe(asked.id);
    expect(done.contextId).toBe(asked.contextId);
    expect(stateName(done)).toBe('TASK_STATE_COMPLETED');
    expect(done.artifacts).toHaveLength(1);
    expect(done.artifacts[0]?.artifactId).toBe('greeting');
    expect(textOf(done.artifacts[0]?.parts)).toBe('Nice to meet you, Ada!');
    expect(done.history.map((m) => textOf(m.parts))).toStrictEqual([
      'Hi there',
      'What is your name?',
      'Ada',
    ]);
    expect(
      done.history.every((m) => m.taskId === asked.id && m.contextId === asked.contextId),
    ).toBe(true);
  });

  it('§10.8: a WORKING countdown reports progress; CancelTask returns it CANCELED and it makes no further progress; a second cancel is TaskNotCancelable', async () => {
    const stepMs = 300;
    const started = asTask(
      await countdown.client.sendMessage(
        sendRequest(rawUserMessage('20', { metadata: { stepMs } }), { returnImmediately: true }),
      ),
    );
    const working = await eventually(
      () => countdown.client.getTask(GetTaskRequest.fromJSON({ id: started.id })),
      (t) =>
        stateOf(t) === TaskState.TASK_STATE_WORKING &&
        /^step [2-9]\/20$/.test(textOf(t.status?.message?.parts)),
    );
    expect(working.artifacts[0]?.artifactId).toBe('countdown');
    const canceledAt = Date.now();
    const canceled = await countdown.client.cancelTask(
      CancelTaskRequest.fromJSON({ id: started.id }),
    );
    expect(Date.now() - canceledAt).toBeLessThan(CANCEL_GRACE_MS / 2);
    expect(stateName(canceled)).toBe('TASK_STATE_CANCELED');
    expect(canceled.id).toBe(started.id);

    const eventsAfterCancel = (await taskEvents(platform.db.pool, 'demo', started.id)).length;
    await new Promise((resolve) => setTimeout(resolve, 3 * stepMs));
    expect(await taskEvents(platform.db.pool, 'demo', started.id)).toHaveLength(eventsAfterCancel);
    const later = await countdown.client.getTask(GetTaskRequest.fromJSON({ id: started.id }));
    expect(stateName(later)).toBe('TASK_STATE_CANCELED');
    expect(later.artifacts[0]?.parts.length ?? 0).toBeLessThan(20);

    const again = await countdown.client
      .cancelTask(CancelTaskRequest.fromJSON({ id: started.id }))
      .then(
        () => null,
        (error: unknown) => error,
      );
    expect(again).toBeInstanceOf(TaskNotCancelableError);
  });

  it('§10.5: GetTask historyLength 0 omits history, 1 and 2 keep the most recent messages, a large value keeps all', async () => {
    const id = fixtures.completedInterview.id;
    const history = async (historyLength?: number): Promise<string[] | undefined> => {
      const task = await interview.client.getTask(
        GetTaskRequest.fromJSON(historyLength === undefined ? { id } : { id, historyLength }),
      );
      expect(task.id).toBe(id);
      const wire = wireResult<WireTask>(interview);
      return wire.history?.map((m) => m.parts.map((p) => p.text).join(''));
    };
    expect(await history()).toStrictEqual(['Hello', 'What is your name?', 'Grace']);
    expect(await history(0)).toBeUndefined();
    expect(await history(1)).toStrictEqual(['Grace']);
    expect(await history(2)).toStrictEqual(['What is your name?', 'Grace']);
    expect(await history(1_000)).toStrictEqual(['Hello', 'What is your name?', 'Grace']);
  });

  it('§10.5: SendMessage configuration.historyLength trims the history of the returned task', async () => {
    const asked = asTask(
      await interview.client.sendMessage(sendRequest(rawUserMessage('Hey'), { historyLength: 0 })),
    );
    expect(wireResult<{ task: WireTask }>(interview).task).not.toHaveProperty('history');
    await interview.client.sendMessage(
      sendRequest(rawUserMessage('Lin', { taskId: asked.id }), { historyLength: 1 }),
    );
    const wire = wireResult<{ task: WireTask }>(interview).task;
    expect(wire.status.state).toBe('TASK_STATE_COMPLETED');
    expect(wire.history?.map((m) => m.parts[0]?.text)).toStrictEqual(['Lin']);
  });

  it('§6 (idempotency, §3.3.1): the same messageId sent twice, and three times concurrently, makes one task', async () => {
    const contextId = `ctx-idem-${randomUUID()}`;
    const messageId = `idem-${randomUUID()}`;
    const first = asTask(
      await echo.client.sendMessage(sendRequest(rawUserMessage('once', { messageId, contextId }))),
    );
    const second = asTask(
      await echo.client.sendMessage(sendRequest(rawUserMessage('once', { messageId, contextId }))),
    );
    expect(second.id).toBe(first.id);
    const concurrentId = `idem-${randomUUID()}`;
    const concurrent = await Promise.all(
      [1, 2, 3].map(() =>
        echo.client.sendMessage(
          sendRequest(rawUserMessage('at once', { messageId: concurrentId, contextId })),
        ),
      ),
    );
    const ids = new Set(concurrent.map((r) => asTask(r).id));
    expect(ids.size).toBe(1);
    expect(ids.has(first.id)).toBe(false);
    const listed = await echo.client.listTasks(ListTasksRequest.fromJSON({ contextId }));
    expect(listed.totalSize).toBe(2);
    const rows = await platform.db.pool.query(
      'SELECT count(*)::int AS n FROM read.task_view WHERE tenant_id = $1 AND context_id = $2',
      ['demo', contextId],
    );
    expect(rows.rows[0]).toStrictEqual({ n: 2 });
  });

  it('a messageId used before on another agent starts a task of its own there, never TaskNotFound (§6, §10.3)', async () => {
    const messageId = `shared-${randomUUID()}`;
    const onEcho = await blockingSend('echo', 'first', { messageId });
    const reply = await rawRpc(
      url('interview'),
      request('SendMessage', { message: rawUserMessage('second', { messageId }) }, 'reuse'),
    );
    // Either a task of its own on this agent, or an invalid-params error naming messageId; never -32001
    // for a task id the request does not contain.
    expect(reply.json.error?.code, reply.text).not.toBe(-32001);
    if (reply.json.error) {
      expectRpcError(reply, {
        code: -32602,
        reason: 'INVALID_PARAMS',
        domain: PLATFORM_DOMAIN,
        id: 'reuse',
        field: 'message.messageId',
      });
    } else {
      const task = sentTask(reply, 'reuse');
      expect(task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
      expect(task.id).not.toBe(onEcho.id);
    }
  });
});

describe('ListTasks through the official SDK (§10.7, §13 "ListTasks")', () => {
  /** Five echo tasks in one client-chosen context, oldest first. */
  let context: { contextId: string; tasks: WireTask[] };

  beforeAll(async () => {
    const contextId = `ctx-list-${randomUUID()}`;
    const tasks: WireTask[] = [];
    for (let i = 1; i <= 5; i++) {
      tasks.push(await blockingSend('echo', `list ${i}`, { contextId }));
    }
    context = { contextId, tasks };
  });

  const list = async (params: Record<string, unknown>) => {
    const sdk = await echo.client.listTasks(ListTasksRequest.fromJSON(params));
    return { sdk, wire: wireResult<ListTasksResponse>(echo) };
  };

  it('§10.7: without pageSize the default 50 is used and echoed; totalSize counts every visible task', async () => {
    const { sdk, wire } = await list({});
    expect(wire.pageSize).toBe(50);
    const expected = await platform.db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM read.task_view
        WHERE tenant_id = 'demo' AND agent_id = 'echo' AND owner_id = 'demo-user'`,
    );
    const total = expected.rows[0]!.n;
    expect(total).toBeGreaterThanOrEqual(5);
    expect(wire.totalSize).toBe(total);
    expect(sdk.tasks).toHaveLength(Math.min(50, total));
    expect(wire).toHaveProperty('nextPageToken', total > 50 ? expect.any(String) : '');
  });

  it('§10.7: pageSize 2 walks 5 tasks newest first over 3 pages; the last nextPageToken is ""', async () => {
    const pages: ListTasksResponse[] = [];
    let pageToken = '';
    do {
      const { wire } = await list({ contextId: context.contextId, pageSize: 2, pageToken });
      pages.push(wire);
      expect(wire).toHaveProperty('nextPageToken');
      pageToken = wire.nextPageToken;
    } while (pageToken !== '' && pages.length < 10);
    expect(pages.map((p) => p.tasks.length)).toStrictEqual([2, 2, 1]);
    expect(pages.map((p) => p.pageSize)).toStrictEqual([2, 2, 2]);
    expect(pages.map((p) => p.totalSize)).toStrictEqual([5, 5, 5]);
    expect(pages[0]!.nextPageToken).not.toBe('');
    expect(pages[1]!.nextPageToken).not.toBe('');
    expect(pages[2]!.nextPageToken).toBe('');
    const walked = pages.flatMap((p) => p.tasks.map((t) => t.id));
    expect(walked).toStrictEqual(context.tasks.map((t) => t.id).reverse());
  });

  it('§10.7: a full cursor walk over every task of the agent has no duplicates, is newest first and matches totalSize', async () => {
    const seen: WireTask[] = [];
    let pageToken = '';
    let totalSize = -1;
    for (let page = 0; page < 200; page++) {
      const { wire } = await list({ pageSize: 3, pageToken });
      totalSize = wire.totalSize;
      seen.push(...wire.tasks);
      pageToken = wire.nextPageToken;
      if (pageToken === '') {
        break;
      }
    }
    expect(pageToken).toBe('');
    expect(seen).toHaveLength(totalSize);
    expect(new Set(seen.map((t) => t.id)).size).toBe(totalSize);
    const stamps = seen.map((t) => Date.parse(t.status.timestamp!));
    expect(stamps).toStrictEqual([...stamps].sort((a, b) => b - a));
  });

  it('§10.7: filters contextId, status and statusTimestampAfter, alone and combined', async () => {
    // A context on interview with one task in each of three states.
    const contextId = `ctx-filter-${randomUUID()}`;
    const waiting = asTask(
      await interview.client.sendMessage(sendRequest(rawUserMessage('a', { contextId }))),
    );
    const answered = asTask(
      await interview.client.sendMessage(sendRequest(rawUserMessage('b', { contextId }))),
    );
    await interview.client.sendMessage(sendRequest(rawUserMessage('Bo', { taskId: answered.id })));
    const dropped = asTask(
      await interview.client.sendMessage(sendRequest(rawUserMessage('c', { contextId }))),
    );
    await interview.client.cancelTask(CancelTaskRequest.fromJSON({ id: dropped.id }));

    const ids = async (params: Record<string, unknown>): Promise<string[]> => {
      const result = await interview.client.listTasks(ListTasksRequest.fromJSON(params));
      expect(result.totalSize).toBe(result.tasks.length);
      return result.tasks.map((t: Task) => t.id);
    };
    expect(await ids({ contextId })).toStrictEqual([dropped.id, answered.id, waiting.id]);
    expect(await ids({ contextId, status: 'TASK_STATE_INPUT_REQUIRED' })).toStrictEqual([
      waiting.id,
    ]);
    expect(await ids({ contextId, status: 'TASK_STATE_COMPLETED' })).toStrictEqual([answered.id]);
    expect(await ids({ contextId, status: 'TASK_STATE_CANCELED' })).toStrictEqual([dropped.id]);
    expect(await ids({ contextId, status: 'TASK_STATE_WORKING' })).toStrictEqual([]);
    const noWorking = wireResult<ListTasksResponse>(interview);
    expect(noWorking).toMatchObject({ tasks: [], nextPageToken: '', totalSize: 0 });
    // Every COMPLETED interview task of the caller, whatever its context, and nothing else.
    const completed = await ids({ status: 'TASK_STATE_COMPLETED', pageSize: 100 });
    expect(completed).toContain(answered.id);
    expect(completed).toContain(fixtures.completedInterview.id);
    expect(completed).not.toContain(waiting.id);

    // statusTimestampAfter keeps tasks whose status timestamp is ≥ the instant (echo context: 5 tasks).
    const byTime = [...context.tasks].sort(
      (a, b) => Date.parse(b.status.timestamp!) - Date.parse(a.status.timestamp!),
    );
    const after = byTime[2]!.status.timestamp!;
    const expected = byTime
      .filter((t) => Date.parse(t.status.timestamp!) >= Date.parse(after))
      .map((t) => t.id);
    expect(expected.length).toBeGreaterThanOrEqual(3);
    expect(expected.length).toBeLessThan(5);
    const sinceIds = async (params: Record<string, unknown>): Promise<string[]> => {
      const { sdk } = await list(params);
      return sdk.tasks.map((t: Task) => t.id);
    };
    expect(
      await sinceIds({ contextId: context.contextId, statusTimestampAfter: after }),
    ).toStrictEqual(expected);
    expect(
      await sinceIds({
        contextId: context.contextId,
        statusTimestampAfter: after,
        status: 'TASK_STATE_COMPLETED',
      }),
    ).toStrictEqual(expected);
    expect(
      await sinceIds({
        contextId: context.contextId,
        statusTimestampAfter: after,
        status: 'TASK_STATE_CANCELED',
      }),
    ).toStrictEqual([]);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect(
      await sinceIds({ contextId: context.contextId, statusTimestampAfter: future }),
    ).toStrictEqual([]);
  });

  it('§10.7: artifacts are absent unless includeArtifacts is true; historyLength applies per task', async () => {
    const { wire: plain } = await list({ contextId: context.contextId });
    expect(plain.tasks).toHaveLength(5);
    for (const task of plain.tasks) {
      expect(task).not.toHaveProperty('artifacts');
      expect(task.history).toHaveLength(1);
    }
    const { wire: explicitFalse } = await list({
      contextId: context.contextId,
      includeArtifacts: false,
    });
    explicitFalse.tasks.forEach((task) => expect(task).not.toHaveProperty('artifacts'));
    const { sdk, wire: withArtifacts } = await list({
      contextId: context.contextId,
      includeArtifacts: true,
    });
    for (const task of withArtifacts.tasks) {
      expect(task.artifacts?.map((a) => a.artifactId)).toStrictEqual(['echo']);
    }
    expect(sdk.tasks.map((t: Task) => textOf(t.artifacts[0]?.parts))).toStrictEqual([
      'list 5',
      'list 4',
      'list 3',
      'list 2',
      'list 1',
    ]);
    const { wire: noHistory } = await list({ contextId: context.contextId, historyLength: 0 });
    noHistory.tasks.forEach((task) => expect(task).not.toHaveProperty('history'));
  });
});

// ---------------------------------------------------------------------------------------------------------
// Raw requests: wire rules the SDK would hide or refuse to send.

interface BadCase {
  title: string;
  agent?: ExampleAgentId;
  body: (f: Fixtures) => unknown;
  options?: RawOptions;
  expected: (f: Fixtures) => ExpectedError;
  check?: (reply: RpcReply) => void;
}

const invalidParams = (id: string | number, field: string): ExpectedError => ({
  code: -32602,
  reason: 'INVALID_PARAMS',
  domain: PLATFORM_DOMAIN,
  id,
  field,
});
const oversized = (): string =>
  JSON.stringify(
    request('SendMessage', { message: rawUserMessage('x'.repeat(MAX_BODY_BYTES + 10)) }, 'big'),
  );

const BAD_CASES: BadCase[] = [
  {
    title:
      '§6/§9.1: a part whose media type the agent does not accept → -32005 CONTENT_TYPE_NOT_SUPPORTED',
    body: () =>
      request(
        'SendMessage',
        { message: rawUserMessage('x', { parts: [{ raw: 'iVBORw0K', mediaType: 'image/png' }] }) },
        'ct-1',
      ),
    expected: () => ({
      code: -32005,
      reason: 'CONTENT_TYPE_NOT_SUPPORTED',
      domain: A2A_DOMAIN,
      id: 'ct-1',
    }),
  },
  {
    title: '§13: params that are a string, not an object → -32602',
    body: () => ({ jsonrpc: '2.0', id: 'scalar', method: 'GetTask', params: 'x' }),
    expected: () => invalidParams('scalar', 'params'),
  },
  {
    title: '§10.13/§8.3: no API key → HTTP 401 with WWW-Authenticate, -32000 UNAUTHENTICATED',
    body: () => request('GetTask', { id: 'x' }, 'auth-1'),
    options: { apiKey: null },
    expected: () => ({
      http: 401,
      code: -32000,
      reason: 'UNAUTHENTICATED',
      domain: PLATFORM_DOMAIN,
      id: 'auth-1',
    }),
    check: (reply) => expect(reply.headers.get('www-authenticate')).toMatch(/X-API-Key/),
  },
  {
    title: '§10.13: a wrong API key → HTTP 401 with WWW-Authenticate',
    body: () => request('GetTask', { id: 'x' }, 'auth-2'),
    options: { apiKey: 'not-the-key' },
    expected: () => ({
      http: 401,
      code: -32000,
      reason: 'UNAUTHENTICATED',
      domain: PLATFORM_DOMAIN,
      id: 'auth-2',
    }),
    check: (reply) => expect(reply.headers.get('www-authenticate')).toMatch(/X-API-Key/),
  },
  {
    title: '§10.1: no A2A-Version header means 0.3 → -32009 VERSION_NOT_SUPPORTED',
    body: () => request('GetTask', { id: 'x' }, 'ver-1'),
    options: { version: null },
    expected: () => ({
      code: -32009,
      reason: 'VERSION_NOT_SUPPORTED',
      domain: A2A_DOMAIN,
      id: 'ver-1',
    }),
  },
  {
    title: '§10.1/§13: A2A-Version 0.5 → -32009 VERSION_NOT_SUPPORTED',
    body: () => request('GetTask', { id: 'x' }, 'ver-2'),
    options: { version: '0.5' },
    expected: () => ({
      code: -32009,
      reason: 'VERSION_NOT_SUPPORTED',
      domain: A2A_DOMAIN,
      id: 'ver-2',
    }),
  },
  {
    title: '§10.1: A2A-Version 0.3 → -32009 VERSION_NOT_SUPPORTED',
    body: () => request('SendMessage', { message: rawUserMessage('old') }, 'ver-3'),
    options: { version: '0.3' },
    expected: () => ({
      code: -32009,
      reason: 'VERSION_NOT_SUPPORTED',
      domain: A2A_DOMAIN,
      id: 'ver-3',
    }),
  },
  {
    title: '§7.4: malformed JSON → -32700 with id null',
    body: () => '{"jsonrpc":"2.0","id":1,"method":"GetTask",',
    expected: () => ({ code: -32700, reason: 'PARSE_ERROR', domain: PLATFORM_DOMAIN, id: null }),
  },
  {
    title: '§7.4: jsonrpc "1.0" → -32600 with the id echoed',
    body: () => ({ jsonrpc: '1.0', id: 41, method: 'GetTask', params: { id: 'x' } }),
    expected: () => ({
      code: -32600,
      reason: 'INVALID_REQUEST',
      domain: PLATFORM_DOMAIN,
      id: 41,
      field: 'jsonrpc',
    }),
  },
  {
    title: '§13: a missing method → -32600',
    body: () => ({ jsonrpc: '2.0', id: 'no-method', params: {} }),
    expected: () => ({
      code: -32600,
      reason: 'INVALID_REQUEST',
      domain: PLATFORM_DOMAIN,
      id: 'no-method',
      field: 'method',
    }),
  },
  {
    title: '§13: a non-scalar id → -32600 with id null',
    body: () => ({ jsonrpc: '2.0', id: { a: 1 }, method: 'GetTask', params: { id: 'x' } }),
    expected: () => ({
      code: -32600,
      reason: 'INVALID_REQUEST',
      domain: PLATFORM_DOMAIN,
      id: null,
      field: 'id',
    }),
  },
  {
    title: '§7.2: an unknown method → -32601',
    body: () => request('DoSomethingElse', {}, 'm-1'),
    expected: () => ({
      code: -32601,
      reason: 'METHOD_NOT_FOUND',
      domain: PLATFORM_DOMAIN,
      id: 'm-1',
    }),
  },
  {
    title: '§7.2/§11: the 0.3 method name message/send → -32601',
    body: () => request('message/send', { message: rawUserMessage('old') }, 'm-2'),
    expected: () => ({
      code: -32601,
      reason: 'METHOD_NOT_FOUND',
      domain: PLATFORM_DOMAIN,
      id: 'm-2',
    }),
  },
  {
    title: '§7.2/§11: the 0.3 method name tasks/get → -32601',
    body: () => request('tasks/get', { id: 'x' }, 'm-3'),
    expected: () => ({
      code: -32601,
      reason: 'METHOD_NOT_FOUND',
      domain: PLATFORM_DOMAIN,
      id: 'm-3',
    }),
  },
  {
    title: '§7.1: params as an array → -32602',
    body: () => ({ jsonrpc: '2.0', id: 'p-0', method: 'GetTask', params: ['x'] }),
    expected: () => invalidParams('p-0', 'params'),
  },
  {
    title: '§13: SendMessage without message → -32602 naming message',
    body: () => request('SendMessage', {}, 'p-1'),
    expected: () => invalidParams('p-1', 'message'),
  },
  {
    title: '§13: parts not an array → -32602 naming message.parts',
    body: () =>
      request(
        'SendMessage',
        { message: { messageId: 'p2', role: 'ROLE_USER', parts: { text: 'x' } } },
        'p-2',
      ),
    expected: () => invalidParams('p-2', 'message.parts'),
  },
  {
    title: '§4.1: an empty parts array → -32602 naming message.parts',
    body: () =>
      request('SendMessage', { message: { messageId: 'p3', role: 'ROLE_USER', parts: [] } }, 'p-3'),
    expected: () => invalidParams('p-3', 'message.parts'),
  },
  {
    title: '§5: an invalid role enum → -32602 naming message.role',
    body: () =>
      request('SendMessage', { message: rawUserMessage('x', { role: 'ROLE_BOSS' }) }, 'p-4'),
    expected: () => invalidParams('p-4', 'message.role'),
  },
  {
    title: '§3/§11: the 0.3 lowercase role "user" → -32602 naming message.role',
    body: () => request('SendMessage', { message: rawUserMessage('x', { role: 'user' }) }, 'p-5'),
    expected: () => invalidParams('p-5', 'message.role'),
  },
  {
    title: '§3: raw bytes that are not base64 → -32602 naming message.parts[0].raw',
    body: () =>
      request(
        'SendMessage',
        { message: rawUserMessage('x', { parts: [{ raw: '***not base64***' }] }) },
        'p-6',
      ),
    expected: () => invalidParams('p-6', 'message.parts[0].raw'),
  },
  {
    title: '§4.1: a part with two oneof members → -32602 naming message.parts[0]',
    body: () =>
      request(
        'SendMessage',
        { message: rawUserMessage('x', { parts: [{ text: 'a', url: 'https://x.test/a' }] }) },
        'p-7',
      ),
    expected: () => invalidParams('p-7', 'message.parts[0]'),
  },
  {
    title: '§4.1: a client message with ROLE_AGENT → -32602 naming message.role',
    body: () =>
      request('SendMessage', { message: rawUserMessage('x', { role: 'ROLE_AGENT' }) }, 'p-8'),
    expected: () => invalidParams('p-8', 'message.role'),
  },
  {
    title: '§10.5: a negative configuration.historyLength → -32602',
    body: () =>
      request(
        'SendMessage',
        { message: rawUserMessage('x'), configuration: { historyLength: -1 } },
        'p-9',
      ),
    expected: () => invalidParams('p-9', 'configuration.historyLength'),
  },
  {
    title: '§10.9: a tenant on an interface that declares none → -32602 naming tenant',
    body: () => request('GetTask', { id: 'x', tenant: 'demo' }, 'p-10'),
    expected: () => invalidParams('p-10', 'tenant'),
  },
  {
    title: '§10.7: ListTasks pageSize 0 → -32602',
    body: () => request('ListTasks', { pageSize: 0 }, 'l-1'),
    expected: () => invalidParams('l-1', 'pageSize'),
  },
  {
    title: '§10.7: ListTasks pageSize 101 → -32602',
    body: () => request('ListTasks', { pageSize: 101 }, 'l-2'),
    expected: () => invalidParams('l-2', 'pageSize'),
  },
  {
    title: '§10.7: ListTasks negative pageSize → -32602',
    body: () => request('ListTasks', { pageSize: -5 }, 'l-3'),
    expected: () => invalidParams('l-3', 'pageSize'),
  },
  {
    title: '§10.7: ListTasks with a 0.3 status spelling → -32602',
    body: () => request('ListTasks', { status: 'completed' }, 'l-4'),
    expected: () => invalidParams('l-4', 'status'),
  },
  {
    title: '§10.7: ListTasks with a garbage pageToken → -32602',
    body: () => request('ListTasks', { pageToken: 'not-a-token-at-all!' }, 'l-5'),
    expected: () => invalidParams('l-5', 'pageToken'),
  },
  {
    title: '§10.7: ListTasks with a bad statusTimestampAfter → -32602',
    body: () => request('ListTasks', { statusTimestampAfter: 'yesterday' }, 'l-6'),
    expected: () => invalidParams('l-6', 'statusTimestampAfter'),
  },
  {
    title: '§10.7: ListTasks with an impossible date → -32602',
    body: () => request('ListTasks', { statusTimestampAfter: '2026-13-45T00:00:00Z' }, 'l-7'),
    expected: () => invalidParams('l-7', 'statusTimestampAfter'),
  },
  {
    title: '§10.5: ListTasks negative historyLength → -32602',
    body: () => request('ListTasks', { historyLength: -1 }, 'l-8'),
    expected: () => invalidParams('l-8', 'historyLength'),
  },
  {
    title: '§10.5: GetTask negative historyLength → -32602',
    body: (f) => request('GetTask', { id: f.completedEcho.id, historyLength: -1 }, 'g-1'),
    expected: () => invalidParams('g-1', 'historyLength'),
  },
  {
    title: '§4.3: GetTask without id → -32602',
    body: () => request('GetTask', {}, 'g-2'),
    expected: () => invalidParams('g-2', 'id'),
  },
  {
    title: '§13: GetTask of an unknown id → -32001 TASK_NOT_FOUND',
    body: () => request('GetTask', { id: 'no-such-task' }, 'g-3'),
    expected: () => ({
      code: -32001,
      reason: 'TASK_NOT_FOUND',
      domain: A2A_DOMAIN,
      id: 'g-3',
      metadata: { taskId: 'no-such-task' },
    }),
  },
  {
    title: '§10.8: CancelTask of an unknown id → -32001',
    body: () => request('CancelTask', { id: 'no-such-task' }, 'c-1'),
    expected: () => ({ code: -32001, reason: 'TASK_NOT_FOUND', domain: A2A_DOMAIN, id: 'c-1' }),
  },
  {
    title: '§10.3: SendMessage continuing an unknown taskId → -32001',
    body: () =>
      request('SendMessage', { message: rawUserMessage('x', { taskId: 'no-such-task' }) }, 's-1'),
    expected: () => ({ code: -32001, reason: 'TASK_NOT_FOUND', domain: A2A_DOMAIN, id: 's-1' }),
  },
  {
    title: '§10.3: a message to a COMPLETED task → -32004 UNSUPPORTED_OPERATION',
    body: (f) =>
      request(
        'SendMessage',
        { message: rawUserMessage('more', { taskId: f.completedEcho.id }) },
        's-2',
      ),
    expected: (f) => ({
      code: -32004,
      reason: 'UNSUPPORTED_OPERATION',
      domain: A2A_DOMAIN,
      id: 's-2',
      metadata: { taskId: f.completedEcho.id },
    }),
  },
  {
    title: '§10.8: cancel of a COMPLETED task → -32002 TASK_NOT_CANCELABLE',
    body: (f) => request('CancelTask', { id: f.completedEcho.id }, 'c-2'),
    expected: (f) => ({
      code: -32002,
      reason: 'TASK_NOT_CANCELABLE',
      domain: A2A_DOMAIN,
      id: 'c-2',
      metadata: { taskId: f.completedEcho.id },
    }),
  },
  {
    title: '§10.3: continuing a task with another contextId → -32602 naming message.contextId',
    agent: 'interview',
    body: (f) =>
      request(
        'SendMessage',
        {
          message: rawUserMessage('Bob', {
            taskId: f.waitingInterview.id,
            contextId: `other-${randomUUID()}`,
          }),
        },
        's-3',
      ),
    expected: () => invalidParams('s-3', 'message.contextId'),
  },
  {
    title: '§10.6: SubscribeToTask on a terminal task → -32004 before any stream',
    body: (f) => request('SubscribeToTask', { id: f.completedEcho.id }, 'x-2'),
    expected: () => ({
      code: -32004,
      reason: 'UNSUPPORTED_OPERATION',
      domain: A2A_DOMAIN,
      id: 'x-2',
    }),
  },
  {
    title: '§10.6: SubscribeToTask on an unknown task → -32001 before any stream',
    body: () => request('SubscribeToTask', { id: 'no-such-task' }, 'x-3'),
    expected: () => ({ code: -32001, reason: 'TASK_NOT_FOUND', domain: A2A_DOMAIN, id: 'x-3' }),
  },
  {
    title: '§10.6: SendStreamingMessage with invalid params → -32602 before any stream',
    body: () => request('SendStreamingMessage', { message: { role: 'ROLE_USER' } }, 'x-4'),
    expected: () => invalidParams('x-4', 'message.messageId'),
  },
  ...(
    [
      ['CreateTaskPushNotificationConfig', { taskId: 'x', url: 'https://hooks.example/a2a' }],
      ['GetTaskPushNotificationConfig', { taskId: 'x', id: 'cfg' }],
      ['ListTaskPushNotificationConfigs', { taskId: 'x' }],
      ['DeleteTaskPushNotificationConfig', { taskId: 'x', id: 'cfg' }],
    ] as const
  ).map(
    ([method, p], i): BadCase => ({
      title: `§6 (capability gating): ${method} without pushNotifications → -32003`,
      body: () => request(method, p, `push-${i}`),
      expected: () => ({
        code: -32003,
        reason: 'PUSH_NOTIFICATION_NOT_SUPPORTED',
        domain: A2A_DOMAIN,
        id: `push-${i}`,
      }),
    }),
  ),
  {
    title: '§10.11: GetExtendedAgentCard (no params) without the capability → -32004',
    agent: 'countdown',
    body: () => request('GetExtendedAgentCard', undefined, 'x-3'),
    expected: () => ({
      code: -32004,
      reason: 'UNSUPPORTED_OPERATION',
      domain: A2A_DOMAIN,
      id: 'x-3',
    }),
  },
  {
    title: 'MAX_BODY_BYTES: a body over the limit (Content-Length) → HTTP 413',
    body: oversized,
    expected: () => ({
      http: 413,
      code: -32602,
      reason: 'PAYLOAD_TOO_LARGE',
      domain: PLATFORM_DOMAIN,
      id: null,
    }),
  },
  {
    title: 'MAX_BODY_BYTES: a chunked body over the limit → HTTP 413',
    body: oversized,
    options: { chunked: true },
    expected: () => ({
      http: 413,
      code: -32602,
      reason: 'PAYLOAD_TOO_LARGE',
      domain: PLATFORM_DOMAIN,
      id: null,
    }),
  },
];

const sendBad = (c: BadCase): Promise<RpcReply> =>
  rawRpc(url(c.agent ?? 'echo'), c.body(fixtures), c.options);

describe('raw JSON-RPC: envelope, versioning, authentication and A2A errors (§7, §9, §10.1, §13)', () => {
  for (const c of BAD_CASES) {
    it(c.title, async () => {
      const reply = await sendBad(c);
      expectRpcError(reply, c.expected(fixtures));
      c.check?.(reply);
    });
  }

  it('§10.1: A2A-Version 1.0.3 is accepted as 1.0 (the patch is not considered)', async () => {
    const reply = await rawRpc(
      url('echo'),
      request('GetTask', { id: fixtures.completedEcho.id }, 7),
      {
        version: '1.0.3',
      },
    );
    expect(taskResult(reply, 7).id).toBe(fixtures.completedEcho.id);
  });

  it('§7.4: responses echo string and numeric ids, including 0', async () => {
    for (const id of ['text-id', 0, 12345]) {
      const reply = await rawRpc(
        url('echo'),
        request('GetTask', { id: fixtures.completedEcho.id }, id),
      );
      expect(taskResult(reply, id).id).toBe(fixtures.completedEcho.id);
    }
  });

  it('§3: snake_case field names are accepted (history_length, message_id, return_immediately)', async () => {
    const none = taskResult(
      await rawRpc(
        url('interview'),
        request('GetTask', { id: fixtures.completedInterview.id, history_length: 0 }, 's1'),
      ),
      's1',
    );
    expect(none).not.toHaveProperty('history');
    const one = taskResult(
      await rawRpc(
        url('interview'),
        request('GetTask', { id: fixtures.completedInterview.id, history_length: 1 }, 's2'),
      ),
      's2',
    );
    expect(one.history?.map((m) => m.parts[0]?.text)).toStrictEqual(['Grace']);
    const sent = sentTask(
      await rawRpc(
        url('echo'),
        request(
          'SendMessage',
          {
            message: {
              message_id: `snake-${randomUUID()}`,
              role: 'ROLE_USER',
              parts: [{ text: 'snake' }],
            },
            configuration: { return_immediately: false, history_length: 0 },
          },
          's3',
        ),
      ),
      's3',
    );
    expect(sent.status.state).toBe('TASK_STATE_COMPLETED');
    expect(sent).not.toHaveProperty('history');
    expect(sent.artifacts?.[0]?.parts[0]?.text).toBe('snake');
  });

  it('§3: unknown fields are ignored (0.3 `kind`, `blocking`, extra members)', async () => {
    const sent = sentTask(
      await rawRpc(
        url('echo'),
        request(
          'SendMessage',
          {
            somethingNew: { nested: true },
            message: {
              kind: 'message',
              messageId: `unknown-${randomUUID()}`,
              role: 'ROLE_USER',
              parts: [{ kind: 'text', text: 'still fine', futureField: 1 }],
            },
            configuration: { blocking: false, notAField: 'x' },
          },
          'u1',
        ),
      ),
      'u1',
    );
    // `blocking` is not a 1.0 field: the default (blocking) applies.
    expect(sent.status.state).toBe('TASK_STATE_COMPLETED');
    expect(sent.artifacts?.[0]?.parts[0]?.text).toBe('still fine');
  });

  it('MAX_BODY_BYTES: a body just under the limit is served', async () => {
    const text = 'y'.repeat(MAX_BODY_BYTES - 1_000);
    const body = JSON.stringify(request('SendMessage', { message: rawUserMessage(text) }, 'near'));
    expect(Buffer.byteLength(body)).toBeLessThan(MAX_BODY_BYTES);
    const sent = sentTask(await rawRpc(url('echo'), body), 'near');
    expect(sent.artifacts?.[0]?.parts[0]?.text).toBe(text);
  });

  it('§10.13 ("input validation before processing"): a batch of every bad request above changes nothing', async () => {
    const pool = platform.db.pool;
    const snapshot = async () => ({
      counts: await writeCounts(pool),
      echo: expectRpcResult(
        await rawRpc(url('echo'), request('GetTask', { id: fixtures.completedEcho.id })),
      ),
      waiting: expectRpcResult(
        await rawRpc(url('interview'), request('GetTask', { id: fixtures.waitingInterview.id })),
      ),
    });
    const before = await snapshot();
    expect(before.counts.work).toBe(0);
    for (const c of BAD_CASES) {
      const reply = await sendBad(c);
      expect(reply.json.error?.code, c.title).toBe(c.expected(fixtures).code);
    }
    const after = await snapshot();
    expect(after).toStrictEqual(before);
  });
});

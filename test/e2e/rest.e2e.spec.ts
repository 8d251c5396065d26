/**
 * The HTTP+JSON/REST binding end to end (spec digest §8, §8.2 query rules, §8.3 errors, §8.4 streaming, §9.1
 * v1.0.1 statuses, §10, §12 #1), against the built standalone platform with its example workers, with plain
 * `fetch`. Every route is exercised on the three ways to reach an agent: its own base URL, the same with the
 * `/{tenant}` prefix, and the tenant-routed `/a2a/rest/{tenant}` base. What every binding must do alike is in
 * conformance/conformance.e2e.spec.ts, run on HTTP+JSON too; here are the rules of this binding: routes,
 * HTTP methods and statuses, headers, query parameters, bodies and their media types, SSE framing.
 */
import type {
  AgentCard,
  ListTasksResponse,
  SendMessageResponse,
  StreamResponse,
  Task,
} from '@lib/a2a-protocol';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawUserMessage } from './support/json-rpc';
import { bootStandalone, seedAcme, type Standalone } from './support/platform';
import {
  expectRestError,
  openRestSse,
  rest,
  restBaseUrl,
  restResult,
  streamResponseOf,
  type RestOptions,
} from './support/rest';
import { generationOf, kindOf, type SseConnection, type SseFrame } from './support/sse';
import { A2A_DOMAIN, PLATFORM_DOMAIN } from './support/wire';

const MAX_BODY_BYTES = 65_536;
const RESUMABLE = 'https://a2a-platform.dev/extensions/resumable-streams/v1';
const ACME_KEY = `acme-key-${randomUUID()}`;
const TERMINAL = ['TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED'];

let platform: Standalone;
/** A settled task made once for the whole file. */
let completedEcho: Task;

type Base = 'per-agent' | 'per-agent with /{tenant}' | '/a2a/rest/{tenant}';
const BASES: readonly Base[] = ['per-agent', 'per-agent with /{tenant}', '/a2a/rest/{tenant}'];

/** The HTTP+JSON base URL of a demo agent, reached one of the three ways. */
function base(agent: string, kind: Base = 'per-agent'): string {
  switch (kind) {
    case 'per-agent':
      return restBaseUrl(platform.baseUrl, 'demo', agent);
    case 'per-agent with /{tenant}':
      return restBaseUrl(platform.baseUrl, 'demo', agent, 'agent-url', `demo/${agent}`);
    case '/a2a/rest/{tenant}':
      return restBaseUrl(platform.baseUrl, 'demo', agent, 'tenant', `demo/${agent}`);
  }
}

async function send(url: string, body: unknown, options: RestOptions = {}): Promise<Task> {
  const result = restResult<SendMessageResponse>(
    await rest('POST', `${url}/message:send`, { body, ...options }),
  );
  if (!('task' in result)) {
    throw new Error(`expected {"task":…}, got ${JSON.stringify(result)}`);
  }
  return result.task;
}

/** A countdown of `n` steps of `stepMs`, started without waiting for it. */
function startCountdown(url: string, n: number, stepMs: number): Promise<Task> {
  return send(url, {
    message: rawUserMessage(String(n), { metadata: { stepMs } }),
    configuration: { returnImmediately: true },
  });
}

async function getTask(url: string, id: string, query = ''): Promise<Task> {
  return restResult<Task>(await rest('GET', `${url}/tasks/${id}${query}`));
}

async function list(
  url: string,
  query: string,
  options: RestOptions = {},
): Promise<ListTasksResponse> {
  return restResult<ListTasksResponse>(await rest('GET', `${url}/tasks?${query}`, options));
}

const taskIdOf = (response: StreamResponse): string | undefined =>
  'statusUpdate' in response
    ? response.statusUpdate.taskId
    : 'artifactUpdate' in response
      ? response.artifactUpdate.taskId
      : undefined;

const stateOfFrame = (response: StreamResponse): string | undefined =>
  'task' in response
    ? response.task.status.state
    : 'statusUpdate' in response
      ? response.statusUpdate.status.state
      : undefined;

/**
 * Reads a stream to its end and checks the REST stream rules (§8.4, §10.6): text/event-stream, bare
 * StreamResponse frames with increasing `id:` generations, the task first, every event for that task, the
 * last one a status update in `lastState`, then the server closes.
 */
async function expectTaskStream(
  stream: SseConnection,
  lastState: string,
): Promise<{ task: Task; responses: StreamResponse[] }> {
  expect(stream.status, await describeFailure(stream)).toBe(200);
  expect(stream.contentType).toMatch(/^text\/event-stream/);
  const frames: SseFrame[] = await stream.collect();
  expect(stream.ended).toBe(true);
  const responses = frames.map(streamResponseOf);
  expect(frames.every((f) => f.event === null)).toBe(true);
  const ids = frames.map(generationOf);
  expect(ids).toStrictEqual([...ids].sort((a, b) => a - b));
  expect(new Set(ids).size).toBe(ids.length);
  const [first, ...updates] = responses;
  if (!first || !('task' in first)) {
    throw new Error(`the first event must be the task: ${JSON.stringify(responses)}`);
  }
  const task = first.task;
  for (const update of updates) {
    expect(['statusUpdate', 'artifactUpdate']).toContain(kindOf(update));
    expect(taskIdOf(update)).toBe(task.id);
  }
  const last = responses[responses.length - 1]!;
  expect(stateOfFrame(last)).toBe(lastState);
  return { task, responses };
}

async function describeFailure(stream: SseConnection): Promise<string> {
  return stream.isEventStream ? 'event stream' : `${stream.status} ${await stream.text()}`;
}

beforeAll(async () => {
  platform = await bootStandalone('e2e_rest', { MAX_BODY_BYTES: String(MAX_BODY_BYTES) });
  // A second tenant with an agent of the same name, for the cross-tenant cases (no worker needed).
  await seedAcme(platform.db.pool, ACME_KEY);
  completedEcho = await send(base('echo'), { message: rawUserMessage('fixture') });
  expect(completedEcho.status.state).toBe('TASK_STATE_COMPLETED');
});

afterAll(async () => {
  await platform?.close();
});

describe.each(BASES)('every route on the %s base URL (§8.2)', (kind) => {
  it('POST /message:send returns 200 application/a2a+json {"task":…} COMPLETED with the echo artifact', async () => {
    const reply = await rest('POST', `${base('echo', kind)}/message:send`, {
      body: { message: rawUserMessage(`hello ${kind}`) },
    });
    const result = restResult<SendMessageResponse>(reply);
    expect(Object.keys(result)).toStrictEqual(['task']);
    const task = (result as { task: Task }).task;
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(task.artifacts?.[0]).toMatchObject({
      artifactId: 'echo',
      parts: [{ text: `hello ${kind}` }],
    });
    expect(reply.text).not.toContain('"kind"');
  });

  it('GET /tasks/{id} returns the bare Task; GET /tasks lists it', async () => {
    const task = await getTask(base('echo', kind), completedEcho.id);
    expect(task.id).toBe(completedEcho.id);
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    const page = await list(
      base('echo', kind),
      `contextId=${encodeURIComponent(completedEcho.contextId)}`,
    );
    expect(page).toMatchObject({ nextPageToken: '', pageSize: 50, totalSize: 1 });
    expect(page.tasks.map((t) => t.id)).toStrictEqual([completedEcho.id]);
  });

  it('POST /tasks/{id}:cancel with an empty body (no Content-Type) cancels a running countdown; again it is TASK_NOT_CANCELABLE (400)', async () => {
    const url = base('countdown', kind);
    const started = await startCountdown(url, 50, 200);
    const canceled = restResult<Task>(await rest('POST', `${url}/tasks/${started.id}:cancel`));
    expect(canceled.id).toBe(started.id);
    expect(canceled.status.state).toBe('TASK_STATE_CANCELED');
    expectRestError(
      await rest('POST', `${url}/tasks/${started.id}:cancel`, { body: { metadata: { why: 'x' } } }),
      {
        http: 400,
        status: 'FAILED_PRECONDITION',
        reason: 'TASK_NOT_CANCELABLE',
        domain: A2A_DOMAIN,
      },
    );
  });

  it('POST /message:stream streams the task, its updates and closes at COMPLETED (§8.4)', async () => {
    const stream = await openRestSse('POST', `${base('countdown', kind)}/message:stream`, {
      body: { message: rawUserMessage('3', { metadata: { stepMs: 30 } }) },
    });
    const { responses } = await expectTaskStream(stream, 'TASK_STATE_COMPLETED');
    const artifactTexts = responses.flatMap((r) =>
      'artifactUpdate' in r ? r.artifactUpdate.artifact.parts.map((p) => p.text) : [],
    );
    expect(artifactTexts).toStrictEqual(['3', '2', '1']);
  });

  it.each(['GET', 'POST'] as const)(
    '%s /tasks/{id}:subscribe streams the current task first, then updates, and closes at COMPLETED (§10.6, §12 #1)',
    async (method) => {
      const url = base('countdown', kind);
      const started = await startCountdown(url, 4, 150);
      const stream = await openRestSse(
        method,
        `${url}/tasks/${started.id}:subscribe`,
        method === 'POST' ? { body: {} } : {},
      );
      const { task } = await expectTaskStream(stream, 'TASK_STATE_COMPLETED');
      expect(task.id).toBe(started.id);
      expect(TERMINAL).not.toContain(task.status.state);
    },
  );

  it('the four pushNotificationConfigs routes: create (POST), get, list, delete (idempotent)', async () => {
    const tasks = `${base('echo', kind)}/tasks/${completedEcho.id}/pushNotificationConfigs`;
    const config = { id: `cfg-${randomUUID()}`, url: 'https://client.example/hook', token: 't' };
    const expected = { ...config, taskId: completedEcho.id };
    const created = await rest('POST', tasks, { body: config });
    expect([created.status, created.json]).toStrictEqual([200, expected]);
    const got = await rest('GET', `${tasks}/${config.id}`);
    expect([got.status, got.json]).toStrictEqual([200, expected]);
    const listed = await rest('GET', `${tasks}?pageSize=10`);
    expect([listed.status, listed.json]).toStrictEqual([200, { configs: [expected] }]);
    for (let time = 0; time < 2; time++) {
      const deleted = await rest('DELETE', `${tasks}/${config.id}`);
      expect([deleted.status, deleted.json]).toStrictEqual([200, {}]);
    }
    expectRestError(await rest('GET', `${tasks}/${config.id}`), {
      http: 404,
      status: 'NOT_FOUND',
      reason: 'TASK_NOT_FOUND',
      domain: A2A_DOMAIN,
    });
  });

  it.each(['echo', 'interview', 'countdown'])(
    'GET /extendedAgentCard of %s follows capabilities.extendedAgentCard of its public card',
    async (agent) => {
      const card = (await (
        await fetch(`${platform.baseUrl}/agents/demo/${agent}/.well-known/agent-card.json`)
      ).json()) as AgentCard;
      const reply = await rest('GET', `${base(agent, kind)}/extendedAgentCard`);
      if (card.capabilities.extendedAgentCard === true) {
        expect(restResult<AgentCard>(reply).name).toBe(card.name);
      } else {
        expectRestError(reply, {
          http: 400,
          status: 'FAILED_PRECONDITION',
          reason: 'UNSUPPORTED_OPERATION',
          domain: A2A_DOMAIN,
        });
      }
    },
  );
});

describe('query parameters (§8.2 "Query-parameter rules", §10.5, §10.7)', () => {
  it.each([
    ['historyLength=abc', 'historyLength'],
    ['historyLength=1.5', 'historyLength'],
    ['historyLength=', 'historyLength'],
    ['historyLength=%ZZ', 'historyLength'],
    ['historyLength=1&historyLength=2', 'historyLength'],
  ])('GET /tasks/{id}?%s is INVALID_PARAMS on %s (400)', async (query, field) => {
    expectRestError(await rest('GET', `${base('echo')}/tasks/${completedEcho.id}?${query}`), {
      http: 400,
      status: 'INVALID_ARGUMENT',
      reason: 'INVALID_PARAMS',
      domain: PLATFORM_DOMAIN,
      field,
    });
  });

  describe('GET /tasks', () => {
    const contextId = `rest list ${randomUUID()}`;
    const ctx = `contextId=${encodeURIComponent(contextId)}`;
    let before: string;

    beforeAll(async () => {
      before = new Date(Date.now() - 1_000).toISOString();
      for (const text of ['one', 'two', 'three']) {
        await send(base('echo'), { message: rawUserMessage(text, { contextId }) });
      }
    });

    it('contextId is read with form decoding: "+" is a space, %2B a plus sign', async () => {
      const plus = await list(base('echo'), `contextId=${contextId.replace(/ /g, '+')}`);
      expect(plus.totalSize).toBe(3);
      const literal = await list(base('echo'), `contextId=${encodeURIComponent(`${contextId}+`)}`);
      expect(literal.totalSize).toBe(0);
    });

    it('status filters by enum name or number; statusTimestampAfter by instant; unknown parameters are ignored', async () => {
      expect((await list(base('echo'), `${ctx}&status=TASK_STATE_COMPLETED`)).totalSize).toBe(3);
      expect((await list(base('echo'), `${ctx}&status=3`)).totalSize).toBe(3);
      expect((await list(base('echo'), `${ctx}&status=TASK_STATE_WORKING`)).totalSize).toBe(0);
      expect(
        (await list(base('echo'), `${ctx}&statusTimestampAfter=${encodeURIComponent(before)}`))
          .totalSize,
      ).toBe(3);
      expect(
        (await list(base('echo'), `${ctx}&statusTimestampAfter=2999-01-01T00:00:00Z`)).totalSize,
      ).toBe(0);
      expect((await list(base('echo'), `${ctx}&page_size=1&foo=bar`)).tasks).toHaveLength(3);
    });

    it.each([
      ['pageSize=ten', 'pageSize'],
      ['pageSize=0x10', 'pageSize'],
      ['status=completed', 'status'],
      ['status=99', 'status'],
      ['includeArtifacts=yes', 'includeArtifacts'],
      ['includeArtifacts=1', 'includeArtifacts'],
      ['contextId=a&contextId=b', 'contextId'],
      ['tenant=demo%2Fecho&tenant=demo%2Fecho', 'tenant'],
    ])('?%s is INVALID_PARAMS on %s (400)', async (query, field) => {
      expectRestError(await rest('GET', `${base('echo')}/tasks?${query}`), {
        http: 400,
        status: 'INVALID_ARGUMENT',
        reason: 'INVALID_PARAMS',
        domain: PLATFORM_DOMAIN,
        field,
      });
    });
  });

  it('GET …/pushNotificationConfigs?pageSize=x is INVALID_PARAMS', async () => {
    expectRestError(
      await rest(
        'GET',
        `${base('echo')}/tasks/${completedEcho.id}/pushNotificationConfigs?pageSize=x`,
      ),
      {
        http: 400,
        status: 'INVALID_ARGUMENT',
        reason: 'INVALID_PARAMS',
        domain: PLATFORM_DOMAIN,
        field: 'pageSize',
      },
    );
  });

  it('?tenant= is a tenant value: the agent own one is accepted, another is INVALID_PARAMS (§10.9)', async () => {
    const own = await getTask(
      base('echo'),
      completedEcho.id,
      `?tenant=${encodeURIComponent('demo/echo')}`,
    );
    expect(own.id).toBe(completedEcho.id);
    for (const url of [base('echo'), base('echo', '/a2a/rest/{tenant}')]) {
      expectRestError(
        await rest(
          'GET',
          `${url}/tasks/${completedEcho.id}?tenant=${encodeURIComponent('demo/interview')}`,
        ),
        {
          http: 400,
          status: 'INVALID_ARGUMENT',
          reason: 'INVALID_PARAMS',
          domain: PLATFORM_DOMAIN,
          field: 'tenant',
        },
      );
    }
  });
});

describe('request bodies (§8.1, §8.2)', () => {
  const sendUrl = (): string => `${base('echo')}/message:send`;
  const badRequest = (reason: string, field?: string) => ({
    http: 400,
    status: 'INVALID_ARGUMENT',
    reason,
    domain: PLATFORM_DOMAIN,
    ...(field ? { field } : {}),
  });

  it.each(['application/json', 'application/a2a+json', 'application/a2a+json; charset=utf-8'])(
    'Content-Type %s is accepted',
    async (contentType) => {
      const task = await send(base('echo'), { message: rawUserMessage('typed') }, { contentType });
      expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    },
  );

  it('another Content-Type, or none, on a body is UNSUPPORTED_MEDIA_TYPE (415)', async () => {
    for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', null]) {
      expectRestError(
        await rest('POST', sendUrl(), { body: { message: rawUserMessage('x') }, contentType }),
        { ...badRequest('UNSUPPORTED_MEDIA_TYPE'), http: 415 },
      );
    }
  });

  it('malformed JSON is PARSE_ERROR (400); a body that is not an object is INVALID_REQUEST (400)', async () => {
    expectRestError(
      await rest('POST', sendUrl(), { body: '{"message": ' }),
      badRequest('PARSE_ERROR'),
    );
    for (const body of ['[]', '"text"', '42', 'null']) {
      expectRestError(await rest('POST', sendUrl(), { body }), badRequest('INVALID_REQUEST'));
    }
  });

  it('the body is validated like JSON-RPC params: no message is INVALID_PARAMS on message', async () => {
    expectRestError(
      await rest('POST', sendUrl(), { body: {} }),
      badRequest('INVALID_PARAMS', 'message'),
    );
    expectRestError(await rest('POST', sendUrl()), badRequest('INVALID_PARAMS', 'message'));
  });

  it('a body above MAX_BODY_BYTES is PAYLOAD_TOO_LARGE (413)', async () => {
    const reply = await rest('POST', sendUrl(), {
      body: { message: rawUserMessage('x'.repeat(MAX_BODY_BYTES)) },
    });
    expectRestError(reply, {
      http: 413,
      status: 'RESOURCE_EXHAUSTED',
      reason: 'PAYLOAD_TOO_LARGE',
      domain: PLATFORM_DOMAIN,
    });
  });

  it('a path-bound field in the body with another value is INVALID_PARAMS on that field; the same value is accepted', async () => {
    const id = completedEcho.id;
    const url = base('echo');
    expectRestError(
      await rest('POST', `${url}/tasks/${id}:cancel`, { body: { id: 'other' } }),
      badRequest('INVALID_PARAMS', 'id'),
    );
    expectRestError(
      await rest('POST', `${url}/tasks/${id}:subscribe`, { body: { id: 'other' } }),
      badRequest('INVALID_PARAMS', 'id'),
    );
    for (const body of [
      { url: 'https://client.example/hook', taskId: 'other' },
      { url: 'https://client.example/hook', task_id: 'other' },
    ]) {
      expectRestError(
        await rest('POST', `${url}/tasks/${id}/pushNotificationConfigs`, { body }),
        badRequest('INVALID_PARAMS', 'taskId'),
      );
    }
    // The same id passes the binding and reaches the task rules: a completed task is not cancelable.
    expectRestError(await rest('POST', `${url}/tasks/${id}:cancel`, { body: { id } }), {
      http: 400,
      status: 'FAILED_PRECONDITION',
      reason: 'TASK_NOT_CANCELABLE',
      domain: A2A_DOMAIN,
    });
  });

  it('a body tenant must match the route: another agent is INVALID_PARAMS on tenant on both bases (§10.9)', async () => {
    const body = { message: rawUserMessage('x'), tenant: 'demo/interview' };
    for (const url of [base('echo'), base('echo', '/a2a/rest/{tenant}')]) {
      expectRestError(
        await rest('POST', `${url}/message:send`, { body }),
        badRequest('INVALID_PARAMS', 'tenant'),
      );
    }
    const same = await send(base('echo', '/a2a/rest/{tenant}'), {
      message: rawUserMessage('same tenant'),
      tenant: 'demo/echo',
    });
    expect(same.status.state).toBe('TASK_STATE_COMPLETED');
  });
});

describe('errors (§8.3, §9.1 v1.0.1)', () => {
  it('no or a wrong API key is UNAUTHENTICATED (401) with WWW-Authenticate', async () => {
    for (const apiKey of [null, 'wrong-key', ACME_KEY]) {
      for (const url of [base('echo'), base('echo', '/a2a/rest/{tenant}')]) {
        const reply = await rest('GET', `${url}/tasks/${completedEcho.id}`, { apiKey });
        expectRestError(reply, {
          http: 401,
          status: 'UNAUTHENTICATED',
          reason: 'UNAUTHENTICATED',
          domain: PLATFORM_DOMAIN,
        });
        expect(reply.headers.get('www-authenticate')).toBe(
          'ApiKey header="X-API-Key", Bearer realm="a2a"',
        );
      }
    }
  });

  it('unknown routes are METHOD_NOT_FOUND (404); a known path with another HTTP method is 405 with Allow', async () => {
    const url = base('echo');
    const notFound = {
      http: 404,
      status: 'NOT_FOUND',
      reason: 'METHOD_NOT_FOUND',
      domain: PLATFORM_DOMAIN,
    };
    for (const [method, path] of [
      ['POST', '/message:sned'],
      ['POST', '/message'],
      ['GET', '/tasks/'],
      ['GET', '/card'],
      ['GET', ''],
    ] as const) {
      expectRestError(await rest(method, `${url}${path}`), notFound);
    }
    // The tenant-routed base needs the tenant as one segment.
    expectRestError(
      await rest('GET', `${platform.baseUrl}/a2a/rest/demo/echo/tasks/${completedEcho.id}`),
      notFound,
    );
    for (const [method, path, allow] of [
      ['GET', '/message:send', 'POST'],
      ['DELETE', `/tasks/${completedEcho.id}`, 'GET'],
      ['PUT', `/tasks/${completedEcho.id}:subscribe`, 'GET, POST'],
      ['GET', `/tasks/${completedEcho.id}:cancel`, 'POST'],
    ] as const) {
      const reply = await rest(method, `${url}${path}`);
      expectRestError(reply, {
        http: 405,
        status: 'UNIMPLEMENTED',
        reason: 'METHOD_NOT_FOUND',
        domain: PLATFORM_DOMAIN,
      });
      expect(reply.headers.get('allow')).toBe(allow);
    }
  });

  it('an unknown agent is METHOD_NOT_FOUND (404); a tenant segment that names no agent, or another one, is INVALID_PARAMS (400)', async () => {
    expectRestError(await rest('GET', `${platform.baseUrl}/agents/demo/nobody/rest/tasks`), {
      http: 404,
      status: 'NOT_FOUND',
      reason: 'METHOD_NOT_FOUND',
      domain: PLATFORM_DOMAIN,
    });
    const wrongTenant = {
      http: 400,
      status: 'INVALID_ARGUMENT',
      reason: 'INVALID_PARAMS',
      domain: PLATFORM_DOMAIN,
      field: 'tenant',
    };
    expectRestError(await rest('GET', `${platform.baseUrl}/a2a/rest/demo/tasks`), wrongTenant);
    expectRestError(
      await rest('GET', `${base('echo')}/${encodeURIComponent('demo/interview')}/tasks`),
      wrongTenant,
    );
    // A 0.3-style /v1 prefix is read as the tenant segment, which does not name this agent.
    expectRestError(
      await rest('POST', `${base('echo')}/v1/message:send`, {
        body: { message: rawUserMessage('x') },
      }),
      wrongTenant,
    );
  });

  it('a task id with ":" is sent percent-encoded and is not read as a custom verb', async () => {
    const url = base('echo');
    expectRestError(await rest('GET', `${url}/tasks/${encodeURIComponent('a:cancel')}`), {
      http: 404,
      status: 'NOT_FOUND',
      reason: 'TASK_NOT_FOUND',
      domain: A2A_DOMAIN,
      metadata: { taskId: 'a:cancel' },
    });
  });

  it('a bad percent-escape in the path is refused with 400 in the google.rpc.Status shape, on every path', async () => {
    for (const [method, url] of [
      ['GET', `${base('echo')}/tasks/%ZZ`],
      ['POST', `${platform.baseUrl}/agents/demo/%E0%A4%A/jsonrpc`],
      ['GET', `${platform.baseUrl}/agents/demo/%ZZ/.well-known/agent-card.json`],
    ] as const) {
      expectRestError(await rest(method, url), {
        http: 400,
        status: 'INVALID_ARGUMENT',
        reason: 'INVALID_REQUEST',
        domain: PLATFORM_DOMAIN,
      });
    }
  });

  it('a path no binding serves is 404 in the google.rpc.Status shape', async () => {
    expectRestError(await rest('GET', `${platform.baseUrl}/nothing/here`), {
      http: 404,
      status: 'NOT_FOUND',
      reason: 'METHOD_NOT_FOUND',
      domain: PLATFORM_DOMAIN,
    });
  });
});

describe('streaming details (§8.4, §10.2, §10.6)', () => {
  it('with the resumable-streams extension, Last-Event-ID resumes after that generation, also for an ended task', async () => {
    const url = base('countdown');
    const full = await expectTaskStream(
      await openRestSse('POST', `${url}/message:stream`, {
        body: { message: rawUserMessage('2', { metadata: { stepMs: 20 } }) },
      }),
      'TASK_STATE_COMPLETED',
    );
    expect((await getTask(url, full.task.id)).status.state).toBe('TASK_STATE_COMPLETED');
    const resumed = await openRestSse('GET', `${url}/tasks/${full.task.id}:subscribe`, {
      headers: { 'A2A-Extensions': RESUMABLE, 'Last-Event-ID': '1' },
    });
    expect(resumed.status).toBe(200);
    const frames = await resumed.collect();
    expect(frames.length).toBeGreaterThan(0);
    expect(frames.every((f) => generationOf(f) > 1)).toBe(true);
    const responses = frames.map(streamResponseOf);
    expect(responses.some((r) => 'task' in r)).toBe(false);
    expect(stateOfFrame(responses[responses.length - 1]!)).toBe('TASK_STATE_COMPLETED');
  });
});

/**
 * What only the JSON-RPC binding has, end to end (spec digest §7, §10.1, §10.11, §13), against the built
 * standalone platform with its example workers: the agent card's JSONRPC interface and the official
 * `@a2a-js/sdk` client built from it, and the wire rules of the binding checked with raw `fetch` (envelope,
 * ids, method names, params shapes, ProtoJSON spellings, HTTP statuses, headers, body limits). What every
 * binding must do alike is in conformance/conformance.e2e.spec.ts, run on JSON-RPC too.
 */
import { GetTaskRequest } from '@a2a-js/sdk';
import type { Task as WireTask } from '@lib/a2a-protocol';
import { AGENT_PROFILES, type ExampleAgentId } from '@lib/worker-sdk';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  expectRpcError,
  expectRpcResult,
  rawRpc,
  rawUserMessage,
  request,
  sentTask,
  taskResult,
  type ExpectedError,
  type RawOptions,
  type RpcReply,
} from './support/json-rpc';
import { bootStandalone, writeCounts, type Standalone } from './support/platform';
import { apiKeyHeaderOf, sdkClientFromCard, type SdkAgent } from './support/sdk-client';
import { A2A_DOMAIN, PLATFORM_DOMAIN } from './support/wire';

const MAX_BODY_BYTES = 65_536;

/** Tasks made once for the whole file; every one of them is settled (terminal or waiting for input). */
interface Fixtures {
  completedEcho: WireTask;
  completedInterview: WireTask;
  waitingInterview: WireTask;
}

let platform: Standalone;
let fixtures: Fixtures;
let echo: SdkAgent;

const url = (agent: string): string => platform.endpoint('demo', agent);
const cardPath = (agent: string): string => `/agents/demo/${agent}/.well-known/agent-card.json`;

async function blockingSend(agent: string, text: string, extra: Record<string, unknown> = {}) {
  return sentTask(
    await rawRpc(url(agent), request('SendMessage', { message: rawUserMessage(text, extra) })),
  );
}

beforeAll(async () => {
  platform = await bootStandalone('e2e_jsonrpc', { MAX_BODY_BYTES: String(MAX_BODY_BYTES) });
  echo = await sdkClientFromCard(platform.baseUrl, cardPath('echo'), 'demo-key');
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
          pushNotifications: true,
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
    expect(echo.card.capabilities).toMatchObject({ streaming: true, pushNotifications: true });
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
    title: '§10.7: ListTasks with a 0.3 status spelling → -32602',
    body: () => request('ListTasks', { status: 'completed' }, 'l-4'),
    expected: () => invalidParams('l-4', 'status'),
  },
  {
    title: '§10.7: ListTasks with an impossible date → -32602',
    body: () => request('ListTasks', { statusTimestampAfter: '2026-13-45T00:00:00Z' }, 'l-7'),
    expected: () => invalidParams('l-7', 'statusTimestampAfter'),
  },
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

describe('raw JSON-RPC: envelope, ids, method names, params, ProtoJSON spellings, authentication headers and body limits (§3, §7, §10.13, §13)', () => {
  for (const c of BAD_CASES) {
    it(c.title, async () => {
      const reply = await sendBad(c);
      expectRpcError(reply, c.expected(fixtures));
      c.check?.(reply);
    });
  }

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

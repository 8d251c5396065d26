/**
 * One conformance table run against all three bindings (spec digest §2, §6–§10, §13 "Multi-transport
 * equivalence"): JSON-RPC, HTTP+JSON and gRPC on the standalone platform. Every expected value is written
 * here from the spec digest (the v1.0.1 column of §9.1, the JSON-RPC codes of §7.4), never read from the
 * platform's own mapping tables.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { A2A_DOMAIN, PLATFORM_DOMAIN } from '../support/json-rpc';
import { bootStandalone, type Standalone } from '../support/platform';
import {
  bindingClients,
  rawField,
  type BindingClient,
  type BindingName,
  type CallOptions,
  type CallOutcome,
  type ErrorOutcome,
  type StreamOutcome,
  type UnaryRpc,
} from './binding-clients';

const BINDINGS: readonly BindingName[] = ['JSONRPC', 'HTTP+JSON', 'GRPC'];
const REQUIRED_EXTENSION = 'https://example.com/ext/required/v1';
/** An agent of the demo tenant that declares REQUIRED_EXTENSION as required; no worker serves it. */
const STRICT_AGENT = 'strict';
/** An agent that declares an extended card but has none configured; no worker serves it. */
const UNCONFIGURED_AGENT = 'unconfigured';
/** An optional extension every example agent declares (see the agent cards). */
const RESUMABLE_STREAMS = 'https://a2a-platform.dev/extensions/resumable-streams/v1';

/** How each binding reports an error (spec digest §7.4, §8.3, §8b, §9.1 v1.0.1 column). */
interface SpecWire {
  jsonRpcCode: number;
  /** HTTP status of the JSON-RPC envelope. */
  jsonRpcHttp: number;
  httpStatus: number;
  status: string;
  grpcCode: string;
}

const SPEC_WIRE = {
  TASK_NOT_FOUND: {
    jsonRpcCode: -32001,
    jsonRpcHttp: 200,
    httpStatus: 404,
    status: 'NOT_FOUND',
    grpcCode: 'NOT_FOUND',
  },
  TASK_NOT_CANCELABLE: {
    jsonRpcCode: -32002,
    jsonRpcHttp: 200,
    httpStatus: 400,
    status: 'FAILED_PRECONDITION',
    grpcCode: 'FAILED_PRECONDITION',
  },
  PUSH_NOTIFICATION_NOT_SUPPORTED: {
    jsonRpcCode: -32003,
    jsonRpcHttp: 200,
    httpStatus: 400,
    status: 'FAILED_PRECONDITION',
    grpcCode: 'FAILED_PRECONDITION',
  },
  UNSUPPORTED_OPERATION: {
    jsonRpcCode: -32004,
    jsonRpcHttp: 200,
    httpStatus: 400,
    status: 'FAILED_PRECONDITION',
    grpcCode: 'FAILED_PRECONDITION',
  },
  CONTENT_TYPE_NOT_SUPPORTED: {
    jsonRpcCode: -32005,
    jsonRpcHttp: 200,
    httpStatus: 400,
    status: 'INVALID_ARGUMENT',
    grpcCode: 'INVALID_ARGUMENT',
  },
  EXTENDED_AGENT_CARD_NOT_CONFIGURED: {
    jsonRpcCode: -32007,
    jsonRpcHttp: 200,
    httpStatus: 400,
    status: 'FAILED_PRECONDITION',
    grpcCode: 'FAILED_PRECONDITION',
  },
  EXTENSION_SUPPORT_REQUIRED: {
    jsonRpcCode: -32008,
    jsonRpcHttp: 200,
    httpStatus: 400,
    status: 'FAILED_PRECONDITION',
    grpcCode: 'FAILED_PRECONDITION',
  },
  VERSION_NOT_SUPPORTED: {
    jsonRpcCode: -32009,
    jsonRpcHttp: 200,
    httpStatus: 400,
    status: 'FAILED_PRECONDITION',
    grpcCode: 'FAILED_PRECONDITION',
  },
  INVALID_PARAMS: {
    jsonRpcCode: -32602,
    jsonRpcHttp: 200,
    httpStatus: 400,
    status: 'INVALID_ARGUMENT',
    grpcCode: 'INVALID_ARGUMENT',
  },
  // The spec has no JSON-RPC code for authentication failures and reserves -32001…-32099 for A2A errors,
  // which leaves -32000, the one implementation-defined server error; HTTP 401 per §8.3's generic rule.
  UNAUTHENTICATED: {
    jsonRpcCode: -32000,
    jsonRpcHttp: 401,
    httpStatus: 401,
    status: 'UNAUTHENTICATED',
    grpcCode: 'UNAUTHENTICATED',
  },
} as const satisfies Record<string, SpecWire>;

type ExpectedReason = keyof typeof SPEC_WIRE;

const A2A_REASONS: ReadonlySet<ExpectedReason> = new Set([
  'TASK_NOT_FOUND',
  'TASK_NOT_CANCELABLE',
  'PUSH_NOTIFICATION_NOT_SUPPORTED',
  'UNSUPPORTED_OPERATION',
  'CONTENT_TYPE_NOT_SUPPORTED',
  'EXTENDED_AGENT_CARD_NOT_CONFIGURED',
  'EXTENSION_SUPPORT_REQUIRED',
  'VERSION_NOT_SUPPORTED',
]);

interface WireTask {
  id: string;
  contextId: string;
  status: { state: string; timestamp?: string; message?: unknown };
  artifacts?: { artifactId: string; parts: { text?: string }[] }[];
  history?: { messageId: string; role: string }[];
}

interface WireList {
  tasks: WireTask[];
  nextPageToken: string;
  pageSize: number;
  totalSize: number;
}

let platform: Standalone;
let clients: Record<BindingName, BindingClient>;
let closeClients: () => void = () => undefined;
/** Made once through JSON-RPC; all settled. */
let completedEcho: WireTask;
/** Three echo tasks in one context, oldest first. */
let listed: WireTask[];
let listContext: string;
let echoCard: { name: string; capabilities?: { extendedAgentCard?: boolean } };

const userMessage = (text: string, extra: Record<string, unknown> = {}) => ({
  messageId: `conf-${randomUUID()}`,
  role: 'ROLE_USER',
  parts: [{ text }],
  ...extra,
});

/** A message the tck agent answers with the bare Message 'Direct message response' (its direct-message scenario). */
const directMessage = (extra: Record<string, unknown> = {}) =>
  userMessage('direct', { messageId: `tck-message-response-${randomUUID()}`, ...extra });

/** The tck agent's reply: an agent message in the client's context, belonging to no task. */
function expectDirectReply(message: unknown, contextId: string): void {
  const context = JSON.stringify(message);
  expect(message, context).toMatchObject({
    role: 'ROLE_AGENT',
    contextId,
    parts: [{ text: 'Direct message response' }],
  });
  expect(message, context).not.toHaveProperty('taskId');
  expect((message as { messageId?: string }).messageId, context).toMatch(/.+/);
}

/** A countdown request: `n` steps of `stepMs` each (apps/agents/src/countdown.agent.ts). */
const countdown = (n: number, stepMs: number) => userMessage(String(n), { metadata: { stepMs } });

function describeOutcome(outcome: CallOutcome | StreamOutcome): string {
  return JSON.stringify(outcome);
}

function ok<T>(outcome: CallOutcome): T {
  expect(outcome.ok, describeOutcome(outcome)).toBe(true);
  return (outcome.ok ? outcome.result : undefined) as T;
}

function taskOf(outcome: CallOutcome): WireTask {
  const result = ok<{ task?: WireTask }>(outcome);
  expect(result, describeOutcome(outcome)).toHaveProperty('task');
  return result.task as WireTask;
}

/**
 * The error as the spec wants it on `binding`: the binding's status for `reason`, exactly one ErrorInfo with
 * that reason (domain `a2a-protocol.org` for A2A errors), and a BadRequest naming `fields` when given.
 */
function expectError(
  outcome: CallOutcome | StreamOutcome,
  binding: BindingName,
  reason: ExpectedReason,
  expected: { fields?: string[]; metadata?: Record<string, string> } = {},
): ErrorOutcome {
  const context = describeOutcome(outcome);
  expect(outcome.ok, context).toBe(false);
  const error = outcome as ErrorOutcome;
  const spec = SPEC_WIRE[reason];
  switch (binding) {
    case 'JSONRPC':
      expect(error.wire, context).toStrictEqual({
        binding,
        httpStatus: spec.jsonRpcHttp,
        jsonRpcCode: spec.jsonRpcCode,
      });
      break;
    case 'HTTP+JSON':
      expect(error.wire, context).toStrictEqual({
        binding,
        httpStatus: spec.httpStatus,
        status: spec.status,
        bodyCode: spec.httpStatus,
      });
      break;
    case 'GRPC':
      expect(error.wire, context).toStrictEqual({ binding, grpcCode: spec.grpcCode });
      break;
  }
  expect(error.errorInfoCount, context).toBe(1);
  expect(error.reason, context).toBe(reason);
  expect(error.errorInfoDomain, context).toBe(
    A2A_REASONS.has(reason) ? A2A_DOMAIN : PLATFORM_DOMAIN,
  );
  expect(error.message.length, context).toBeGreaterThan(0);
  if (expected.metadata) {
    expect(error.errorInfoMetadata, context).toMatchObject(expected.metadata);
  }
  for (const field of expected.fields ?? []) {
    expect(error.badRequestFields, context).toContain(field);
  }
  return error;
}

function events(outcome: StreamOutcome): Record<string, unknown>[] {
  expect(outcome.ok, describeOutcome(outcome)).toBe(true);
  if (!outcome.ok) {
    return [];
  }
  expect(outcome.streamError, describeOutcome(outcome)).toBeNull();
  return outcome.events;
}

const stateOfEvent = (event: Record<string, unknown>): string | undefined => {
  if ('task' in event) {
    return (event['task'] as WireTask).status.state;
  }
  if ('statusUpdate' in event) {
    return (event['statusUpdate'] as { status: { state: string } }).status.state;
  }
  return undefined;
};

const chunkText = (event: Record<string, unknown>): string =>
  (event['artifactUpdate'] as { artifact: { parts: { text?: string }[] } }).artifact.parts
    .map((p) => p.text ?? '')
    .join('');

/**
 * §10.6 shape of a task stream: the task snapshot first, then only status/artifact updates of that task,
 * the last one the terminal status; returns the task id.
 */
function expectTaskStream(list: Record<string, unknown>[], terminal: string): string {
  const context = JSON.stringify(list);
  expect(list.length, context).toBeGreaterThanOrEqual(2);
  expect(Object.keys(list[0] ?? {}), context).toStrictEqual(['task']);
  const task = list[0]?.['task'] as WireTask;
  for (const event of list.slice(1)) {
    const [kind] = Object.keys(event);
    expect(['statusUpdate', 'artifactUpdate'], context).toContain(kind);
    expect(event[kind ?? ''], context).toMatchObject({
      taskId: task.id,
      contextId: task.contextId,
    });
  }
  const last = list[list.length - 1] ?? {};
  expect(Object.keys(last), context).toStrictEqual(['statusUpdate']);
  expect(stateOfEvent(last), context).toBe(terminal);
  return task.id;
}

/** The outcome without what only the wire can differ in (status codes); everything else must match. */
function portable(outcome: CallOutcome | StreamOutcome): unknown {
  if (outcome.ok) {
    return outcome;
  }
  const { wire: _wire, ...rest } = outcome;
  return rest;
}

/**
 * A card outcome with each JWS `signature` value blanked: ES256 signatures are randomised, so two signings of
 * the same card differ; the protected header and everything signed are still compared.
 */
function withoutSignatureBytes(outcome: CallOutcome): CallOutcome {
  if (!outcome.ok) {
    return outcome;
  }
  const card = outcome.result as { signatures?: Record<string, unknown>[] };
  return {
    ...outcome,
    result: {
      ...card,
      ...(card.signatures
        ? { signatures: card.signatures.map((s) => ({ ...s, signature: '<signature>' })) }
        : {}),
    },
  };
}

beforeAll(async () => {
  platform = await bootStandalone('e2e_conformance');
  const made = bindingClients(platform);
  clients = made.clients;
  closeClients = made.close;
  const jsonRpc = clients.JSONRPC;
  completedEcho = taskOf(
    await jsonRpc.call('SendMessage', { message: userMessage('conformance fixture') }),
  );
  listContext = `conf-ctx-${randomUUID()}`;
  listed = [];
  for (const text of ['first', 'second', 'third']) {
    listed.push(
      taskOf(
        await jsonRpc.call('SendMessage', {
          message: userMessage(text, { contextId: listContext }),
        }),
      ),
    );
  }
  expect([completedEcho, ...listed].map((t) => t.status.state)).toStrictEqual(
    Array(4).fill('TASK_STATE_COMPLETED'),
  );
  const echo = await platform.db.pool.query<{ profile: Record<string, unknown> }>(
    `SELECT profile FROM ops.agents WHERE tenant_id = 'demo' AND agent_id = 'echo'`,
  );
  const profile = echo.rows[0]?.profile;
  expect(profile).toBeDefined();
  await platform.db.pool.query(
    `INSERT INTO ops.agents (tenant_id, agent_id, profile) VALUES ('demo', $1, $2)`,
    [
      STRICT_AGENT,
      JSON.stringify({
        ...profile,
        extensions: [{ uri: REQUIRED_EXTENSION, required: true }],
      }),
    ],
  );
  const { extendedCard: _configured, ...unconfigured } = profile ?? {};
  await platform.db.pool.query(
    `INSERT INTO ops.agents (tenant_id, agent_id, profile) VALUES ('demo', $1, $2)`,
    [UNCONFIGURED_AGENT, JSON.stringify({ ...unconfigured, extendedAgentCard: true })],
  );
  const card = await fetch(`${platform.baseUrl}/agents/demo/echo/.well-known/agent-card.json`);
  expect(card.status).toBe(200);
  echoCard = (await card.json()) as typeof echoCard;
});

afterAll(async () => {
  closeClients();
  await platform?.close();
});

describe.each(BINDINGS)('%s binding', (binding) => {
  const client = (): BindingClient => clients[binding];
  const call = (method: UnaryRpc, params: Record<string, unknown>, options?: CallOptions) =>
    client().call(method, params, options);

  describe('SendMessage (§6, §10.3–§10.5)', () => {
    it('§10.4 blocking by default: echo answers {"task"} COMPLETED with its artifact and the user message in history', async () => {
      const message = userMessage('hello conformance');
      const task = taskOf(await call('SendMessage', { message }));
      expect(task.id).toMatch(/\S/);
      expect(task.contextId).toMatch(/\S/);
      expect(task.status.state).toBe('TASK_STATE_COMPLETED');
      expect(task.status.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
      expect(task.artifacts?.map((a) => a.parts.map((p) => p.text))).toStrictEqual([
        ['hello conformance'],
      ]);
      expect(task.history?.map((m) => m.messageId)).toContain(message.messageId);
    });

    it('§10.4 returnImmediately: the task comes back before it is done', async () => {
      const task = taskOf(
        await call(
          'SendMessage',
          { message: countdown(3, 300), configuration: { returnImmediately: true } },
          { agent: 'countdown' },
        ),
      );
      expect(['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING']).toContain(task.status.state);
    });

    it('§10.5 historyLength on SendMessage: 0 omits history, 1 keeps at most one message, absent keeps all', async () => {
      const none = taskOf(
        await call('SendMessage', {
          message: userMessage('h0'),
          configuration: { historyLength: 0 },
        }),
      );
      expect(none).not.toHaveProperty('history');
      const one = taskOf(
        await call('SendMessage', {
          message: userMessage('h1'),
          configuration: { historyLength: 1 },
        }),
      );
      expect(one.history?.length).toBe(1);
      const all = taskOf(await call('SendMessage', { message: userMessage('hall') }));
      expect(all.history?.length).toBeGreaterThanOrEqual(1);
      const full = ok<WireTask>(await call('GetTask', { id: one.id }));
      expect(one.history).toStrictEqual(full.history?.slice(-1));
    });

    it('§10.3 continuing an INPUT_REQUIRED task with its taskId and contextId completes it', async () => {
      const asked = taskOf(
        await call('SendMessage', { message: userMessage('Hello') }, { agent: 'interview' }),
      );
      expect(asked.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
      const done = taskOf(
        await call(
          'SendMessage',
          {
            message: userMessage('Ada', { taskId: asked.id, contextId: asked.contextId }),
          },
          { agent: 'interview' },
        ),
      );
      expect(done.id).toBe(asked.id);
      expect(done.contextId).toBe(asked.contextId);
      expect(done.status.state).toBe('TASK_STATE_COMPLETED');
      expect(done.artifacts?.[0]?.parts[0]?.text).toBe('Nice to meet you, Ada!');
    });

    it('§6 idempotency: the same message again is a retry (its first task); another message under the same messageId is a new task', async () => {
      const message = userMessage('once');
      const first = taskOf(await call('SendMessage', { message }));
      expect(taskOf(await call('SendMessage', { message })).id).toBe(first.id);
      const other = { ...message, parts: [{ text: 'twice' }] };
      const second = taskOf(await call('SendMessage', { message: other }));
      expect(second.id).not.toBe(first.id);
      expect(second.status.state).toBe('TASK_STATE_COMPLETED');
      expect(second.artifacts?.[0]?.parts[0]?.text).toBe('twice');
      expect(taskOf(await call('SendMessage', { message: other })).id).toBe(second.id);
    });

    it('§6 an agent may answer with a bare Message: {"message"} in the context, also with returnImmediately; a retry gets the same message; no task exists for it', async () => {
      const contextId = `conf-reply-${randomUUID()}`;
      const message = directMessage({ contextId });
      const answer = ok<Record<string, unknown>>(
        await call('SendMessage', { message }, { agent: 'tck' }),
      );
      expect(Object.keys(answer), JSON.stringify(answer)).toStrictEqual(['message']);
      expectDirectReply(answer['message'], contextId);
      const retried = await call('SendMessage', { message }, { agent: 'tck' });
      expect(ok(retried), 'an identical retry gets the same reply').toStrictEqual(answer);
      const immediate = ok<Record<string, unknown>>(
        await call(
          'SendMessage',
          { message: directMessage({ contextId }), configuration: { returnImmediately: true } },
          { agent: 'tck' },
        ),
      );
      expect(Object.keys(immediate)).toStrictEqual(['message']);
      expectDirectReply(immediate['message'], contextId);
      const listedHere = ok<Partial<WireList>>(
        await call('ListTasks', { contextId }, { agent: 'tck' }),
      );
      expect(listedHere.tasks ?? [], 'an exchange answered by a message is no task').toStrictEqual(
        [],
      );
    });

    it('§10.3 a message to a terminal task → UNSUPPORTED_OPERATION', async () => {
      const outcome = await call('SendMessage', {
        message: userMessage('again', { taskId: completedEcho.id }),
      });
      expectError(outcome, binding, 'UNSUPPORTED_OPERATION');
    });

    it('§6 a part whose mediaType the agent does not accept → CONTENT_TYPE_NOT_SUPPORTED', async () => {
      const outcome = await call('SendMessage', {
        message: {
          ...userMessage('x'),
          parts: [{ text: 'x', mediaType: 'application/x-unsupported-by-echo' }],
        },
      });
      expectError(outcome, binding, 'CONTENT_TYPE_NOT_SUPPORTED');
    });

    it('§10.3 a message naming an unknown taskId → TASK_NOT_FOUND', async () => {
      const taskId = randomUUID();
      const outcome = await call('SendMessage', { message: userMessage('x', { taskId }) });
      expectError(outcome, binding, 'TASK_NOT_FOUND', { metadata: { taskId } });
    });

    it('§10.3 a contextId other than the task’s → INVALID_PARAMS', async () => {
      const asked = taskOf(
        await call('SendMessage', { message: userMessage('Hi') }, { agent: 'interview' }),
      );
      expect(asked.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
      const outcome = await call(
        'SendMessage',
        { message: userMessage('Bob', { taskId: asked.id, contextId: `other-${randomUUID()}` }) },
        { agent: 'interview' },
      );
      expectError(outcome, binding, 'INVALID_PARAMS');
    });
  });

  describe('GetTask (§6, §10.5)', () => {
    it('returns the task as SendMessage left it', async () => {
      const task = ok<WireTask>(await call('GetTask', { id: completedEcho.id }));
      expect(task).toStrictEqual(completedEcho);
    });

    it('§10.5 historyLength: 0 omits history, 1 is the newest message, absent is all of it', async () => {
      const all = ok<WireTask>(await call('GetTask', { id: completedEcho.id }));
      expect(all.history?.length).toBeGreaterThanOrEqual(1);
      const none = ok<WireTask>(await call('GetTask', { id: completedEcho.id, historyLength: 0 }));
      expect(none).not.toHaveProperty('history');
      const one = ok<WireTask>(await call('GetTask', { id: completedEcho.id, historyLength: 1 }));
      expect(one.history).toStrictEqual(all.history?.slice(-1));
      const many = ok<WireTask>(await call('GetTask', { id: completedEcho.id, historyLength: 99 }));
      expect(many.history).toStrictEqual(all.history);
    });

    it('an unknown id → TASK_NOT_FOUND', async () => {
      const id = randomUUID();
      expectError(await call('GetTask', { id }), binding, 'TASK_NOT_FOUND', {
        metadata: { taskId: id },
      });
    });

    it('§10.5 a negative historyLength → INVALID_PARAMS naming historyLength', async () => {
      expectError(
        await call('GetTask', { id: completedEcho.id, historyLength: -1 }),
        binding,
        'INVALID_PARAMS',
        { fields: ['historyLength'] },
      );
    });
  });

  describe('ListTasks (§10.7)', () => {
    const ids = (list: WireList) => list.tasks.map((t) => t.id);
    const newestFirst = () => [...listed].reverse().map((t) => t.id);

    it('defaults: pageSize 50 echoed, totalSize, nextPageToken "" on the last page, newest first, no artifacts', async () => {
      const list = ok<WireList>(await call('ListTasks', { contextId: listContext }));
      expect(list.pageSize).toBe(50);
      expect(list.totalSize).toBe(3);
      expect(list.nextPageToken).toBe('');
      expect(ids(list)).toStrictEqual(newestFirst());
      for (const task of list.tasks) {
        expect(task).not.toHaveProperty('artifacts');
      }
    });

    it('cursor navigation: pageSize 2, then the nextPageToken', async () => {
      const first = ok<WireList>(await call('ListTasks', { contextId: listContext, pageSize: 2 }));
      expect(first).toMatchObject({ pageSize: 2, totalSize: 3 });
      expect(first.nextPageToken).not.toBe('');
      expect(ids(first)).toStrictEqual(newestFirst().slice(0, 2));
      const second = ok<WireList>(
        await call('ListTasks', {
          contextId: listContext,
          pageSize: 2,
          pageToken: first.nextPageToken,
        }),
      );
      expect(second).toMatchObject({ totalSize: 3, nextPageToken: '' });
      expect(ids(second)).toStrictEqual(newestFirst().slice(2));
    });

    it('filters: status, and statusTimestampAfter keeps tasks at or after the instant', async () => {
      const completed = ok<WireList>(
        await call('ListTasks', { contextId: listContext, status: 'TASK_STATE_COMPLETED' }),
      );
      expect(ids(completed)).toStrictEqual(newestFirst());
      const working = ok<WireList>(
        await call('ListTasks', { contextId: listContext, status: 'TASK_STATE_WORKING' }),
      );
      expect(working).toStrictEqual({ tasks: [], nextPageToken: '', pageSize: 50, totalSize: 0 });
      const after = ok<WireList>(
        await call('ListTasks', {
          contextId: listContext,
          statusTimestampAfter: listed[1]?.status.timestamp,
        }),
      );
      expect(ids(after)).toStrictEqual(newestFirst().slice(0, 2));
      expect(after.totalSize).toBe(2);
    });

    it('includeArtifacts: true puts each task’s artifacts back', async () => {
      const list = ok<WireList>(
        await call('ListTasks', { contextId: listContext, includeArtifacts: true }),
      );
      expect(list.tasks.map((t) => t.artifacts?.[0]?.parts[0]?.text)).toStrictEqual([
        'third',
        'second',
        'first',
      ]);
    });

    const invalid: [string, Record<string, unknown>, string, CallOptions?][] = [
      ['pageSize 0', { pageSize: 0 }, 'pageSize'],
      ['pageSize -1', { pageSize: -1 }, 'pageSize'],
      ['pageSize 101', { pageSize: 101 }, 'pageSize'],
      ['historyLength -1', { historyLength: -1 }, 'historyLength'],
      [
        'an unknown status',
        { status: 'TASK_STATE_BOGUS' },
        'status',
        { grpcRaw: { omit: ['status'], append: rawField.varint(3, 99) } },
      ],
      ['an invalid pageToken', { pageToken: 'not-a-page-token' }, 'pageToken'],
      [
        'an invalid statusTimestampAfter',
        { statusTimestampAfter: 'yesterday' },
        'statusTimestampAfter',
        // One second past 9999-12-31T23:59:59Z, outside google.protobuf.Timestamp's range.
        {
          grpcRaw: {
            omit: ['statusTimestampAfter'],
            append: rawField.timestamp(7, 253402300800, 0),
          },
        },
      ],
    ];
    it.each(invalid)(
      '%s → INVALID_PARAMS naming the field',
      async (_title, params, field, options) => {
        expectError(await call('ListTasks', params, options), binding, 'INVALID_PARAMS', {
          fields: [field],
        });
      },
    );
  });

  describe('CancelTask (§10.8)', () => {
    it('a running countdown → CANCELED; cancelling it again → TASK_NOT_CANCELABLE', async () => {
      const started = taskOf(
        await call(
          'SendMessage',
          { message: countdown(20, 500), configuration: { returnImmediately: true } },
          { agent: 'countdown' },
        ),
      );
      const canceled = ok<WireTask>(
        await call('CancelTask', { id: started.id }, { agent: 'countdown' }),
      );
      expect(canceled.id).toBe(started.id);
      expect(canceled.status.state).toBe('TASK_STATE_CANCELED');
      expectError(
        await call('CancelTask', { id: started.id }, { agent: 'countdown' }),
        binding,
        'TASK_NOT_CANCELABLE',
      );
    });

    it('an unknown id → TASK_NOT_FOUND', async () => {
      expectError(await call('CancelTask', { id: randomUUID() }), binding, 'TASK_NOT_FOUND');
    });
  });

  describe('streams (§10.6)', () => {
    it('SendStreamingMessage: the task first, then its updates in order, COMPLETED last, then the stream closes', async () => {
      const list = events(
        await client().stream(
          'SendStreamingMessage',
          { message: countdown(2, 100) },
          { agent: 'countdown' },
        ),
      );
      expectTaskStream(list, 'TASK_STATE_COMPLETED');
      expect(stateOfEvent(list[0] ?? {})).toBe('TASK_STATE_SUBMITTED');
      expect(list.filter((e) => 'artifactUpdate' in e).map(chunkText)).toStrictEqual(['2', '1']);
    });

    it('SubscribeToTask: the current task first, then updates in order until COMPLETED, then the stream closes', async () => {
      const started = taskOf(
        await call(
          'SendMessage',
          { message: countdown(3, 300), configuration: { returnImmediately: true } },
          { agent: 'countdown' },
        ),
      );
      const list = events(
        await client().stream('SubscribeToTask', { id: started.id }, { agent: 'countdown' }),
      );
      expect(expectTaskStream(list, 'TASK_STATE_COMPLETED')).toBe(started.id);
      // The snapshot may already hold the first chunks; what follows continues the countdown to 1.
      const chunks = list.filter((e) => 'artifactUpdate' in e).map(chunkText);
      expect(['3', '2', '1'].slice(3 - chunks.length)).toStrictEqual(chunks);
    });

    it('SubscribeToTask follows the task through INPUT_REQUIRED: the answer sent on another connection reaches the same stream, COMPLETED closes it', async () => {
      const asked = taskOf(
        await call('SendMessage', { message: userMessage('Hello') }, { agent: 'interview' }),
      );
      expect(asked.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
      let answered: Promise<CallOutcome> | undefined;
      const list = events(
        await client().stream(
          'SubscribeToTask',
          { id: asked.id },
          {
            agent: 'interview',
            // The answer goes out once the subscription holds the INPUT_REQUIRED snapshot.
            onEvent: () => {
              answered ??= call(
                'SendMessage',
                {
                  message: userMessage('Ada', { taskId: asked.id, contextId: asked.contextId }),
                },
                { agent: 'interview' },
              );
            },
          },
        ),
      );
      expect(stateOfEvent(list[0] ?? {})).toBe('TASK_STATE_INPUT_REQUIRED');
      expect(expectTaskStream(list, 'TASK_STATE_COMPLETED')).toBe(asked.id);
      expect(list.filter((e) => 'artifactUpdate' in e).map(chunkText)).toStrictEqual([
        'Nice to meet you, Ada!',
      ]);
      expect(answered).toBeDefined();
      expect(taskOf(await (answered as Promise<CallOutcome>)).status.state).toBe(
        'TASK_STATE_COMPLETED',
      );
    });

    it('SendStreamingMessage answered with a bare Message: exactly that one message event, then the stream closes', async () => {
      const contextId = `conf-reply-${randomUUID()}`;
      const list = events(
        await client().stream(
          'SendStreamingMessage',
          { message: directMessage({ contextId }) },
          { agent: 'tck' },
        ),
      );
      expect(
        list.map((event) => Object.keys(event)),
        JSON.stringify(list),
      ).toStrictEqual([['message']]);
      expectDirectReply(list[0]?.['message'], contextId);
    });

    it('SendStreamingMessage ends with the turn: INPUT_REQUIRED closes the stream', async () => {
      const list = events(
        await client().stream(
          'SendStreamingMessage',
          { message: userMessage('Hello') },
          { agent: 'interview' },
        ),
      );
      expectTaskStream(list, 'TASK_STATE_INPUT_REQUIRED');
    });

    it('SubscribeToTask of a terminal task → UNSUPPORTED_OPERATION before any event', async () => {
      expectError(
        await client().stream('SubscribeToTask', { id: completedEcho.id }),
        binding,
        'UNSUPPORTED_OPERATION',
      );
    });

    it('SendStreamingMessage to a terminal task → UNSUPPORTED_OPERATION before any event', async () => {
      expectError(
        await client().stream('SendStreamingMessage', {
          message: userMessage('late', { taskId: completedEcho.id }),
        }),
        binding,
        'UNSUPPORTED_OPERATION',
      );
    });

    it('a stream without an API key → UNAUTHENTICATED before any event', async () => {
      expectError(
        await client().stream(
          'SendStreamingMessage',
          { message: userMessage('x') },
          { apiKey: null },
        ),
        binding,
        'UNAUTHENTICATED',
      );
    });

    it('SubscribeToTask of an unknown task → TASK_NOT_FOUND before any event', async () => {
      expectError(
        await client().stream('SubscribeToTask', { id: randomUUID() }),
        binding,
        'TASK_NOT_FOUND',
      );
    });
  });

  describe('capability gating (§6 "Capability gating")', () => {
    const push: [UnaryRpc, Record<string, unknown>][] = [
      ['CreateTaskPushNotificationConfig', { url: 'https://example.com/hook' }],
      ['GetTaskPushNotificationConfig', { id: 'cfg-1' }],
      ['ListTaskPushNotificationConfigs', {}],
      ['DeleteTaskPushNotificationConfig', { id: 'cfg-1' }],
    ];
    it.each(push)('%s → PUSH_NOTIFICATION_NOT_SUPPORTED', async (method, params) => {
      expectError(
        await call(method, { taskId: completedEcho.id, ...params }),
        binding,
        'PUSH_NOTIFICATION_NOT_SUPPORTED',
      );
    });

    it('GetExtendedAgentCard of an agent without the capability (countdown) → UNSUPPORTED_OPERATION', async () => {
      expectError(
        await call('GetExtendedAgentCard', {}, { agent: 'countdown' }),
        binding,
        'UNSUPPORTED_OPERATION',
      );
    });

    it('GetExtendedAgentCard of an agent that declares one but has none → EXTENDED_AGENT_CARD_NOT_CONFIGURED', async () => {
      expectError(
        await call('GetExtendedAgentCard', {}, { agent: UNCONFIGURED_AGENT }),
        binding,
        'EXTENDED_AGENT_CARD_NOT_CONFIGURED',
      );
    });

    it('GetExtendedAgentCard of echo follows its card: a card for an authenticated caller when declared, else UNSUPPORTED_OPERATION', async () => {
      const outcome = await call('GetExtendedAgentCard', {});
      if (echoCard.capabilities?.extendedAgentCard === true) {
        expect(ok<{ name: string }>(outcome).name).toBe(echoCard.name);
        expectError(
          await call('GetExtendedAgentCard', {}, { apiKey: null }),
          binding,
          'UNAUTHENTICATED',
        );
      } else {
        expectError(outcome, binding, 'UNSUPPORTED_OPERATION');
      }
    });
  });

  describe('service parameters and authentication (§10.1, §10.2, §10.11)', () => {
    it('A2A-Version 0.5 → VERSION_NOT_SUPPORTED', async () => {
      expectError(
        await call('GetTask', { id: completedEcho.id }, { a2aVersion: '0.5' }),
        binding,
        'VERSION_NOT_SUPPORTED',
      );
    });

    it('no A2A-Version means 0.3 → VERSION_NOT_SUPPORTED', async () => {
      expectError(
        await call('GetTask', { id: completedEcho.id }, { a2aVersion: null }),
        binding,
        'VERSION_NOT_SUPPORTED',
      );
    });

    it('no API key → UNAUTHENTICATED', async () => {
      expectError(
        await call('GetTask', { id: completedEcho.id }, { apiKey: null }),
        binding,
        'UNAUTHENTICATED',
      );
    });

    it('a wrong API key → UNAUTHENTICATED', async () => {
      expectError(
        await call('GetTask', { id: completedEcho.id }, { apiKey: `wrong-${randomUUID()}` }),
        binding,
        'UNAUTHENTICATED',
      );
    });

    it('§10.2 a required extension not requested → EXTENSION_SUPPORT_REQUIRED; requested, the call goes on and the extension is echoed', async () => {
      const id = randomUUID();
      const missing = expectError(
        await call('GetTask', { id }, { agent: STRICT_AGENT }),
        binding,
        'EXTENSION_SUPPORT_REQUIRED',
      );
      expect(missing.activatedExtensions).toStrictEqual([]);
      const requested = expectError(
        await call('GetTask', { id }, { agent: STRICT_AGENT, extensions: [REQUIRED_EXTENSION] }),
        binding,
        'TASK_NOT_FOUND',
      );
      expect(requested.activatedExtensions).toStrictEqual([REQUIRED_EXTENSION]);
    });

    it('§10.2 a declared extension that is requested is echoed on success; an unknown one is ignored', async () => {
      const outcome = await call(
        'GetTask',
        { id: completedEcho.id },
        { extensions: [RESUMABLE_STREAMS, 'https://example.com/ext/unknown/v1'] },
      );
      expect(ok<WireTask>(outcome).id).toBe(completedEcho.id);
      expect(outcome.activatedExtensions).toStrictEqual([RESUMABLE_STREAMS]);
    });

    const invalidMessages: [string, Record<string, unknown>, string][] = [
      ['no message', {}, 'message'],
      ['a message without parts', { message: userMessage('x', { parts: [] }) }, 'message.parts'],
      [
        'a message without messageId',
        { message: userMessage('x', { messageId: '' }) },
        'message.messageId',
      ],
      [
        'a message without role',
        { message: userMessage('x', { role: 'ROLE_UNSPECIFIED' }) },
        'message.role',
      ],
    ];
    it.each(invalidMessages)(
      '§3 REQUIRED fields: SendMessage with %s → INVALID_PARAMS with a BadRequest violation',
      async (_title, params, field) => {
        expectError(await call('SendMessage', params), binding, 'INVALID_PARAMS', {
          fields: [field],
        });
      },
    );
  });

  describe('tenant routing (§10.9)', () => {
    it('the per-agent URL and the tenant-routed entry point give the same results', async () => {
      for (const [method, params] of [
        ['GetTask', { id: completedEcho.id }],
        ['ListTasks', { contextId: listContext, pageSize: 2 }],
        ['GetTask', { id: randomUUID() }],
      ] as const) {
        const perAgent = await call(method, params, { routing: 'agent-url' });
        const routed = await call(method, params, { routing: 'tenant' });
        expect(routed, method).toStrictEqual(perAgent);
      }
      expect(
        ok<WireTask>(await call('GetTask', { id: completedEcho.id }, { routing: 'tenant' })).id,
      ).toBe(completedEcho.id);
    });

    it('a task created through this binding is visible through all three: same id, same state, same task', async () => {
      const created = taskOf(await call('SendMessage', { message: userMessage('crossing') }));
      const seen = await Promise.all(
        BINDINGS.map((other) => clients[other].call('GetTask', { id: created.id })),
      );
      for (const outcome of seen) {
        const task = ok<WireTask>(outcome);
        expect(task.id).toBe(created.id);
        expect(task.status.state).toBe(created.status.state);
        expect(task).toStrictEqual(created);
      }
    });

    it('another agent’s task → TASK_NOT_FOUND', async () => {
      expectError(
        await call('GetTask', { id: completedEcho.id }, { agent: 'interview' }),
        binding,
        'TASK_NOT_FOUND',
      );
    });

    it('another agent’s tasks are not listed', async () => {
      const list = ok<WireList>(
        await call('ListTasks', { contextId: listContext }, { agent: 'interview' }),
      );
      expect(list).toStrictEqual({ tasks: [], nextPageToken: '', pageSize: 50, totalSize: 0 });
    });

    it('a tenant value that names no agent → INVALID_PARAMS naming tenant', async () => {
      expectError(
        await call('GetTask', { id: completedEcho.id, tenant: 'demo' }, { routing: 'tenant' }),
        binding,
        'INVALID_PARAMS',
        { fields: ['tenant'] },
      );
    });

    it('the tenant of an unknown tenant with the demo key → UNAUTHENTICATED', async () => {
      expectError(
        await call(
          'GetTask',
          { id: completedEcho.id },
          { routing: 'tenant', tenantId: `nosuch${Date.now()}` },
        ),
        binding,
        'UNAUTHENTICATED',
      );
    });
  });
});

/**
 * What only the HTTP-based bindings have: per-agent URLs (gRPC routes by `tenant` alone, spec digest §8b)
 * and the A2A-Version query parameter.
 */
describe.each(['JSONRPC', 'HTTP+JSON'] as const)('%s binding, HTTP-only rules', (binding) => {
  it('§8.1 A2A-Version as a query parameter is honoured: 1.0 serves, 0.5 → VERSION_NOT_SUPPORTED', async () => {
    const served = await clients[binding].call(
      'GetTask',
      { id: completedEcho.id },
      { versionInQuery: true },
    );
    expect(ok<WireTask>(served).id).toBe(completedEcho.id);
    expectError(
      await clients[binding].call(
        'GetTask',
        { id: completedEcho.id },
        { versionInQuery: true, a2aVersion: '0.5' },
      ),
      binding,
      'VERSION_NOT_SUPPORTED',
    );
  });

  it('§10.9 on a per-agent URL, a tenant of another agent → INVALID_PARAMS naming tenant', async () => {
    expectError(
      await clients[binding].call('GetTask', { id: completedEcho.id, tenant: 'demo/interview' }),
      binding,
      'INVALID_PARAMS',
      { fields: ['tenant'] },
    );
  });
});

describe('HTTP+JSON binding, SubscribeToTask on POST (§12 #1: serve both GET and POST)', () => {
  it('streams a running task to its end, and refuses a terminal one with UNSUPPORTED_OPERATION', async () => {
    const rest = clients['HTTP+JSON'];
    const started = taskOf(
      await rest.call(
        'SendMessage',
        { message: countdown(2, 200), configuration: { returnImmediately: true } },
        { agent: 'countdown' },
      ),
    );
    const list = events(
      await rest.stream(
        'SubscribeToTask',
        { id: started.id },
        { agent: 'countdown', subscribeWithPost: true },
      ),
    );
    expect(expectTaskStream(list, 'TASK_STATE_COMPLETED')).toBe(started.id);
    expectError(
      await rest.stream('SubscribeToTask', { id: completedEcho.id }, { subscribeWithPost: true }),
      'HTTP+JSON',
      'UNSUPPORTED_OPERATION',
    );
  });
});

describe('parity: the three bindings give equal normalised outcomes (§13 "Multi-transport equivalence")', () => {
  type Probe = (client: BindingClient) => Promise<CallOutcome | StreamOutcome>;
  const probes: [string, Probe][] = [
    ['GetTask of a completed task', (c) => c.call('GetTask', { id: completedEcho.id })],
    [
      'GetTask with historyLength 1',
      (c) => c.call('GetTask', { id: completedEcho.id, historyLength: 1 }),
    ],
    ['ListTasks of one context', (c) => c.call('ListTasks', { contextId: listContext })],
    [
      'ListTasks, second page with artifacts',
      async (c) => {
        const first = await c.call('ListTasks', { contextId: listContext, pageSize: 1 });
        const token = first.ok ? (first.result as WireList).nextPageToken : '';
        return c.call('ListTasks', {
          contextId: listContext,
          pageSize: 1,
          pageToken: token,
          includeArtifacts: true,
        });
      },
    ],
    ['GetTask of an unknown id', (c) => c.call('GetTask', { id: 'no-such-task' })],
    [
      'GetExtendedAgentCard of echo',
      async (c) => withoutSignatureBytes(await c.call('GetExtendedAgentCard', {})),
    ],
    [
      'GetTask with an activated extension',
      (c) => c.call('GetTask', { id: completedEcho.id }, { extensions: [RESUMABLE_STREAMS] }),
    ],
    [
      'SendMessage to a terminal task',
      (c) =>
        c.call('SendMessage', {
          message: { ...userMessage('late', { taskId: completedEcho.id }), messageId: 'parity-m' },
        }),
    ],
    ['CancelTask of a terminal task', (c) => c.call('CancelTask', { id: completedEcho.id })],
    [
      'SubscribeToTask of a terminal task',
      (c) => c.stream('SubscribeToTask', { id: completedEcho.id }),
    ],
    [
      'GetTaskPushNotificationConfig',
      (c) => c.call('GetTaskPushNotificationConfig', { taskId: completedEcho.id, id: 'cfg' }),
    ],
    ['A2A-Version 0.5', (c) => c.call('GetTask', { id: completedEcho.id }, { a2aVersion: '0.5' })],
    ['no API key', (c) => c.call('GetTask', { id: completedEcho.id }, { apiKey: null })],
    [
      'a required extension not requested',
      (c) => c.call('GetTask', { id: 'no-such-task' }, { agent: STRICT_AGENT }),
    ],
    ['ListTasks with pageSize 101', (c) => c.call('ListTasks', { pageSize: 101 })],
    [
      // No `parts` key rather than `[]`: binary proto cannot tell the two apart, so only this input is the
      // same request on all three bindings.
      'SendMessage without parts',
      (c) => c.call('SendMessage', { message: { messageId: 'parity-p', role: 'ROLE_USER' } }),
    ],
  ];

  it.each(probes)('%s', async (_title, probe) => {
    const [jsonRpc, rest, grpc] = await Promise.all(BINDINGS.map((b) => probe(clients[b])));
    const reference = portable(jsonRpc!);
    expect(jsonRpc!.ok || (jsonRpc as ErrorOutcome).reason !== undefined).toBe(true);
    expect(portable(rest!), 'HTTP+JSON vs JSONRPC').toStrictEqual(reference);
    expect(portable(grpc!), 'GRPC vs JSONRPC').toStrictEqual(reference);
  });
});

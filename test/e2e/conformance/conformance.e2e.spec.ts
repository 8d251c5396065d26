/**
 * One conformance table run against all three bindings (spec digest §2, §6–§10, §13 "Multi-transport
 * equivalence"): JSON-RPC, HTTP+JSON and gRPC on the standalone platform. Every expected value is written
 * here from the spec digest (the v1.0.1 column of §9.1, the JSON-RPC codes of §7.4), never read from the
 * platform's own mapping tables. The requests the platform must refuse are tables of their own: each row is
 * checked alone, and the last row of each binding sends them all again to prove that none of them changed
 * anything (§10.13).
 */
import { AGENT_PROFILES } from '@lib/worker-sdk';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
} from '../support/binding-clients';
import { eventually } from '../support/json-rpc';
import {
  bootStandalone,
  seedAcme,
  taskEvents,
  writeCounts,
  type Standalone,
} from '../support/platform';
import { A2A_DOMAIN, PLATFORM_DOMAIN } from '../support/wire';

const BINDINGS: readonly BindingName[] = ['JSONRPC', 'HTTP+JSON', 'GRPC'];
const REQUIRED_EXTENSION = 'https://example.com/ext/required/v1';
/** An agent of the demo tenant that declares REQUIRED_EXTENSION as required; no worker serves it. */
const STRICT_AGENT = 'strict';
/** The echo profile without push notifications; no worker serves it. */
const NO_PUSH_AGENT = 'nopush';
/** An agent that declares an extended card but has none configured; no worker serves it. */
const UNCONFIGURED_AGENT = 'unconfigured';
/** An optional extension every example agent declares (see the agent cards). */
const RESUMABLE_STREAMS = 'https://a2a-platform.dev/extensions/resumable-streams/v1';
/** A second tenant with an echo agent of its own (no worker), for the cross-tenant rows. */
const ACME_KEY = `acme-key-${randomUUID()}`;
/** Long enough that the worker, not the deadline, ends a canceled task (the test checks which one did). */
const CANCEL_GRACE_MS = 20_000;

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

interface WireMessage {
  messageId: string;
  role: string;
  parts: { text?: string }[];
  taskId?: string;
  contextId?: string;
}

interface WireTask {
  id: string;
  contextId: string;
  status: { state: string; timestamp?: string; message?: WireMessage };
  artifacts?: { artifactId: string; name?: string; parts: { text?: string }[] }[];
  history?: WireMessage[];
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
/** Interview tasks made once through JSON-RPC: one answered (three messages of history), one waiting. */
let completedInterview: WireTask;
let waitingInterview: WireTask;

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

/** The texts of a task's history, oldest first. */
const historyTexts = (task: WireTask): string[] | undefined =>
  task.history?.map((m) => m.parts.map((p) => p.text ?? '').join(''));

/** An outcome with every occurrence of `id` replaced, to compare the outcomes of two ids. */
const withoutId = (outcome: CallOutcome | StreamOutcome, id: string): unknown =>
  JSON.parse(JSON.stringify(outcome).split(id).join('<id>'));

/**
 * A request the platform must refuse (spec digest §9.1), and how: `send` gets a fresh id no task has, for
 * the rows about unknown ids; `metadata` gets the same id.
 */
interface Refusal {
  title: string;
  send: (unknownId: string) => Promise<CallOutcome | StreamOutcome>;
  reason: ExpectedReason;
  fields?: string[];
  metadata?: (unknownId: string) => Record<string, string>;
}

/** The refusal of a request naming a task id no task has: TASK_NOT_FOUND naming that id. */
const unknownTask = (
  title: string,
  send: (unknownId: string) => Promise<CallOutcome | StreamOutcome>,
): Refusal => ({ title, send, reason: 'TASK_NOT_FOUND', metadata: (taskId) => ({ taskId }) });

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
  platform = await bootStandalone('e2e_conformance', {
    CANCEL_GRACE_MS: String(CANCEL_GRACE_MS),
  });
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
  const interview = { agent: 'interview' };
  const asked = taskOf(
    await jsonRpc.call('SendMessage', { message: userMessage('Hello') }, interview),
  );
  completedInterview = taskOf(
    await jsonRpc.call(
      'SendMessage',
      { message: userMessage('Grace', { taskId: asked.id }) },
      interview,
    ),
  );
  waitingInterview = taskOf(
    await jsonRpc.call('SendMessage', { message: userMessage('Hi again') }, interview),
  );
  expect(
    [completedEcho, ...listed, completedInterview, waitingInterview].map((t) => t.status.state),
  ).toStrictEqual([...Array(5).fill('TASK_STATE_COMPLETED'), 'TASK_STATE_INPUT_REQUIRED']);
  await seedAcme(platform.db.pool, ACME_KEY);
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
  await platform.db.pool.query(
    `INSERT INTO ops.agents (tenant_id, agent_id, profile) VALUES ('demo', $1, $2)`,
    [NO_PUSH_AGENT, JSON.stringify({ ...profile, pushNotifications: false })],
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

  /** Every refusal row of this binding, for the last row (they must change nothing). */
  const refusals: Refusal[] = [];
  /** Rows that are refusals: each is checked here, and sent again by the last row. */
  const refused = (rows: Refusal[]): void => {
    refusals.push(...rows);
    it.each(rows.map((row) => [row.title, row] as const))('%s', async (_title, row) => {
      const unknownId = randomUUID();
      expectError(await row.send(unknownId), binding, row.reason, {
        fields: row.fields,
        metadata: row.metadata?.(unknownId),
      });
    });
  };

  describe('SendMessage (§6, §10.3–§10.5)', () => {
    it('§10.4 blocking by default: echo answers {"task"} COMPLETED with its artifact and the user message in history', async () => {
      const message = userMessage('hello conformance');
      const outcome = await call('SendMessage', { message });
      const task = taskOf(outcome);
      expect(task.id).toMatch(/\S/);
      expect(task.contextId).toMatch(/\S/);
      expect(task.status.state).toBe('TASK_STATE_COMPLETED');
      expect(task.status.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
      expect(
        task.artifacts?.map((a) => [a.artifactId, a.name, a.parts.map((p) => p.text)]),
      ).toStrictEqual([['echo', 'echo', ['hello conformance']]]);
      expect(task.history?.map((m) => m.messageId)).toContain(message.messageId);
      expect(task.history?.[0]?.role).toBe('ROLE_USER');
      // ProtoJSON (§3): enum names, no 0.3 `kind` discriminator anywhere.
      expect(JSON.stringify(ok(outcome))).not.toContain('"kind"');
    });

    it('§10.4 returnImmediately: the task comes back before it is done; GetTask then sees it COMPLETED with every chunk', async () => {
      const task = taskOf(
        await call(
          'SendMessage',
          { message: countdown(3, 300), configuration: { returnImmediately: true } },
          { agent: 'countdown' },
        ),
      );
      expect(['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING']).toContain(task.status.state);
      const done = await eventually(
        async () => ok<WireTask>(await call('GetTask', { id: task.id }, { agent: 'countdown' })),
        (t) => t.status.state !== 'TASK_STATE_SUBMITTED' && t.status.state !== 'TASK_STATE_WORKING',
      );
      expect(done.status.state).toBe('TASK_STATE_COMPLETED');
      expect(done.contextId).toBe(task.contextId);
      expect(done.artifacts?.map((a) => [a.artifactId, a.parts.map((p) => p.text)])).toStrictEqual([
        ['countdown', ['3', '2', '1']],
      ]);
      expect(done.status.message?.parts.map((p) => p.text)).toStrictEqual(['Counted down from 3.']);
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

    it('§10.3 continuing with the taskId alone: the server infers the contextId; the history holds the question and both turns, all of this task', async () => {
      const interview = { agent: 'interview' };
      const asked = taskOf(
        await call('SendMessage', { message: userMessage('Hi there') }, interview),
      );
      expect(asked.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
      expect(asked.status.message).toMatchObject({
        role: 'ROLE_AGENT',
        parts: [{ text: 'What is your name?' }],
      });
      const done = taskOf(
        await call('SendMessage', { message: userMessage('Ada', { taskId: asked.id }) }, interview),
      );
      expect(done.id).toBe(asked.id);
      expect(done.contextId).toBe(asked.contextId);
      expect(done.status.state).toBe('TASK_STATE_COMPLETED');
      expect(done.artifacts?.map((a) => [a.artifactId, a.parts.map((p) => p.text)])).toStrictEqual([
        ['greeting', ['Nice to meet you, Ada!']],
      ]);
      expect(historyTexts(done)).toStrictEqual(['Hi there', 'What is your name?', 'Ada']);
      for (const message of done.history ?? []) {
        expect(message).toMatchObject({ taskId: asked.id, contextId: asked.contextId });
      }
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

    it('§6 idempotency under concurrency: three concurrent sends of one new message make one task', async () => {
      const contextId = `conf-idem-${randomUUID()}`;
      const message = userMessage('at once', { contextId });
      const sent = await Promise.all([1, 2, 3].map(() => call('SendMessage', { message })));
      const ids = [...new Set(sent.map((outcome) => taskOf(outcome).id))];
      expect(ids).toHaveLength(1);
      const listedHere = ok<WireList>(await call('ListTasks', { contextId }));
      expect(listedHere.tasks.map((t) => t.id)).toStrictEqual(ids);
      expect(listedHere.totalSize).toBe(1);
      const views = await platform.db.pool.query(
        `SELECT count(*)::int AS n FROM read.task_view WHERE tenant_id = 'demo' AND context_id = $1`,
        [contextId],
      );
      expect(views.rows).toStrictEqual([{ n: 1 }]);
    });

    it('§6 a messageId used before on another agent starts a task of its own there (or is INVALID_PARAMS naming message.messageId), never TASK_NOT_FOUND', async () => {
      const messageId = `conf-shared-${randomUUID()}`;
      const onEcho = taskOf(
        await call('SendMessage', { message: userMessage('first', { messageId }) }),
      );
      const outcome = await call(
        'SendMessage',
        { message: userMessage('second', { messageId }) },
        { agent: 'interview' },
      );
      if (outcome.ok) {
        const task = taskOf(outcome);
        expect(task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
        expect(task.id).not.toBe(onEcho.id);
      } else {
        expectError(outcome, binding, 'INVALID_PARAMS', { fields: ['message.messageId'] });
      }
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

    const unsupported = 'application/x-unsupported-by-echo';
    refused([
      {
        title: '§10.3 a message to a terminal task → UNSUPPORTED_OPERATION',
        send: () =>
          call('SendMessage', { message: userMessage('again', { taskId: completedEcho.id }) }),
        reason: 'UNSUPPORTED_OPERATION',
        metadata: () => ({ taskId: completedEcho.id }),
      },
      {
        title: '§6 a part whose mediaType the agent does not accept → CONTENT_TYPE_NOT_SUPPORTED',
        send: () =>
          call('SendMessage', {
            message: { ...userMessage('x'), parts: [{ text: 'x', mediaType: unsupported }] },
          }),
        reason: 'CONTENT_TYPE_NOT_SUPPORTED',
        metadata: () => ({ mediaType: unsupported }),
      },
      unknownTask('§10.3 a message naming an unknown taskId → TASK_NOT_FOUND', (taskId) =>
        call('SendMessage', { message: userMessage('x', { taskId }) }),
      ),
      {
        title: '§10.3 a contextId other than the task’s → INVALID_PARAMS naming message.contextId',
        send: () =>
          call(
            'SendMessage',
            {
              message: userMessage('Bob', {
                taskId: waitingInterview.id,
                contextId: `other-${randomUUID()}`,
              }),
            },
            { agent: 'interview' },
          ),
        reason: 'INVALID_PARAMS',
        fields: ['message.contextId'],
      },
      {
        title: '§10.5 a negative configuration.historyLength → INVALID_PARAMS naming it',
        send: () =>
          call('SendMessage', {
            message: userMessage('x'),
            configuration: { historyLength: -1 },
          }),
        reason: 'INVALID_PARAMS',
        fields: ['configuration.historyLength'],
      },
    ]);
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

    it('§10.5 historyLength on a history of three messages: 0 none, 1 and 2 the newest, a large value all', async () => {
      const id = completedInterview.id;
      const texts = async (historyLength?: number): Promise<string[] | undefined> => {
        const params = historyLength === undefined ? { id } : { id, historyLength };
        const task = ok<WireTask>(await call('GetTask', params, { agent: 'interview' }));
        expect(task.id).toBe(id);
        return historyTexts(task);
      };
      const all = ['Hello', 'What is your name?', 'Grace'];
      expect(await texts()).toStrictEqual(all);
      expect(await texts(0)).toBeUndefined();
      expect(await texts(1)).toStrictEqual(['Grace']);
      expect(await texts(2)).toStrictEqual(['What is your name?', 'Grace']);
      expect(await texts(1_000)).toStrictEqual(all);
    });

    refused([
      unknownTask('an unknown id → TASK_NOT_FOUND', (id) => call('GetTask', { id })),
      {
        title: '§10.5 a negative historyLength → INVALID_PARAMS naming historyLength',
        send: () => call('GetTask', { id: completedEcho.id, historyLength: -1 }),
        reason: 'INVALID_PARAMS',
        fields: ['historyLength'],
      },
    ]);
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

    it('without filters: pageSize 50, totalSize counts every task of the caller on the agent, the page holds the newest of them', async () => {
      const list = ok<WireList>(await call('ListTasks', {}));
      const visible = await platform.db.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM read.task_view
          WHERE tenant_id = 'demo' AND agent_id = 'echo' AND owner_id = 'demo-user'`,
      );
      const total = visible.rows[0]!.n;
      expect(total).toBeGreaterThanOrEqual(4);
      expect(list.pageSize).toBe(50);
      expect(list.totalSize).toBe(total);
      expect(list.tasks).toHaveLength(Math.min(50, total));
      expect(list.nextPageToken === '').toBe(total <= 50);
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
      expect(second).toMatchObject({ pageSize: 2, totalSize: 3, nextPageToken: '' });
      expect(ids(second)).toStrictEqual(newestFirst().slice(2));
    });

    it('a full cursor walk (pageSize 3) over every task of the agent: each task once, newest first, as many as totalSize', async () => {
      const seen: WireTask[] = [];
      let pageToken = '';
      let totalSize = -1;
      for (let page = 0; page < 200; page++) {
        const list = ok<WireList>(
          await call('ListTasks', { pageSize: 3, ...(pageToken === '' ? {} : { pageToken }) }),
        );
        totalSize = list.totalSize;
        seen.push(...list.tasks);
        pageToken = list.nextPageToken;
        if (pageToken === '') {
          break;
        }
      }
      expect(pageToken).toBe('');
      expect(seen).toHaveLength(totalSize);
      expect(new Set(seen.map((t) => t.id)).size).toBe(totalSize);
      const stamps = seen.map((t) => Date.parse(t.status.timestamp ?? ''));
      expect(stamps).toStrictEqual([...stamps].sort((a, b) => b - a));
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

    it('filters alone and combined: each state of a context, a state across contexts, status with statusTimestampAfter, a future instant', async () => {
      const interview = { agent: 'interview' };
      const contextId = `conf-filter-${randomUUID()}`;
      const waiting = taskOf(
        await call('SendMessage', { message: userMessage('a', { contextId }) }, interview),
      );
      const answered = taskOf(
        await call('SendMessage', { message: userMessage('b', { contextId }) }, interview),
      );
      taskOf(
        await call(
          'SendMessage',
          { message: userMessage('Bo', { taskId: answered.id }) },
          interview,
        ),
      );
      const dropped = taskOf(
        await call('SendMessage', { message: userMessage('c', { contextId }) }, interview),
      );
      ok(await call('CancelTask', { id: dropped.id }, interview));
      const filtered = async (params: Record<string, unknown>, options?: CallOptions) => {
        const list = ok<WireList>(await call('ListTasks', params, options));
        expect(list.totalSize).toBe(list.tasks.length);
        return ids(list);
      };
      expect(await filtered({ contextId }, interview)).toStrictEqual([
        dropped.id,
        answered.id,
        waiting.id,
      ]);
      for (const [status, expected] of [
        ['TASK_STATE_INPUT_REQUIRED', [waiting.id]],
        ['TASK_STATE_COMPLETED', [answered.id]],
        ['TASK_STATE_CANCELED', [dropped.id]],
        ['TASK_STATE_WORKING', []],
      ] as const) {
        expect(await filtered({ contextId, status }, interview), status).toStrictEqual(expected);
      }
      // Every COMPLETED interview task of the caller, whatever its context, and nothing else.
      const everyCompleted = await filtered(
        { status: 'TASK_STATE_COMPLETED', pageSize: 100 },
        interview,
      );
      expect(everyCompleted).toContain(answered.id);
      expect(everyCompleted).toContain(completedInterview.id);
      expect(everyCompleted).not.toContain(waiting.id);
      expect(everyCompleted).not.toContain(waitingInterview.id);
      const since = { contextId: listContext, statusTimestampAfter: listed[1]?.status.timestamp };
      expect(await filtered({ ...since, status: 'TASK_STATE_COMPLETED' })).toStrictEqual(
        newestFirst().slice(0, 2),
      );
      expect(await filtered({ ...since, status: 'TASK_STATE_CANCELED' })).toStrictEqual([]);
      const future = new Date(Date.now() + 3_600_000).toISOString();
      expect(
        await filtered({ contextId: listContext, statusTimestampAfter: future }),
      ).toStrictEqual([]);
    });

    it('includeArtifacts: true puts each task’s artifacts back, false and absent leave them out; historyLength applies to each task', async () => {
      const list = ok<WireList>(
        await call('ListTasks', { contextId: listContext, includeArtifacts: true }),
      );
      expect(list.tasks.map((t) => t.artifacts?.[0]?.parts[0]?.text)).toStrictEqual([
        'third',
        'second',
        'first',
      ]);
      for (const params of [{}, { includeArtifacts: false }]) {
        const plain = ok<WireList>(await call('ListTasks', { contextId: listContext, ...params }));
        expect(plain.tasks).toHaveLength(3);
        for (const task of plain.tasks) {
          expect(task).not.toHaveProperty('artifacts');
          expect(task.history).toHaveLength(1);
        }
      }
      const bare = ok<WireList>(
        await call('ListTasks', {
          contextId: listContext,
          includeArtifacts: true,
          historyLength: 0,
        }),
      );
      for (const task of bare.tasks) {
        expect(task).not.toHaveProperty('history');
        expect(task.artifacts?.map((a) => a.artifactId)).toStrictEqual(['echo']);
      }
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
    refused(
      invalid.map(([title, params, field, options]) => ({
        title: `${title} → INVALID_PARAMS naming the field`,
        send: () => call('ListTasks', params, options),
        reason: 'INVALID_PARAMS',
        fields: [field],
      })),
    );
  });

  describe('CancelTask (§10.8)', () => {
    it('a WORKING countdown → CANCELED at once, from the worker; it makes no further progress; cancelling it again → TASK_NOT_CANCELABLE', async () => {
      const countdownAgent = { agent: 'countdown' };
      const stepMs = 300;
      // Thirty seconds of countdown: still running when the cancel comes, however late the poll sees step 2.
      const steps = 100;
      const started = taskOf(
        await call(
          'SendMessage',
          { message: countdown(steps, stepMs), configuration: { returnImmediately: true } },
          countdownAgent,
        ),
      );
      const working = await eventually(
        async () => ok<WireTask>(await call('GetTask', { id: started.id }, countdownAgent)),
        (t) =>
          t.status.state === 'TASK_STATE_WORKING' &&
          Number(/^step (\d+)\//.exec(t.status.message?.parts[0]?.text ?? '')?.[1] ?? 0) >= 2,
      );
      expect(working.artifacts?.[0]?.artifactId).toBe('countdown');
      const canceled = ok<WireTask>(await call('CancelTask', { id: started.id }, countdownAgent));
      expect(canceled.id).toBe(started.id);
      expect(canceled.status.state).toBe('TASK_STATE_CANCELED');
      const log = await taskEvents(platform.db.pool, 'demo', started.id);
      // CANCELED by the worker, not by the deadline (which the lease sweeper, a `system` actor, enforces).
      const ended = log.filter(
        (e) =>
          e.event_type === 'TaskStatusUpdated' &&
          (e.data['status'] as { state: string }).state === 'TASK_STATE_CANCELED',
      );
      expect(ended.map((e) => e.metadata.actor.kind)).toStrictEqual(['agent-worker']);
      const logged = log.length;
      await new Promise((resolve) => setTimeout(resolve, 3 * stepMs));
      expect(await taskEvents(platform.db.pool, 'demo', started.id)).toHaveLength(logged);
      const later = ok<WireTask>(await call('GetTask', { id: started.id }, countdownAgent));
      expect(later.status.state).toBe('TASK_STATE_CANCELED');
      expect(later.artifacts?.[0]?.parts.length ?? 0).toBeLessThan(steps);
      expectError(
        await call('CancelTask', { id: started.id }, countdownAgent),
        binding,
        'TASK_NOT_CANCELABLE',
        { metadata: { taskId: started.id } },
      );
    });

    refused([
      unknownTask('an unknown id → TASK_NOT_FOUND', (id) => call('CancelTask', { id })),
      {
        title: 'a COMPLETED task → TASK_NOT_CANCELABLE naming it',
        send: () => call('CancelTask', { id: completedEcho.id }),
        reason: 'TASK_NOT_CANCELABLE',
        metadata: () => ({ taskId: completedEcho.id }),
      },
    ]);
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
      const chunks = list.filter((e) => 'artifactUpdate' in e);
      expect(chunks.map(chunkText)).toStrictEqual(['2', '1']);
      // §10.6: the last chunk, and only it, says so.
      expect(
        chunks.map((e) => (e['artifactUpdate'] as { lastChunk?: boolean }).lastChunk === true),
      ).toStrictEqual([false, true]);
      expect(list.slice(0, -1).map(stateOfEvent)).not.toContain('TASK_STATE_COMPLETED');
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

    it('SendStreamingMessage ends with the turn: INPUT_REQUIRED closes the stream; the answer streamed on the same task (through the tenant-routed entry point) ends at COMPLETED', async () => {
      const asked = expectTaskStream(
        events(
          await client().stream(
            'SendStreamingMessage',
            { message: userMessage('Hello') },
            { agent: 'interview' },
          ),
        ),
        'TASK_STATE_INPUT_REQUIRED',
      );
      const answered = expectTaskStream(
        events(
          await client().stream(
            'SendStreamingMessage',
            { message: userMessage('Ada', { taskId: asked }) },
            { agent: 'interview', routing: 'tenant' },
          ),
        ),
        'TASK_STATE_COMPLETED',
      );
      expect(answered).toBe(asked);
    });

    refused([
      {
        title: 'SubscribeToTask of a terminal task → UNSUPPORTED_OPERATION before any event',
        send: () => client().stream('SubscribeToTask', { id: completedEcho.id }),
        reason: 'UNSUPPORTED_OPERATION',
      },
      {
        title: 'SendStreamingMessage to a terminal task → UNSUPPORTED_OPERATION before any event',
        send: () =>
          client().stream('SendStreamingMessage', {
            message: userMessage('late', { taskId: completedEcho.id }),
          }),
        reason: 'UNSUPPORTED_OPERATION',
      },
      {
        title: 'a stream without an API key → UNAUTHENTICATED before any event',
        send: () =>
          client().stream('SendStreamingMessage', { message: userMessage('x') }, { apiKey: null }),
        reason: 'UNAUTHENTICATED',
      },
      {
        title: 'a stream with A2A-Version 2.0 → VERSION_NOT_SUPPORTED before any event',
        send: (id) => client().stream('SubscribeToTask', { id }, { version: '2.0' }),
        reason: 'VERSION_NOT_SUPPORTED',
      },
      unknownTask('SubscribeToTask of an unknown task → TASK_NOT_FOUND before any event', (id) =>
        client().stream('SubscribeToTask', { id }),
      ),
      unknownTask(
        'SendStreamingMessage naming an unknown taskId → TASK_NOT_FOUND before any event',
        (taskId) =>
          client().stream('SendStreamingMessage', { message: userMessage('x', { taskId }) }),
      ),
      {
        title: 'SendStreamingMessage without a message → INVALID_PARAMS before any event',
        send: () => client().stream('SendStreamingMessage', {}),
        reason: 'INVALID_PARAMS',
        fields: ['message'],
      },
      {
        title:
          'SendStreamingMessage with a message without messageId and parts → INVALID_PARAMS before any event',
        send: () => client().stream('SendStreamingMessage', { message: { role: 'ROLE_USER' } }),
        reason: 'INVALID_PARAMS',
        fields: ['message.messageId'],
      },
    ]);
  });

  describe('push-notification configs (§6 rows 7–11, §10.10)', () => {
    const hooks = { agent: 'echo' };
    /** A task of echo (it declares push notifications), completed: webhooks may be registered at any time. */
    const hooksTask = async (configuration: Record<string, unknown> = {}): Promise<WireTask> =>
      taskOf(await call('SendMessage', { message: userMessage('hook me'), configuration }, hooks));
    const configOf = (outcome: CallOutcome): Record<string, unknown> =>
      ok<Record<string, unknown>>(outcome);

    it('the card of an agent that allows push declares it; the card of one that does not says so', async () => {
      const capabilities = async (agent: string) => {
        const card = await fetch(
          `${platform.baseUrl}/agents/demo/${agent}/.well-known/agent-card.json`,
        );
        return ((await card.json()) as { capabilities: Record<string, unknown> }).capabilities;
      };
      expect((await capabilities('echo'))['pushNotifications']).toBe(true);
      expect((await capabilities(NO_PUSH_AGENT))['pushNotifications']).toBe(false);
    });

    it('create with a client id, get, list, delete (idempotent); the config is gone after', async () => {
      const task = await hooksTask();
      const id = `cfg-${randomUUID()}`;
      const sent = {
        id,
        url: 'https://hooks.example.org/a2a?x=1',
        token: 'tok-123',
        authentication: { scheme: 'Bearer', credentials: 's3cr3t' },
      };
      const expected = { ...sent, taskId: task.id };
      expect(
        configOf(
          await call('CreateTaskPushNotificationConfig', { taskId: task.id, ...sent }, hooks),
        ),
      ).toStrictEqual(expected);
      expect(
        configOf(await call('GetTaskPushNotificationConfig', { taskId: task.id, id }, hooks)),
      ).toStrictEqual(expected);
      expect(
        ok(await call('ListTaskPushNotificationConfigs', { taskId: task.id }, hooks)),
      ).toStrictEqual({ configs: [expected] });
      for (let time = 0; time < 2; time++) {
        ok(await call('DeleteTaskPushNotificationConfig', { taskId: task.id, id }, hooks));
      }
      expectError(
        await call('GetTaskPushNotificationConfig', { taskId: task.id, id }, hooks),
        binding,
        'TASK_NOT_FOUND',
      );
      // Empty: ProtoJSON of the gRPC binding leaves an empty repeated field out.
      const left = ok<{ configs?: unknown[] }>(
        await call('ListTaskPushNotificationConfigs', { taskId: task.id }, hooks),
      );
      expect(left.configs ?? []).toStrictEqual([]);
    });

    it('create without an id gets one assigned; creating an id again replaces that config', async () => {
      const task = await hooksTask();
      const made = configOf(
        await call(
          'CreateTaskPushNotificationConfig',
          { taskId: task.id, url: 'https://hooks.example.org/one' },
          hooks,
        ),
      );
      expect(made['id']).toMatch(/^[0-9a-f-]{36}$/);
      const replaced = configOf(
        await call(
          'CreateTaskPushNotificationConfig',
          { taskId: task.id, id: made['id'], url: 'https://hooks.example.org/two' },
          hooks,
        ),
      );
      expect(replaced).toStrictEqual({
        id: made['id'],
        taskId: task.id,
        url: 'https://hooks.example.org/two',
      });
      expect(
        ok(await call('ListTaskPushNotificationConfigs', { taskId: task.id }, hooks)),
      ).toStrictEqual({ configs: [replaced] });
    });

    it('list pages by config id with pageSize and nextPageToken', async () => {
      const task = await hooksTask();
      for (const id of ['c', 'a', 'b']) {
        configOf(
          await call(
            'CreateTaskPushNotificationConfig',
            { taskId: task.id, id, url: `https://hooks.example.org/${id}` },
            hooks,
          ),
        );
      }
      const first = ok<{ configs: { id: string }[]; nextPageToken?: string }>(
        await call('ListTaskPushNotificationConfigs', { taskId: task.id, pageSize: 2 }, hooks),
      );
      expect(first.configs.map((c) => c.id)).toStrictEqual(['a', 'b']);
      expect(first.nextPageToken).toMatch(/\S/);
      const second = ok<{ configs: { id: string }[]; nextPageToken?: string }>(
        await call(
          'ListTaskPushNotificationConfigs',
          { taskId: task.id, pageSize: 2, pageToken: first.nextPageToken },
          hooks,
        ),
      );
      expect(second.configs.map((c) => c.id)).toStrictEqual(['c']);
      expect(second.nextPageToken ?? '').toBe('');
    });

    it('SendMessage registers an inline config for the task it creates, in the same append', async () => {
      const id = `inline-${randomUUID()}`;
      const task = await hooksTask({
        taskPushNotificationConfig: { id, url: 'https://hooks.example.org/inline', token: 't' },
      });
      expect(
        ok(await call('ListTaskPushNotificationConfigs', { taskId: task.id }, hooks)),
      ).toStrictEqual({
        configs: [{ id, taskId: task.id, url: 'https://hooks.example.org/inline', token: 't' }],
      });
      const types = (await taskEvents(platform.db.pool, 'demo', task.id)).map((e) => e.event_type);
      expect(types.slice(0, 2)).toStrictEqual(['TaskSubmitted', 'PushConfigRegistered']);
    });

    refused([
      unknownTask(
        'CreateTaskPushNotificationConfig for an unknown task → TASK_NOT_FOUND',
        (taskId) =>
          call(
            'CreateTaskPushNotificationConfig',
            { taskId, url: 'https://hooks.example.org/' },
            hooks,
          ),
      ),
      unknownTask('ListTaskPushNotificationConfigs of an unknown task → TASK_NOT_FOUND', (taskId) =>
        call('ListTaskPushNotificationConfigs', { taskId }, hooks),
      ),
      unknownTask(
        'DeleteTaskPushNotificationConfig of an unknown task → TASK_NOT_FOUND',
        (taskId) => call('DeleteTaskPushNotificationConfig', { taskId, id: 'cfg' }, hooks),
      ),
      {
        title: 'GetTaskPushNotificationConfig of an unknown config id → TASK_NOT_FOUND',
        send: async (id) =>
          call('GetTaskPushNotificationConfig', { taskId: (await hooksTaskOnce()).id, id }, hooks),
        reason: 'TASK_NOT_FOUND',
      },
      ...(
        [
          ['a URL that is not http(s)', { url: 'ftp://hooks.example.org/' }, 'url'],
          ['a URL that does not parse', { url: 'not a url' }, 'url'],
          ['a URL with user info', { url: 'https://user:pw@hooks.example.org/' }, 'url'],
          [
            'an authentication scheme that is not a token',
            { url: 'https://hooks.example.org/', authentication: { scheme: 'Bearer x' } },
            'authentication.scheme',
          ],
          [
            'credentials with a line break',
            {
              url: 'https://hooks.example.org/',
              authentication: { scheme: 'Bearer', credentials: 'a\r\nX-Evil: 1' },
            },
            'authentication.credentials',
          ],
        ] as const
      ).map(
        ([what, config, field]): Refusal => ({
          title: `CreateTaskPushNotificationConfig with ${what} → INVALID_PARAMS`,
          send: async () =>
            call(
              'CreateTaskPushNotificationConfig',
              { taskId: (await hooksTaskOnce()).id, ...config },
              hooks,
            ),
          reason: 'INVALID_PARAMS',
          fields: [field],
        }),
      ),
      {
        title: 'ListTaskPushNotificationConfigs with a page token not issued here → INVALID_PARAMS',
        send: async () =>
          call(
            'ListTaskPushNotificationConfigs',
            { taskId: (await hooksTaskOnce()).id, pageToken: 'bm90LWEtdG9rZW4' },
            hooks,
          ),
        reason: 'INVALID_PARAMS',
        fields: ['pageToken'],
      },
      {
        title:
          'SendMessage with an inline config to an agent without push → PUSH_NOTIFICATION_NOT_SUPPORTED',
        send: () =>
          call(
            'SendMessage',
            {
              message: userMessage('no hooks here'),
              configuration: { taskPushNotificationConfig: { url: 'https://hooks.example.org/' } },
            },
            { agent: NO_PUSH_AGENT },
          ),
        reason: 'PUSH_NOTIFICATION_NOT_SUPPORTED',
      },
      {
        title: 'SendMessage with an inline config whose URL is not http(s) → INVALID_PARAMS',
        send: () =>
          call(
            'SendMessage',
            {
              message: userMessage('bad hook'),
              configuration: { taskPushNotificationConfig: { url: 'file:///etc/passwd' } },
            },
            hooks,
          ),
        reason: 'INVALID_PARAMS',
        fields: ['configuration.taskPushNotificationConfig.url'],
      },
    ]);

    /** One task of echo for the refusal rows, made on first use. */
    let once: Promise<WireTask> | undefined;
    function hooksTaskOnce(): Promise<WireTask> {
      once ??= hooksTask();
      return once;
    }
  });

  describe('capability gating (§6 "Capability gating")', () => {
    const push: [UnaryRpc, Record<string, unknown>][] = [
      ['CreateTaskPushNotificationConfig', { url: 'https://example.com/hook' }],
      ['GetTaskPushNotificationConfig', { id: 'cfg-1' }],
      ['ListTaskPushNotificationConfigs', {}],
      ['DeleteTaskPushNotificationConfig', { id: 'cfg-1' }],
    ];
    refused([
      ...push.map(
        ([method, params]): Refusal => ({
          title: `${method} to an agent without push → PUSH_NOTIFICATION_NOT_SUPPORTED`,
          send: () =>
            call(method, { taskId: completedEcho.id, ...params }, { agent: NO_PUSH_AGENT }),
          reason: 'PUSH_NOTIFICATION_NOT_SUPPORTED',
        }),
      ),
      {
        title:
          'GetExtendedAgentCard of an agent without the capability (countdown) → UNSUPPORTED_OPERATION',
        send: () => call('GetExtendedAgentCard', {}, { agent: 'countdown' }),
        reason: 'UNSUPPORTED_OPERATION',
      },
      {
        title:
          'GetExtendedAgentCard of an agent that declares one but has none → EXTENDED_AGENT_CARD_NOT_CONFIGURED',
        send: () => call('GetExtendedAgentCard', {}, { agent: UNCONFIGURED_AGENT }),
        reason: 'EXTENDED_AGENT_CARD_NOT_CONFIGURED',
      },
    ]);

    it('GetExtendedAgentCard of echo follows its card: when declared, the signed extended card (its own skills, every interface) for an authenticated caller only; else UNSUPPORTED_OPERATION', async () => {
      const outcome = await call('GetExtendedAgentCard', {});
      if (echoCard.capabilities?.extendedAgentCard === true) {
        const card = ok<{
          name: string;
          capabilities?: { extendedAgentCard?: boolean };
          skills: { id: string }[];
          signatures?: unknown[];
          supportedInterfaces: Record<string, unknown>[];
        }>(outcome);
        expect(card.name).toBe(echoCard.name);
        expect(card.capabilities?.extendedAgentCard).toBe(true);
        expect(card.signatures?.length).toBeGreaterThan(0);
        const extendedSkills = (AGENT_PROFILES.echo.extendedCard?.skills ?? []).map((s) => s.id);
        expect(extendedSkills.length).toBeGreaterThan(0);
        expect(card.skills.map((s) => s.id)).toEqual(expect.arrayContaining(extendedSkills));
        expect(card.supportedInterfaces).toContainEqual({
          url: platform.grpcTarget,
          protocolBinding: 'GRPC',
          tenant: 'demo/echo',
          protocolVersion: '1.0',
        });
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
    refused([
      ...['0.3', '0.5'].map(
        (version): Refusal => ({
          title: `A2A-Version ${version} → VERSION_NOT_SUPPORTED`,
          // A refused SendMessage must not start a task either.
          send: () =>
            version === '0.3'
              ? call('SendMessage', { message: userMessage('old') }, { version })
              : call('GetTask', { id: completedEcho.id }, { version }),
          reason: 'VERSION_NOT_SUPPORTED',
        }),
      ),
      {
        title: 'no A2A-Version means 0.3 → VERSION_NOT_SUPPORTED',
        send: () => call('GetTask', { id: completedEcho.id }, { version: null }),
        reason: 'VERSION_NOT_SUPPORTED',
      },
      {
        title: 'no API key → UNAUTHENTICATED',
        send: () => call('GetTask', { id: completedEcho.id }, { apiKey: null }),
        reason: 'UNAUTHENTICATED',
      },
      {
        title: 'a wrong API key → UNAUTHENTICATED',
        send: () => call('GetTask', { id: completedEcho.id }, { apiKey: `wrong-${randomUUID()}` }),
        reason: 'UNAUTHENTICATED',
      },
    ]);

    it('§10.1 A2A-Version 1.0.3 is served as 1.0 (the patch is not considered)', async () => {
      const served = await call('GetTask', { id: completedEcho.id }, { version: '1.0.3' });
      expect(ok<WireTask>(served).id).toBe(completedEcho.id);
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

    it('§10.2 a declared extension that is requested is echoed on a success, an error and a stream; an unknown one is ignored; none requested, none echoed', async () => {
      const requested = { extensions: [RESUMABLE_STREAMS, 'https://example.com/ext/unknown/v1'] };
      const outcome = await call('GetTask', { id: completedEcho.id }, requested);
      expect(ok<WireTask>(outcome).id).toBe(completedEcho.id);
      expect(outcome.activatedExtensions).toStrictEqual([RESUMABLE_STREAMS]);
      const failed = expectError(
        await call('GetTask', { id: randomUUID() }, requested),
        binding,
        'TASK_NOT_FOUND',
      );
      expect(failed.activatedExtensions).toStrictEqual([RESUMABLE_STREAMS]);
      const streamed = await client().stream(
        'SendStreamingMessage',
        { message: userMessage('ext') },
        requested,
      );
      expectTaskStream(events(streamed), 'TASK_STATE_COMPLETED');
      expect(streamed.activatedExtensions).toStrictEqual([RESUMABLE_STREAMS]);
      const plain = await call('GetTask', { id: completedEcho.id });
      expect(plain.activatedExtensions).toStrictEqual([]);
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
    const { role: _role, ...roleless } = userMessage('x');
    refused([
      ...invalidMessages.map(
        ([title, params, field]): Refusal => ({
          title: `§3 REQUIRED fields: SendMessage with ${title} → INVALID_PARAMS with a BadRequest violation`,
          send: () => call('SendMessage', params),
          reason: 'INVALID_PARAMS',
          fields: [field],
        }),
      ),
      {
        title: '§4.1 a client message with ROLE_AGENT → INVALID_PARAMS naming message.role',
        send: () => call('SendMessage', { message: userMessage('x', { role: 'ROLE_AGENT' }) }),
        reason: 'INVALID_PARAMS',
        fields: ['message.role'],
      },
      {
        title: '§5 a role the proto does not define → INVALID_PARAMS naming message.role',
        send: () =>
          call(
            'SendMessage',
            { message: userMessage('x', { role: 'ROLE_BOSS' }) },
            // gRPC: the role field (4) of the message as the number 99.
            {
              grpcRaw: {
                omit: ['message'],
                append: rawField.message(2, roleless, rawField.varint(4, 99)),
              },
            },
          ),
        reason: 'INVALID_PARAMS',
        fields: ['message.role'],
      },
    ]);
  });

  describe('tenant routing (§10.9)', () => {
    it('the per-agent URL and the tenant-routed entry point give the same results; the tenant selects the agent', async () => {
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
      const [echoed, counted] = await Promise.all(
        ['echo', 'countdown'].map(async (agent) =>
          taskOf(
            await call('SendMessage', { message: countdown(1, 10) }, { agent, routing: 'tenant' }),
          ),
        ),
      );
      expect(echoed?.artifacts?.map((a) => a.artifactId)).toStrictEqual(['echo']);
      expect(counted?.artifacts?.map((a) => a.artifactId)).toStrictEqual(['countdown']);
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

    it('another agent’s tasks are not listed', async () => {
      const list = ok<WireList>(
        await call('ListTasks', { contextId: listContext }, { agent: 'interview' }),
      );
      expect(list).toStrictEqual({ tasks: [], nextPageToken: '', pageSize: 50, totalSize: 0 });
    });

    it('§10.13 another tenant does not see this tenant’s task: get, cancel and subscribe answer exactly as for an id that never existed; its list is empty', async () => {
      const acme = { tenantId: 'acme', apiKey: ACME_KEY };
      const probes: ((id: string) => Promise<CallOutcome | StreamOutcome>)[] = [
        (id) => call('GetTask', { id }, acme),
        (id) => call('CancelTask', { id }, acme),
        (id) => client().stream('SubscribeToTask', { id }, acme),
      ];
      for (const probe of probes) {
        const unknownId = randomUUID();
        const hidden = await probe(completedEcho.id);
        const unknown = await probe(unknownId);
        expectError(unknown, binding, 'TASK_NOT_FOUND', { metadata: { taskId: unknownId } });
        expect(withoutId(hidden, completedEcho.id)).toStrictEqual(withoutId(unknown, unknownId));
      }
      expect(ok<WireList>(await call('ListTasks', {}, acme))).toStrictEqual({
        tasks: [],
        nextPageToken: '',
        pageSize: 50,
        totalSize: 0,
      });
    });

    refused([
      {
        title: 'another agent’s task → TASK_NOT_FOUND',
        send: () => call('GetTask', { id: completedEcho.id }, { agent: 'interview' }),
        reason: 'TASK_NOT_FOUND',
      },
      ...['demo', 'demo/echo/extra', '/echo'].map(
        (tenant): Refusal => ({
          title: `a tenant value that names no agent (${tenant}) → INVALID_PARAMS naming tenant`,
          send: () => call('GetTask', { id: completedEcho.id, tenant }, { routing: 'tenant' }),
          reason: 'INVALID_PARAMS',
          fields: ['tenant'],
        }),
      ),
      ...[`nosuch${Date.now()}`, 'acme'].map(
        (tenantId): Refusal => ({
          title: `the tenant of ${tenantId === 'acme' ? 'another' : 'an unknown'} tenant with the demo key → UNAUTHENTICATED`,
          send: () => call('GetTask', { id: completedEcho.id }, { routing: 'tenant', tenantId }),
          reason: 'UNAUTHENTICATED',
        }),
      ),
    ]);
  });

  it('§10.13 input is validated before processing: every refused request above, sent again, changes no table and no task', async () => {
    const pool = platform.db.pool;
    // Nothing may be running: queued or leased work would write meanwhile.
    await eventually(
      () => writeCounts(pool),
      (counts) => counts.work === 0,
    );
    const snapshot = async () => ({
      counts: await writeCounts(pool),
      tasks: [
        ok(await call('GetTask', { id: completedEcho.id })),
        ok(await call('GetTask', { id: waitingInterview.id }, { agent: 'interview' })),
      ],
    });
    const before = await snapshot();
    expect(refusals.length).toBeGreaterThan(40);
    for (const row of refusals) {
      const outcome = await row.send(randomUUID());
      expect(outcome.ok ? 'a success' : outcome.reason, row.title).toBe(row.reason);
    }
    expect(await snapshot()).toStrictEqual(before);
  });
});

/**
 * Where the task id is a field of the request (the HTTP+JSON binding has it in the path, spec digest §8.2).
 */
describe.each(['JSONRPC', 'GRPC'] as const)('%s binding, the id as a request field', (binding) => {
  it('§4.3 GetTask without an id → INVALID_PARAMS naming id', async () => {
    expectError(await clients[binding].call('GetTask', {}), binding, 'INVALID_PARAMS', {
      fields: ['id'],
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
        { versionInQuery: true, version: '0.5' },
      ),
      binding,
      'VERSION_NOT_SUPPORTED',
    );
  });

  it.each(['demo/interview', 'demo'])(
    '§10.9 on a per-agent URL, a tenant value that is not the agent’s (%s) → INVALID_PARAMS naming tenant',
    async (tenant) => {
      expectError(
        await clients[binding].call('GetTask', { id: completedEcho.id, tenant }),
        binding,
        'INVALID_PARAMS',
        { fields: ['tenant'] },
      );
    },
  );
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
    ['A2A-Version 0.5', (c) => c.call('GetTask', { id: completedEcho.id }, { version: '0.5' })],
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

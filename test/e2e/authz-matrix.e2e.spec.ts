/**
 * The authorization matrix (issue 12, point 4): every A2A operation × every binding × every caller that must
 * not reach a principal's task — a key of another tenant, a key of another principal of the same tenant, the
 * owner's revoked key, the owner's expired key and the owner's key without the operation's scope — against
 * the real standalone platform.
 *
 * The rows are generated from the list of operations: the table of how to call each one is a Record over
 * every A2A method (`A2aJsonRpcMethod`), so a new operation does not compile until it has its row, and the
 * first test checks that the table, `A2A_JSON_RPC_METHODS` and `OPERATION_SCOPES` name the same methods with
 * the same scopes.
 *
 * Every refused row asserts the exact error (ErrorInfo reason, domain and metadata; the binding's status:
 * JSON-RPC code and HTTP status, HTTP+JSON status, gRPC code — spec digest §7.4, §8.3, §8b, §9.1, written
 * here, not read from the platform's tables), that the same call naming ids that never existed gets the
 * identical answer apart from the ids (nothing about the owner's task is revealed, §10.13), that a stream
 * is refused with a plain error before it opens (§10.6), and that no row of any table changed: a checksum of
 * every row of every table of the `events`, `read` and `ops` schemas. The `audit` schema is left out on
 * purpose: recording refused calls is its job (docs/admin.md, "Audit"); so is `ops.worker_sessions`, which each
 * task-service replica rewrites on a timer with its connected workers (no call writes it).
 *
 * Rows where the caller is allowed to ask assert that the answer shows nothing of the owner's and change
 * nothing either: another principal's ListTasks of the owner's context (an empty list, where the owner sees
 * the task), and GetExtendedAgentCard, which needs no scope — any authenticated caller of the tenant gets it
 * (spec digest §10.11), so its "missing scope" row uses a key holding no A2A scope at all (`tenant:admin`
 * alone) and expects the owner's card. The task-addressed rows send the owner's task id (SendMessage and
 * SendStreamingMessage as `message.taskId`); another principal's messages that name no task are the last
 * block: they start the caller's own task, in the owner's context even, and show nothing of the owner's.
 */
import { A2A_JSON_RPC_METHODS, type A2aJsonRpcMethod } from '@lib/a2a-protocol';
import { OPERATION_SCOPES, TENANT_SCOPES, type Scope } from '@lib/authz';
import { seedTenant } from '@lib/tenancy';
import { AGENT_PROFILES } from '@lib/worker-sdk';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bindingClients,
  type BindingClient,
  type BindingName,
  type CallOptions,
  type CallOutcome,
  type ErrorOutcome,
  type StreamOutcome,
} from './support/binding-clients';
import { eventually } from './support/json-rpc';
import { bootStandalone, taskEvents, writeCounts, type Standalone } from './support/platform';
import { A2A_DOMAIN, PLATFORM_DOMAIN } from './support/wire';

const ADMIN_TOKEN = `bootstrap-${randomUUID()}`;
const BINDINGS: readonly BindingName[] = ['JSONRPC', 'HTTP+JSON', 'GRPC'];
/** Stops in INPUT_REQUIRED: the owner's task stays open, so it can still be canceled and subscribed to. */
const INTERVIEW = 'interview';
/** Declares an extended agent card (the interview agent declares none). */
const ECHO = 'echo';
/** The owner of the task every row aims at, in both tenants. */
const OWNER = 'victim';
/** Another principal of the owner's tenant. */
const INTRUDER = 'intruder';
/** Text only the owner's task holds: no answer to anyone else may contain it. */
const OWNER_SECRET = `owner-secret-${randomUUID()}`;
/** Never called: bootStandalone runs no push dispatcher. */
const OWNER_HOOK = 'http://127.0.0.1:9/owner-hook';
const INTRUDER_HOOK = 'http://127.0.0.1:9/intruder-hook';
const OWNER_CONFIG_ID = 'owner-hook';
/** The other tenant, with a key of a principal named like the owner and every scope a tenant key may hold. */
const FOREIGN_TENANT = 'acme';
const FOREIGN_KEY = `acme-key-${randomUUID()}`;

// ---------------------------------------------------------------------------------------------------------
// The expected errors (spec digest §7.4, §8.3, §8b, §9.1 v1.0.1 column)
// ---------------------------------------------------------------------------------------------------------

type Refusal = 'UNAUTHENTICATED' | 'PERMISSION_DENIED' | 'TASK_NOT_FOUND';

interface SpecWire {
  jsonRpcCode: number;
  /** HTTP status of the JSON-RPC envelope. */
  jsonRpcHttp: number;
  httpStatus: number;
  /** `error.status` of the HTTP+JSON body. */
  status: string;
  grpcCode: string;
  domain: string;
}

const SPEC_WIRE: Readonly<Record<Refusal, SpecWire>> = {
  // The spec has no JSON-RPC code for authentication and authorization failures and reserves
  // -32001…-32099 for A2A errors, which leaves -32000; the HTTP status tells the two apart.
  UNAUTHENTICATED: {
    jsonRpcCode: -32000,
    jsonRpcHttp: 401,
    httpStatus: 401,
    status: 'UNAUTHENTICATED',
    grpcCode: 'UNAUTHENTICATED',
    domain: PLATFORM_DOMAIN,
  },
  PERMISSION_DENIED: {
    jsonRpcCode: -32000,
    jsonRpcHttp: 403,
    httpStatus: 403,
    status: 'PERMISSION_DENIED',
    grpcCode: 'PERMISSION_DENIED',
    domain: PLATFORM_DOMAIN,
  },
  TASK_NOT_FOUND: {
    jsonRpcCode: -32001,
    jsonRpcHttp: 200,
    httpStatus: 404,
    status: 'NOT_FOUND',
    grpcCode: 'NOT_FOUND',
    domain: A2A_DOMAIN,
  },
};

// ---------------------------------------------------------------------------------------------------------
// Fixture
// ---------------------------------------------------------------------------------------------------------

/** What a request names: a task, its context and one of its push configs. */
interface Target {
  taskId: string;
  contextId: string;
  configId: string;
}

/** Ids that never existed, for the comparison every refused row makes. */
const unknownTarget = (): Target => ({
  taskId: randomUUID(),
  contextId: randomUUID(),
  configId: `hook-${randomUUID()}`,
});

interface WireTask {
  id: string;
  contextId: string;
  status: { state: string };
  history?: { messageId: string; role: string }[];
}

interface WireList {
  tasks: WireTask[];
  totalSize: number;
}

interface Keys {
  /** The owner's key with a client's scopes: the rows' control. */
  owner: string;
  intruder: string;
  foreign: string;
  revoked: string;
  expired: string;
  /** The owner's keys that lack the scopes of an operation, by those scopes (see {@link lackingScopes}). */
  lacking: Map<string, string>;
}

let platform: Standalone;
let clients: Record<BindingName, BindingClient>;
let closeClients: () => void = () => undefined;
let keys: Keys;
/** The owner's interview task (INPUT_REQUIRED) and its push config. */
let owned: Target;
/** The owner's task and push config as the owner saw them once set up. */
let ownedTask: WireTask;
let ownedConfig: unknown;
/** Every table of the schemas a call may write, as `schema.table`. */
let tables: string[];
/** The tasks the intruder started in the owner's context (last describe). */
const intruderTasks = new Set<string>();

// ---------------------------------------------------------------------------------------------------------
// The operations: how each is called, and what a caller may get that is allowed to ask
// ---------------------------------------------------------------------------------------------------------

/** Checks a successful answer of the caller against the owner's answer to the same call. */
type Check = (mine: unknown, owners: unknown) => void;

interface OperationCase {
  /** The scopes any one of which allows the operation (issue 12); checked against OPERATION_SCOPES. */
  scopes: readonly Scope[];
  agent: typeof INTERVIEW | typeof ECHO;
  /** The request; task-addressed operations name `target`'s ids (the owner's, or ids that never existed). */
  params(target: Target): Record<string, unknown>;
  /**
   * What another principal of the same tenant gets: TASK_NOT_FOUND, identical to the answer for an id that
   * never existed (§10.13 "unauthorized resources SHOULD look like not found"), or an answer, checked.
   */
  otherPrincipal: 'TASK_NOT_FOUND' | Check;
  /** Only for an operation that needs no scope: what a key holding no A2A scope at all gets. */
  withoutScope?: Check;
}

/** A message continuing `target`'s task; its messageId follows the task id, so masking hides both. */
const continuing = (target: Target) => ({
  messageId: `probe-${target.taskId}`,
  role: 'ROLE_USER',
  parts: [{ text: 'Mallory' }],
  taskId: target.taskId,
});

/** The extended card does not depend on who asks: the caller gets exactly the owner's. */
const sameCardAsOwner: Check = (mine, owners) => {
  expect(owners).toMatchObject({ name: AGENT_PROFILES.echo.name });
  expect(mine).toStrictEqual(owners);
};

const OPERATIONS: Readonly<Record<A2aJsonRpcMethod, OperationCase>> = {
  SendMessage: {
    scopes: ['a2a:message:send'],
    agent: INTERVIEW,
    params: (t) => ({ message: continuing(t) }),
    otherPrincipal: 'TASK_NOT_FOUND',
  },
  SendStreamingMessage: {
    scopes: ['a2a:message:send'],
    agent: INTERVIEW,
    params: (t) => ({ message: continuing(t) }),
    otherPrincipal: 'TASK_NOT_FOUND',
  },
  GetTask: {
    scopes: ['a2a:tasks:read', 'a2a:tasks:read-all'],
    agent: INTERVIEW,
    params: (t) => ({ id: t.taskId, historyLength: 10 }),
    otherPrincipal: 'TASK_NOT_FOUND',
  },
  ListTasks: {
    scopes: ['a2a:tasks:read', 'a2a:tasks:read-all'],
    agent: INTERVIEW,
    params: (t) => ({ contextId: t.contextId, includeArtifacts: true }),
    // The owner's context, filtered on: the owner sees the task, anyone else an empty list.
    otherPrincipal: (mine, owners) => {
      expect((owners as WireList).tasks.map((t) => t.id)).toStrictEqual([owned.taskId]);
      expect(mine).toMatchObject({ tasks: [], totalSize: 0 });
    },
  },
  CancelTask: {
    scopes: ['a2a:tasks:cancel'],
    agent: INTERVIEW,
    params: (t) => ({ id: t.taskId }),
    otherPrincipal: 'TASK_NOT_FOUND',
  },
  SubscribeToTask: {
    scopes: ['a2a:tasks:read', 'a2a:tasks:read-all'],
    agent: INTERVIEW,
    params: (t) => ({ id: t.taskId }),
    otherPrincipal: 'TASK_NOT_FOUND',
  },
  CreateTaskPushNotificationConfig: {
    scopes: ['a2a:push-config'],
    agent: INTERVIEW,
    // The owner's config id: replacing the owner's webhook is the attack.
    params: (t) => ({ taskId: t.taskId, id: t.configId, url: INTRUDER_HOOK }),
    otherPrincipal: 'TASK_NOT_FOUND',
  },
  GetTaskPushNotificationConfig: {
    scopes: ['a2a:push-config'],
    agent: INTERVIEW,
    params: (t) => ({ taskId: t.taskId, id: t.configId }),
    otherPrincipal: 'TASK_NOT_FOUND',
  },
  ListTaskPushNotificationConfigs: {
    scopes: ['a2a:push-config'],
    agent: INTERVIEW,
    params: (t) => ({ taskId: t.taskId }),
    otherPrincipal: 'TASK_NOT_FOUND',
  },
  DeleteTaskPushNotificationConfig: {
    scopes: ['a2a:push-config'],
    agent: INTERVIEW,
    params: (t) => ({ taskId: t.taskId, id: t.configId }),
    otherPrincipal: 'TASK_NOT_FOUND',
  },
  GetExtendedAgentCard: {
    // No scope: any authenticated caller of the tenant (§10.11 "MUST require authentication").
    scopes: [],
    agent: ECHO,
    params: () => ({}),
    otherPrincipal: sameCardAsOwner,
    withoutScope: sameCardAsOwner,
  },
};

/** The rows: every method, in the protocol's order. */
const METHODS: readonly A2aJsonRpcMethod[] = A2A_JSON_RPC_METHODS;

/**
 * The scopes of the owner's key that lacks an operation's: every scope a tenant key may hold but those; for
 * an operation that needs none, a key without any A2A scope (`tenant:admin` alone; a key needs one scope).
 */
function lackingScopes(method: A2aJsonRpcMethod): string[] {
  const allowed: readonly string[] = OPERATIONS[method].scopes;
  return allowed.length === 0
    ? ['tenant:admin']
    : TENANT_SCOPES.filter((scope) => !allowed.includes(scope));
}

// ---------------------------------------------------------------------------------------------------------
// The callers
// ---------------------------------------------------------------------------------------------------------

type Expected =
  | { refused: Refusal; metadata?: Record<string, string> }
  | { answers: Check; title: string };

interface CallerCase {
  title: string;
  key(method: A2aJsonRpcMethod): string;
  expected(method: A2aJsonRpcMethod): Expected;
}

const CALLERS: readonly CallerCase[] = [
  {
    title: `a key of another tenant (principal ${OWNER}, every scope)`,
    key: () => keys.foreign,
    expected: () => ({ refused: 'UNAUTHENTICATED' }),
  },
  {
    title: 'a key of another principal of the same tenant',
    key: () => keys.intruder,
    expected: (method) => {
      const other = OPERATIONS[method].otherPrincipal;
      return other === 'TASK_NOT_FOUND'
        ? { refused: 'TASK_NOT_FOUND' }
        : { answers: other, title: 'answers, showing nothing of the owner’s' };
    },
  },
  {
    title: 'the owner’s revoked key',
    key: () => keys.revoked,
    expected: () => ({ refused: 'UNAUTHENTICATED' }),
  },
  {
    title: 'the owner’s expired key',
    key: () => keys.expired,
    expected: () => ({ refused: 'UNAUTHENTICATED' }),
  },
  {
    title: 'the owner’s key without the operation’s scope',
    key: (method) => lackingKey(method),
    expected: (method) => {
      const { scopes, withoutScope } = OPERATIONS[method];
      if (scopes.length > 0) {
        return { refused: 'PERMISSION_DENIED', metadata: { requiredScopes: scopes.join(' ') } };
      }
      if (!withoutScope) {
        throw new Error(`${method} needs no scope: its row must say what a key without one gets`);
      }
      return { answers: withoutScope, title: 'needs no scope: answers like to the owner' };
    },
  },
];

function lackingKey(method: A2aJsonRpcMethod): string {
  const key = keys.lacking.get(lackingScopes(method).join(' '));
  if (key === undefined) {
    throw new Error(`no key lacking the scopes of ${method}`);
  }
  return key;
}

const titleOf = (expected: Expected): string =>
  'refused' in expected ? expected.refused : expected.title;

// ---------------------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------------------

/** A unary call or a stream (read to its end), whichever the method is. */
function invoke(
  client: BindingClient,
  method: A2aJsonRpcMethod,
  params: Record<string, unknown>,
  options: CallOptions,
): Promise<CallOutcome | StreamOutcome> {
  return method === 'SendStreamingMessage' || method === 'SubscribeToTask'
    ? client.stream(method, params, options)
    : client.call(method, params, options);
}

const describeOutcome = (outcome: CallOutcome | StreamOutcome): string => JSON.stringify(outcome);

/** The result of a successful unary call (a stream's events). */
function resultOf(outcome: CallOutcome | StreamOutcome): unknown {
  expect(outcome.ok, describeOutcome(outcome)).toBe(true);
  if (!outcome.ok) {
    return undefined;
  }
  return 'events' in outcome ? outcome.events : outcome.result;
}

/**
 * The error exactly as the spec wants it on `binding` (a stream's too: refused before it opens, so a plain
 * error, never a stream): the binding's status, one ErrorInfo with the reason, domain and metadata.
 */
function expectRefusal(
  outcome: CallOutcome | StreamOutcome,
  binding: BindingName,
  reason: Refusal,
  metadata: Record<string, string>,
): ErrorOutcome {
  const context = describeOutcome(outcome);
  expect(outcome.ok, `expected ${reason}, got ${context}`).toBe(false);
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
  expect(error.errorInfoDomain, context).toBe(spec.domain);
  expect(error.errorInfoMetadata, context).toStrictEqual(metadata);
  expect(error.badRequestFields, context).toStrictEqual([]);
  expect(error.message, context).not.toBe('');
  return error;
}

/** An outcome with the ids of `target` replaced by their names, to compare answers for different ids. */
function masked(outcome: CallOutcome | StreamOutcome, target: Target): string {
  let text = JSON.stringify(outcome);
  for (const name of ['taskId', 'contextId', 'configId'] as const) {
    text = text.split(target[name]).join(`<${name}>`);
  }
  return text;
}

/**
 * Every table of the schemas calls write, as `schema.table` (the audit schema and the worker sessions aside,
 * see the header).
 */
async function writableTables(): Promise<string[]> {
  const result = await platform.db.pool.query<{ name: string }>(
    `SELECT quote_ident(table_schema) || '.' || quote_ident(table_name) AS name
       FROM information_schema.tables
      WHERE table_schema IN ('events', 'read', 'ops') AND table_type = 'BASE TABLE'
        AND (table_schema, table_name) <> ('ops', 'worker_sessions')
      ORDER BY 1`,
  );
  return result.rows.map((r) => r.name);
}

/** Per table, its row count and a digest of every row, in a canonical order. */
async function checksum(): Promise<Record<string, string>> {
  const result = await platform.db.pool.query<{ name: string; sum: string }>(
    tables
      .map(
        (table) =>
          `SELECT '${table}' AS name, count(*) || ':' || md5(coalesce(string_agg(r::text, E'\\n' ORDER BY r::text), '')) AS sum FROM ${table} r`,
      )
      .join(' UNION ALL '),
  );
  return Object.fromEntries(result.rows.map((r) => [r.name, r.sum]));
}

/** The checksum once nothing is being written any more (two readings in a row agree). */
async function settledChecksum(): Promise<Record<string, string>> {
  let last = await checksum();
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    const next = await checksum();
    if (JSON.stringify(next) === JSON.stringify(last)) {
      return next;
    }
    last = next;
  }
}

/** The rows of the owner's task: its events, its view row and its push configs. */
async function ownerRows(): Promise<unknown> {
  const pool = platform.db.pool;
  const view = await pool.query(
    `SELECT * FROM read.task_view WHERE tenant_id = 'demo' AND task_id = $1`,
    [owned.taskId],
  );
  const configs = await pool.query(
    `SELECT * FROM ops.push_configs WHERE tenant_id = 'demo' AND task_id = $1 ORDER BY config_id`,
    [owned.taskId],
  );
  return {
    events: await taskEvents(pool, 'demo', owned.taskId),
    view: view.rows,
    configs: configs.rows,
  };
}

/** One admin API call (Bearer ADMIN_BOOTSTRAP_TOKEN). */
async function admin(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${platform.baseUrl}${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${ADMIN_TOKEN}`,
      ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  return {
    status: response.status,
    body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
  };
}

/** Issues an API key of the demo tenant through the admin API: its id and secret. */
async function issueKey(
  principalId: string,
  extra: { scopes?: readonly string[]; expiresAt?: string } = {},
): Promise<{ keyId: string; secret: string }> {
  const issued = await admin('POST', '/admin/v1/tenants/demo/api-keys', {
    principalId,
    label: 'authz-matrix',
    ...extra,
  });
  expect(issued.status, JSON.stringify(issued.body)).toBe(201);
  const credential = issued.body['credential'] as { keyId: string };
  return { keyId: credential.keyId, secret: issued.body['secret'] as string };
}

/** The options of the owner's calls to its interview agent (with the owner's client key). */
const owner = (): CallOptions => ({ agent: INTERVIEW, apiKey: keys.owner });

// ---------------------------------------------------------------------------------------------------------
// Setup: the owner's task, the callers' keys, each key shown to work before it is made not to
// ---------------------------------------------------------------------------------------------------------

beforeAll(async () => {
  platform = await bootStandalone('e2e_authz_matrix', { ADMIN_BOOTSTRAP_TOKEN: ADMIN_TOKEN });
  ({ clients, close: closeClients } = bindingClients(platform));
  const rpc = clients.JSONRPC;

  await seedTenant(platform.db.pool, {
    tenantId: FOREIGN_TENANT,
    displayName: 'Acme Corp',
    apiKeys: [
      {
        keyId: 'acme-victim',
        principalId: OWNER,
        secret: FOREIGN_KEY,
        scopes: [...TENANT_SCOPES],
      },
    ],
    // The same agent id as the owner's: only the tenant differs. No worker serves it.
    agents: [{ agentId: INTERVIEW, profile: AGENT_PROFILES.interview, workerSecret: randomUUID() }],
  });

  const revoked = await issueKey(OWNER);
  const lacking = new Map<string, string>();
  for (const method of METHODS) {
    const scopes = lackingScopes(method);
    const name = scopes.join(' ');
    if (!lacking.has(name)) {
      lacking.set(name, (await issueKey(OWNER, { scopes })).secret);
    }
  }
  keys = {
    owner: (await issueKey(OWNER)).secret,
    intruder: (await issueKey(INTRUDER)).secret,
    foreign: FOREIGN_KEY,
    revoked: revoked.secret,
    // Issued below, just before it is shown to work, so that it cannot expire first.
    expired: '',
    lacking,
  };

  // The owner's task, waiting for input, with a webhook.
  const sent = resultOf(
    await rpc.call(
      'SendMessage',
      {
        message: {
          messageId: `owner-${randomUUID()}`,
          role: 'ROLE_USER',
          parts: [{ text: OWNER_SECRET }],
        },
      },
      owner(),
    ),
  ) as { task: WireTask };
  expect(sent.task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
  owned = { taskId: sent.task.id, contextId: sent.task.contextId, configId: OWNER_CONFIG_ID };
  ownedConfig = resultOf(
    await rpc.call(
      'CreateTaskPushNotificationConfig',
      { taskId: owned.taskId, id: OWNER_CONFIG_ID, url: OWNER_HOOK },
      owner(),
    ),
  );
  expect(ownedConfig).toMatchObject({ id: OWNER_CONFIG_ID, taskId: owned.taskId, url: OWNER_HOOK });
  ownedTask = resultOf(
    await rpc.call('GetTask', OPERATIONS.GetTask.params(owned), owner()),
  ) as WireTask;

  // Before they are revoked or expire, the two keys are the owner's and reach the task. The expiry leaves
  // time enough for these calls to come before it, on a busy machine too.
  const expiresAt = Date.now() + 10_000;
  keys.expired = (await issueKey(OWNER, { expiresAt: new Date(expiresAt).toISOString() })).secret;
  for (const apiKey of [keys.expired, keys.revoked]) {
    const seen = resultOf(
      await rpc.call('GetTask', OPERATIONS.GetTask.params(owned), { agent: INTERVIEW, apiKey }),
    );
    expect(seen).toStrictEqual(ownedTask);
  }
  // The foreign key is a working key of its own tenant.
  expect(
    resultOf(
      await rpc.call(
        'ListTasks',
        {},
        { tenantId: FOREIGN_TENANT, agent: INTERVIEW, apiKey: FOREIGN_KEY },
      ),
    ),
  ).toMatchObject({ tasks: [], totalSize: 0 });

  const revocation = await admin('DELETE', `/admin/v1/tenants/demo/api-keys/${revoked.keyId}`);
  expect(revocation.body['revokedAt'], JSON.stringify(revocation.body)).toEqual(expect.any(String));
  await eventually(
    () =>
      rpc.call('GetTask', OPERATIONS.GetTask.params(owned), {
        agent: INTERVIEW,
        apiKey: keys.revoked,
      }),
    (outcome) => !outcome.ok && outcome.reason === 'UNAUTHENTICATED',
  );
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAt - Date.now() + 50)));

  tables = await writableTables();
  // Nothing may be running: queued or leased work would write while the rows run.
  await eventually(
    () => writeCounts(platform.db.pool),
    (counts) => counts.work === 0,
  );
});

afterAll(async () => {
  closeClients();
  await platform?.close();
});

// ---------------------------------------------------------------------------------------------------------
// The matrix
// ---------------------------------------------------------------------------------------------------------

describe('the matrix is generated from the operations', () => {
  it('the operation table names exactly the A2A methods, with the scopes the authorization grants', () => {
    const sorted = (list: readonly string[]) => [...list].sort();
    expect(sorted(Object.keys(OPERATIONS))).toStrictEqual(sorted(A2A_JSON_RPC_METHODS));
    expect(sorted(Object.keys(OPERATION_SCOPES))).toStrictEqual(sorted(A2A_JSON_RPC_METHODS));
    for (const method of METHODS) {
      expect(OPERATIONS[method].scopes, method).toStrictEqual(OPERATION_SCOPES[method]);
      expect(OPERATIONS[method].withoutScope !== undefined, method).toBe(
        OPERATION_SCOPES[method].length === 0,
      );
    }
  });

  it('the fixture: the owner’s task waits for input and has its webhook; the refused keys really are', async () => {
    expect(ownedTask).toMatchObject({
      id: owned.taskId,
      contextId: owned.contextId,
      status: { state: 'TASK_STATE_INPUT_REQUIRED' },
    });
    const expired = await clients.JSONRPC.call('GetTask', OPERATIONS.GetTask.params(owned), {
      agent: INTERVIEW,
      apiKey: keys.expired,
    });
    expect(expired.ok ? 'a success' : expired.message).toMatch(/expired/);
    expect(keys.lacking.size).toBe(new Set(METHODS.map((m) => lackingScopes(m).join(' '))).size);
  });
});

describe.each(BINDINGS)('%s binding', (binding) => {
  describe.each(METHODS)('%s', (method) => {
    const op = OPERATIONS[method];
    it.each(
      CALLERS.map(
        (caller) => [`${caller.title} → ${titleOf(caller.expected(method))}`, caller] as const,
      ),
    )('%s; no row changed', async (_title, caller) => {
      const client = clients[binding];
      const expected = caller.expected(method);
      const options: CallOptions = { agent: op.agent, apiKey: caller.key(method) };
      const before = await settledChecksum();

      const outcome = await invoke(client, method, op.params(owned), options);
      if ('refused' in expected) {
        const unknown = unknownTarget();
        const other = await invoke(client, method, op.params(unknown), options);
        const metadata = (target: Target) =>
          expected.refused === 'TASK_NOT_FOUND'
            ? { taskId: target.taskId }
            : (expected.metadata ?? {});
        expectRefusal(other, binding, expected.refused, metadata(unknown));
        expectRefusal(outcome, binding, expected.refused, metadata(owned));
        // The owner's ids get the answer ids that never existed get (§10.13).
        expect(masked(outcome, owned)).toBe(masked(other, unknown));
      } else {
        const owners = await invoke(client, method, op.params(owned), {
          ...options,
          apiKey: keys.owner,
        });
        expected.answers(resultOf(outcome), resultOf(owners));
        expect(describeOutcome(outcome)).not.toContain(owned.taskId);
      }
      expect(describeOutcome(outcome)).not.toContain(OWNER_SECRET);

      expect(await checksum()).toStrictEqual(before);
    });
  });
});

// ---------------------------------------------------------------------------------------------------------
// Another principal's messages that name no task (they succeed, in the owner's context)
// ---------------------------------------------------------------------------------------------------------

describe.each(BINDINGS)('%s binding, another principal’s message that names no task', (binding) => {
  it.each(['SendMessage', 'SendStreamingMessage'] as const)(
    '%s in the owner’s context starts the caller’s own task, which shows nothing of the owner’s',
    async (method) => {
      const before = await ownerRows();
      const message = {
        messageId: `intruder-${randomUUID()}`,
        role: 'ROLE_USER',
        parts: [{ text: 'Mallory' }],
        contextId: owned.contextId,
      };
      const outcome = await invoke(
        clients[binding],
        method,
        { message },
        {
          agent: INTERVIEW,
          apiKey: keys.intruder,
        },
      );
      const result = resultOf(outcome);
      let task: WireTask;
      let state: string | undefined;
      if (method === 'SendMessage') {
        task = (result as { task: WireTask }).task;
        state = task.status.state;
      } else {
        const events = result as Record<string, unknown>[];
        task = events[0]?.['task'] as WireTask;
        const last = events[events.length - 1]?.['statusUpdate'] as
          | { status: { state: string } }
          | undefined;
        state = last?.status.state;
      }
      expect(task.id).not.toBe(owned.taskId);
      expect(task.contextId).toBe(owned.contextId);
      // The agent saw this task only: it asks for a name (it would greet an answer to the owner's question).
      expect(state).toBe('TASK_STATE_INPUT_REQUIRED');
      const text = describeOutcome(outcome);
      expect(text).not.toContain(OWNER_SECRET);
      expect(text).not.toContain(owned.taskId);
      intruderTasks.add(task.id);
      expect(await ownerRows()).toStrictEqual(before);
    },
  );

  it('ListTasks of the shared context: each principal sees only its own tasks', async () => {
    const list = async (apiKey: string) =>
      (
        resultOf(
          await clients[binding].call(
            'ListTasks',
            { contextId: owned.contextId },
            { agent: INTERVIEW, apiKey },
          ),
        ) as WireList
      ).tasks.map((t) => t.id);
    expect(new Set(await list(keys.intruder))).toStrictEqual(intruderTasks);
    expect(await list(keys.owner)).toStrictEqual([owned.taskId]);
  });
});

describe('afterwards', () => {
  it('the owner’s task and webhook are as they were', async () => {
    const rpc = clients.JSONRPC;
    expect(
      resultOf(await rpc.call('GetTask', OPERATIONS.GetTask.params(owned), owner())),
    ).toStrictEqual(ownedTask);
    expect(
      resultOf(
        await rpc.call('ListTaskPushNotificationConfigs', { taskId: owned.taskId }, owner()),
      ),
    ).toStrictEqual({ configs: [ownedConfig] });
  });
});

/**
 * Generators of malformed A2A requests for the three bindings (docs/hardening.md). Each generator breaks a
 * valid request in at least one place that the platform must refuse, so a run of them may change nothing.
 * Where a corruption could by chance leave a valid request (random or damaged protobuf bytes), the case is
 * filtered with the same decoder the task-service applies.
 */
import {
  A2A_JSON_RPC_METHODS,
  A2A_MESSAGE_DESCRIPTORS,
  a2aPb,
  decode,
  decodeListPageToken,
  isA2aMethod,
  normalizeBase64,
  normalizeTimestamp,
  type A2aJsonRpcMethod,
  type FieldDescriptor,
  type FieldKind,
  type MessageDescriptor,
} from '@lib/a2a-protocol';
import fc from 'fast-check';

type Json = unknown;
type Method = A2aJsonRpcMethod;
type RequestType = keyof typeof A2A_MESSAGE_DESCRIPTORS;

/** The hosted agent every case addresses, and its routing tenant (spec digest §10.9). */
export const FUZZ_AGENT = 'echo';
export const FUZZ_TENANT = `demo/${FUZZ_AGENT}`;
/** The body limit the fuzzed platform runs with (MAX_BODY_BYTES). */
export const FUZZ_MAX_BODY_BYTES = 2 * 1024 * 1024;

export const REQUEST_TYPES: Readonly<Record<Method, RequestType>> = {
  SendMessage: 'SendMessageRequest',
  SendStreamingMessage: 'SendMessageRequest',
  GetTask: 'GetTaskRequest',
  ListTasks: 'ListTasksRequest',
  CancelTask: 'CancelTaskRequest',
  SubscribeToTask: 'SubscribeToTaskRequest',
  CreateTaskPushNotificationConfig: 'TaskPushNotificationConfig',
  GetTaskPushNotificationConfig: 'GetTaskPushNotificationConfigRequest',
  ListTaskPushNotificationConfigs: 'ListTaskPushNotificationConfigsRequest',
  DeleteTaskPushNotificationConfig: 'DeleteTaskPushNotificationConfigRequest',
  GetExtendedAgentCard: 'GetExtendedAgentCardRequest',
};

const sendMessage = (): Json => ({
  message: {
    messageId: 'fuzz-message',
    contextId: 'fuzz-context',
    role: 'ROLE_USER',
    parts: [{ text: 'hi', mediaType: 'text/plain' }],
    metadata: { k: 'v' },
    extensions: ['https://ext.example/v1'],
    referenceTaskIds: ['task-0'],
  },
  configuration: {
    acceptedOutputModes: ['text/plain'],
    historyLength: 1,
    returnImmediately: true,
    taskPushNotificationConfig: {
      url: 'https://hook.example/a2a',
      token: 't',
      authentication: { scheme: 'Bearer', credentials: 'c' },
    },
  },
  metadata: { trace: 1 },
});

/** A valid request of every method (ProtoJSON, spec digest §4.3–§4.4). */
export const VALID_PARAMS: Readonly<Record<Method, () => Json>> = {
  SendMessage: sendMessage,
  SendStreamingMessage: sendMessage,
  GetTask: () => ({ id: 'task-1', historyLength: 2 }),
  ListTasks: () => ({
    contextId: 'fuzz-context',
    status: 'TASK_STATE_WORKING',
    pageSize: 10,
    historyLength: 1,
    statusTimestampAfter: '2026-01-01T00:00:00Z',
    includeArtifacts: true,
  }),
  CancelTask: () => ({ id: 'task-1', metadata: { why: 'fuzz' } }),
  SubscribeToTask: () => ({ id: 'task-1' }),
  CreateTaskPushNotificationConfig: () => ({
    taskId: 'task-1',
    url: 'https://hook.example/a2a',
    token: 't',
    authentication: { scheme: 'Bearer' },
  }),
  GetTaskPushNotificationConfig: () => ({ taskId: 'task-1', id: 'config-1' }),
  ListTaskPushNotificationConfigs: () => ({ taskId: 'task-1', pageSize: 5 }),
  DeleteTaskPushNotificationConfig: () => ({ taskId: 'task-1', id: 'config-1' }),
  GetExtendedAgentCard: () => ({}),
};

/** Whether the platform's own decoder accepts `params` as a `type` (the oracle for chance-valid cases). */
export function decodes(type: RequestType, params: Json): boolean {
  try {
    decode(A2A_MESSAGE_DESCRIPTORS[type], params, '');
    return true;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------------------
// Field slots: every field path of a request, nested messages included (the first element of repeated ones).

type PathKey = string | number;
interface Slot {
  path: readonly PathKey[];
  fd: FieldDescriptor;
}

function slotsOf(descriptor: MessageDescriptor, prefix: readonly PathKey[] = []): Slot[] {
  return descriptor.fields.flatMap((fd) => {
    const path = [...prefix, fd.json];
    if (fd.kind.type !== 'message') {
      return [{ path, fd }];
    }
    const inner = fd.cardinality === 'repeated' ? [...path, 0] : path;
    return [{ path, fd }, ...slotsOf(fd.kind.descriptor, inner)];
  });
}

const DELETE = Symbol('delete');

/** A copy of `base` with `value` at `path` (intermediate objects created), or the field removed. */
export function withValue(base: Json, path: readonly PathKey[], value: unknown): Json {
  const root = structuredClone(base) as Record<PathKey, unknown>;
  let node = root;
  path.slice(0, -1).forEach((key, i) => {
    const next = node[key];
    if (typeof next !== 'object' || next === null) {
      node[key] = typeof path[i + 1] === 'number' ? [] : {};
    }
    node = node[key] as Record<PathKey, unknown>;
  });
  const last = path[path.length - 1] ?? '';
  if (value === DELETE) {
    delete node[last];
  } else {
    node[last] = value;
  }
  return root;
}

// ---------------------------------------------------------------------------------------------------------
// Values that are wrong for a field whatever the rest of the request holds (ProtoJSON, spec digest §3).

const smallObject = fc.dictionary(fc.string({ maxLength: 4 }), fc.integer(), {
  minKeys: 1,
  maxKeys: 2,
});
const smallArray = fc.array(fc.integer(), { maxLength: 2 });
const notAString = fc.oneof(fc.integer(), fc.boolean(), smallArray, smallObject);
const badText = fc.constantFrom('a\u0000b', 'x\ud800', '\udc00y');

/** `depth` nested arrays around a leaf. */
export function nested(depth: number): Json {
  let value: Json = 'leaf';
  for (let i = 0; i < depth; i += 1) {
    value = [value];
  }
  return value;
}

const tooDeep = fc.integer({ min: 33, max: 50 }).map(nested);
const tooDeepObject = fc.integer({ min: 32, max: 50 }).map((d) => ({ deep: nested(d) }));
/** Text that can never be an int32: it has a character no JSON number text has. */
const notNumericText = fc
  .string({ minLength: 1, maxLength: 8 })
  .filter((s) => !/^[-+0-9.eE]*$/.test(s));
const outOfInt32 = fc.oneof(
  fc.integer({ min: 2 ** 31, max: 2 ** 50 }),
  fc.integer({ min: -(2 ** 50), max: -(2 ** 31) - 1 }),
);
const fraction = fc
  .double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 })
  .filter((d) => !Number.isInteger(d));
const badTimestamp = fc.oneof(
  fc.string({ maxLength: 30 }).filter((s) => normalizeTimestamp(s) === undefined),
  fc.constantFrom(
    '2026-02-30T00:00:00Z',
    '2026-01-01T24:00:00Z',
    '2026-01-01',
    '2026-01-01T00:00:00',
    '10000-01-01T00:00:00Z',
    '0000-12-31T23:59:59Z',
    '2026-01-01T00:00:00+0100',
  ),
  fc.integer(),
);
const badBase64 = fc.oneof(
  fc.string({ minLength: 1, maxLength: 12 }).filter((s) => normalizeBase64(s) === undefined),
  fc.constantFrom('A', 'AB=', 'A===', 'ab+_', '!!!!', 'QQ==QQ=='),
  fc.integer(),
);

function wrongSingular(kind: FieldKind): fc.Arbitrary<unknown> {
  switch (kind.type) {
    case 'string':
      return fc.oneof(notAString, badText);
    case 'int32':
      return fc.oneof(
        fraction,
        outOfInt32,
        notNumericText,
        fc.constantFrom('NaN', 'Infinity', '-Infinity', '1.5', '0x10', ' 1', '+1', '01'),
        fc.boolean(),
        smallArray,
      );
    case 'bool':
      return fc.oneof(fc.string(), fc.integer(), fc.constantFrom('true', 'false'), smallArray);
    case 'enum': {
      const values = kind.values;
      return fc.oneof(
        fc.string({ maxLength: 24 }).filter((s) => !values.includes(s)),
        fc.constantFrom('completed', 'input-required', 'user', 'agent', '1'),
        fc.integer({ min: values.length, max: 10_000 }),
        fc.integer({ min: -10_000, max: -1 }),
        fraction,
        fc.boolean(),
      );
    }
    case 'message':
      return fc.oneof(fc.string(), fc.integer(), fc.boolean(), smallArray);
    case 'struct':
      return fc.oneof(
        fc.string(),
        fc.integer(),
        fc.boolean(),
        smallArray,
        tooDeepObject,
        fc.constant({ 'k\u0000': 1 }),
        fc.constant({ v: 'x\ud800' }),
      );
    case 'value':
      return fc.oneof(tooDeep, badText, fc.constant({ 'k\ud800': 1 }));
    case 'timestamp':
      return badTimestamp;
    case 'bytes':
      return badBase64;
  }
}

function defaultOf(fd: FieldDescriptor): unknown {
  if (fd.cardinality === 'repeated') {
    return [];
  }
  const kind = fd.kind;
  if (kind.type === 'enum') {
    return kind.values[0];
  }
  return kind.type === 'int32' ? 0 : '';
}

function wrongValue(fd: FieldDescriptor): fc.Arbitrary<unknown> {
  const options: fc.Arbitrary<unknown>[] = [];
  if (fd.cardinality === 'repeated') {
    options.push(
      fc.oneof(fc.string(), fc.integer(), smallObject),
      fc.array(wrongSingular(fd.kind), { minLength: 1, maxLength: 3 }),
      fc.constant([null]),
    );
  } else {
    options.push(wrongSingular(fd.kind));
  }
  if (fd.required) {
    options.push(fc.constantFrom(DELETE, null, defaultOf(fd)));
  }
  if (fd.kind.type === 'int32' && fd.min !== undefined) {
    options.push(fc.integer({ min: -(2 ** 31), max: fd.min - 1 }));
  }
  if (fd.kind.type === 'int32' && fd.max !== undefined) {
    options.push(fc.integer({ min: fd.max + 1, max: 2 ** 31 - 1 }));
  }
  if (fd.limit === 'maxIdLength') {
    options.push(fc.integer({ min: 513, max: 4_000 }).map((n) => 'i'.repeat(n)));
  }
  if (fd.kind.type === 'enum' && fd.json === 'role') {
    options.push(fc.constantFrom('ROLE_AGENT', 2));
  }
  return fc.oneof(...options);
}

/** `params` of `method` broken at one field path (wrong type, bad value, missing required, set twice). */
export function brokenParams(method: Method): fc.Arbitrary<Json> {
  const slots = slotsOf(A2A_MESSAGE_DESCRIPTORS[REQUEST_TYPES[method]]);
  const base = VALID_PARAMS[method]();
  const mutations: fc.Arbitrary<Json>[] = [];
  if (slots.length > 0) {
    mutations.push(
      fc
        .constantFrom(...slots)
        .chain((slot) => wrongValue(slot.fd).map((value) => withValue(base, slot.path, value))),
    );
    const twice = slots.filter((s) => s.fd.proto !== s.fd.json);
    if (twice.length > 0) {
      // The same field under its JSON and its proto name (digest §3 "field names (input)").
      mutations.push(
        fc.constantFrom(...twice).map((slot) => {
          const proto = [...slot.path.slice(0, -1), slot.fd.proto];
          return withValue(withValue(base, slot.path, 'x'), proto, 'x');
        }),
      );
    }
  }
  if (REQUEST_TYPES[method] === 'SendMessageRequest') {
    mutations.push(limitBreaks(base));
  }
  return fc.oneof(...mutations).filter((params) => !decodes(REQUEST_TYPES[method], params));
}

/** The size and shape limits of ProtoJsonLimits, each exceeded (docs/hardening.md). */
function limitBreaks(base: Json): fc.Arbitrary<Json> {
  const parts = ['message', 'parts'];
  const small = fc.oneof(
    fc.integer({ min: 65, max: 120 }).map((n) =>
      withValue(
        base,
        parts,
        Array.from({ length: n }, () => ({ text: 'x' })),
      ),
    ),
    tooDeep.map((data) => withValue(base, [...parts, 0], { data })),
    tooDeepObject.map((metadata) => withValue(base, ['message', 'metadata'], metadata)),
    fc
      .integer({ min: 64 * 1024 + 1, max: 80 * 1024 })
      .map((n) => withValue(base, ['metadata'], { blob: 'x'.repeat(n) })),
    fc
      .constantFrom(
        { text: 'a', raw: 'AAAA' },
        { text: 'a', data: null },
        { url: 'https://x.example', data: 1 },
        { raw: 'AAAA', url: 'u' },
        { mediaType: 'text/plain' },
      )
      .map((part) => withValue(base, [...parts, 0], part)),
  );
  const longText = fc
    .constant(null)
    .map(() => withValue(base, [...parts, 0, 'text'], 'x'.repeat(1024 * 1024 + 1)));
  // A megabyte of text costs a real body: rare.
  return fc.oneof({ arbitrary: small, weight: 40 }, { arbitrary: longText, weight: 1 });
}

/** A deep nesting placeholder: the JSON text of `params` with `"__DEEP__"` replaced by `depth` arrays. */
export const DEEP_MARK = '"__DEEP__"';
export function deepText(text: string, depth: number): string {
  return text.replace(DEEP_MARK, `${'['.repeat(depth)}1${']'.repeat(depth)}`);
}

// ---------------------------------------------------------------------------------------------------------
// JSON-RPC (spec digest §7).

export interface JsonRpcCase {
  kind: string;
  /** Path after the base URL. */
  path: string;
  body: string;
  headers: Record<string, string>;
  /** The id the error must echo, when the envelope is readable. */
  id?: string | number | null;
}

const RPC_HEADERS = {
  'Content-Type': 'application/json',
  'X-API-Key': 'demo-key',
  'A2A-Version': '1.0',
};
const rpcPath = (agent = FUZZ_AGENT, tenant = 'demo'): string =>
  `/agents/${tenant}/${agent}/jsonrpc`;
const anyMethod = fc.constantFrom(...A2A_JSON_RPC_METHODS);
const envelope = (method: unknown, params: unknown, id: unknown = 1): string =>
  JSON.stringify({ jsonrpc: '2.0', id, method, params });
const validSendText = envelope('SendMessage', VALID_PARAMS.SendMessage());

/** Header sets that refuse any request, valid or not (authentication, version negotiation §10.1). */
const refusingHeaders = fc.constantFrom<Record<string, string>>(
  { ...RPC_HEADERS, 'X-API-Key': 'wrong-key' },
  { 'Content-Type': 'application/json', 'A2A-Version': '1.0' },
  { ...RPC_HEADERS, 'A2A-Version': '0.5' },
  { ...RPC_HEADERS, 'A2A-Version': 'abc' },
  { ...RPC_HEADERS, 'A2A-Version': '' },
  { 'Content-Type': 'application/json', 'X-API-Key': 'demo-key' },
);
/** Odd but harmless headers, for requests that are broken anyway. */
const oddHeaders = fc.constantFrom<Record<string, string>>(
  RPC_HEADERS,
  { ...RPC_HEADERS, 'Content-Type': 'text/plain' },
  { ...RPC_HEADERS, 'A2A-Version': '1.0, 0.3' },
  { ...RPC_HEADERS, 'A2A-Extensions': ',,, ,' },
  { ...RPC_HEADERS, 'Last-Event-ID': 'not-a-number' },
  { ...RPC_HEADERS, traceparent: 'garbage' },
  { 'X-API-Key': 'demo-key', 'A2A-Version': '1.0' },
);

export function jsonRpcCase(): fc.Arbitrary<JsonRpcCase> {
  const fieldBreak = fc
    .tuple(anyMethod, fc.oneof(fc.integer(), fc.string({ maxLength: 12 })))
    .chain(([method, id]) =>
      fc.tuple(brokenParams(method), oddHeaders).map(
        ([params, headers]): JsonRpcCase => ({
          kind: `params:${method}`,
          path: rpcPath(),
          body: envelope(method, params, id),
          headers,
          id,
        }),
      ),
    );
  const brokenText = fc
    .oneof(
      fc.integer({ min: 1, max: validSendText.length - 1 }).map((n) => validSendText.slice(0, n)),
      fc.constantFrom(`${validSendText}}`, `x${validSendText}`, `\ufeff${validSendText}`, '', ' '),
      fc.string({ maxLength: 40 }),
      fc.string({ unit: 'binary', maxLength: 40 }),
    )
    .map(
      (body): JsonRpcCase => ({ kind: 'json-text', path: rpcPath(), body, headers: RPC_HEADERS }),
    );
  const valid = VALID_PARAMS.SendMessage();
  const badEnvelope = fc
    .oneof(
      fc.constantFrom(
        JSON.stringify({ id: 1, method: 'SendMessage', params: valid }),
        JSON.stringify({ jsonrpc: '1.0', id: 1, method: 'SendMessage', params: valid }),
        JSON.stringify({ jsonrpc: 2, id: 1, method: 'SendMessage', params: valid }),
        JSON.stringify({ jsonrpc: '2.0', id: 1, params: valid }),
        JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: valid }]),
        '[]',
        'null',
        '"SendMessage"',
      ),
      fc.constantFrom<unknown>(true, { a: 1 }, [1]).map((id) => envelope('SendMessage', valid, id)),
      fc.constant(envelope('SendMessage', valid, 'ID').replace('"ID"', '1e400')),
      fc.constantFrom<unknown>(5, null, [], {}, true).map((m) => envelope(m, valid)),
      fc
        .oneof(
          fc.string({ maxLength: 20 }),
          fc.constantFrom('message/send', 'tasks/get', 'sendMessage', 'SendMessage ', 'GETTASK'),
        )
        .filter((m) => !isA2aMethod(m))
        .map((m) => envelope(m, valid)),
      fc
        .tuple(anyMethod, fc.constantFrom<unknown>([], 5, 'x', true, [valid]))
        .map(([m, p]) => envelope(m, p)),
    )
    .map(
      (body): JsonRpcCase => ({ kind: 'envelope', path: rpcPath(), body, headers: RPC_HEADERS }),
    );
  const deep = fc.oneof(fc.integer({ min: 60, max: 5_000 }), fc.constantFrom(100_000, 500_000)).map(
    (depth): JsonRpcCase => ({
      kind: 'deep-document',
      path: rpcPath(),
      body: deepText(
        envelope('SendMessage', { ...(valid as object), metadata: '__DEEP__' }),
        depth,
      ),
      headers: RPC_HEADERS,
    }),
  );
  const oversized = fc.constant(null).map(
    (): JsonRpcCase => ({
      kind: 'oversized-body',
      path: rpcPath(),
      body: envelope('SendMessage', {
        ...(valid as object),
        metadata: { blob: 'x'.repeat(FUZZ_MAX_BODY_BYTES) },
      }),
      headers: RPC_HEADERS,
    }),
  );
  const refused = refusingHeaders.map(
    (headers): JsonRpcCase => ({ kind: 'headers', path: rpcPath(), body: validSendText, headers }),
  );
  const elsewhere = fc
    .constantFrom(
      rpcPath('nope'),
      rpcPath(FUZZ_AGENT, 'other'),
      rpcPath(`${FUZZ_AGENT}%00`),
      rpcPath(FUZZ_AGENT, 'de%01mo'),
    )
    .map(
      (path): JsonRpcCase => ({ kind: 'route', path, body: validSendText, headers: RPC_HEADERS }),
    );
  return fc.oneof(
    { arbitrary: fieldBreak, weight: 50 },
    { arbitrary: brokenText, weight: 12 },
    { arbitrary: badEnvelope, weight: 14 },
    { arbitrary: deep, weight: 5 },
    { arbitrary: oversized, weight: 1 },
    { arbitrary: refused, weight: 10 },
    { arbitrary: elsewhere, weight: 4 },
  );
}

// ---------------------------------------------------------------------------------------------------------
// HTTP+JSON (spec digest §8).

export interface RestCase {
  kind: string;
  method: string;
  /** Path and query after the HTTP+JSON base URL. */
  path: string;
  body?: string;
  headers: Record<string, string>;
}

const REST_HEADERS = { 'X-API-Key': 'demo-key', 'A2A-Version': '1.0' };
const REST_JSON = { ...REST_HEADERS, 'Content-Type': 'application/a2a+json' };
const POST_ROUTES: readonly [string, Method][] = [
  ['/message:send', 'SendMessage'],
  ['/message:stream', 'SendStreamingMessage'],
  ['/tasks/task-1:cancel', 'CancelTask'],
  ['/tasks/task-1/pushNotificationConfigs', 'CreateTaskPushNotificationConfig'],
  ['/demo%2Fecho/message:send', 'SendMessage'],
];

/** Query text that is not a valid value of its parameter (spec digest §8.2 query rules, §10.7). */
const badQuery = {
  int32: fc.oneof(
    notNumericText,
    fc.constantFrom('2147483648', '-2147483649', '99999999999999999999', '1.5', '', '-'),
  ),
  pageSize: fc.constantFrom('0', '-1', '101', '1000'),
  historyLength: fc.constantFrom('-1', '-2147483648'),
  status: fc.oneof(
    fc.string({ minLength: 1, maxLength: 16 }).filter((s) => !/^(TASK_STATE_[A-Z_]+|\d+)$/.test(s)),
    fc.constantFrom('working', 'TASK_STATE_DONE', '9', '42'),
  ),
  timestamp: badTimestamp.map(String).filter((s) => normalizeTimestamp(s) === undefined),
  bool: fc.string({ maxLength: 6 }).filter((s) => s !== 'true' && s !== 'false'),
  pageToken: fc.string({ minLength: 1, maxLength: 24 }).filter((s) => {
    try {
      decodeListPageToken(s);
      return false;
    } catch {
      return true;
    }
  }),
};
const LIST_QUERY_PARAMS: readonly (readonly [string, fc.Arbitrary<string>])[] = [
  ['pageSize', fc.oneof(badQuery.int32, badQuery.pageSize)],
  ['historyLength', fc.oneof(badQuery.int32, badQuery.historyLength)],
  ['status', badQuery.status],
  ['statusTimestampAfter', badQuery.timestamp],
  ['includeArtifacts', badQuery.bool],
  ['pageToken', badQuery.pageToken],
  ['tenant', fc.constantFrom('other', 'demo/nope')],
];
const VALID_LIST_QUERY = [
  'contextId=c',
  'status=TASK_STATE_WORKING',
  'pageSize=5',
  'includeArtifacts=true',
];

export function restCase(): fc.Arbitrary<RestCase> {
  const bodyBreak = fc.constantFrom(...POST_ROUTES).chain(([path, method]) =>
    fc
      .tuple(
        brokenParams(method),
        fc.constantFrom(REST_JSON, { ...REST_JSON, 'Content-Type': 'application/json' }),
      )
      .map(
        ([params, headers]): RestCase => ({
          kind: `body:${method}`,
          method: 'POST',
          path,
          body: JSON.stringify(params),
          headers,
        }),
      ),
  );
  const listQuery = fc
    .tuple(
      fc
        .constantFrom(...LIST_QUERY_PARAMS)
        .chain(([name, value]) => value.map((v) => `${name}=${encodeURIComponent(v)}`)),
      fc.subarray([...VALID_LIST_QUERY]),
      fc.boolean(),
    )
    .map(([bad, valid, repeat]): RestCase => {
      const query = [...valid, bad, ...(repeat ? ['pageSize=1', 'pageSize=2'] : [])];
      return {
        kind: 'query:ListTasks',
        method: 'GET',
        path: `/tasks?${query.join('&')}`,
        headers: REST_HEADERS,
      };
    });
  const otherQuery = fc
    .oneof(
      fc
        .oneof(badQuery.int32, badQuery.historyLength)
        .map((v) => `/tasks/task-1?historyLength=${encodeURIComponent(v)}`),
      fc
        .oneof(badQuery.int32, fc.constant('-1'))
        .map((v) => `/tasks/task-1/pushNotificationConfigs?pageSize=${encodeURIComponent(v)}`),
      fc.constantFrom(
        '/tasks?pageSize=%ZZ',
        '/tasks?tenant=%E0%A4%A',
        '/tasks?status=TASK_STATE_WORKING&status=TASK_STATE_FAILED',
      ),
    )
    .map((path): RestCase => ({ kind: 'query', method: 'GET', path, headers: REST_HEADERS }));
  const routes = fc
    .oneof(
      fc
        .tuple(
          fc.constantFrom('GET', 'POST', 'DELETE', 'PUT', 'PATCH'),
          fc.stringMatching(/^[a-z0-9:]{1,12}$/),
        )
        .map(([method, seg]) => [method, `/x-${seg}`] as const),
      fc.constantFrom(
        ['POST', '/message:bogus'],
        ['POST', '/message'],
        ['GET', '/message:send'],
        ['PUT', '/message:send'],
        ['PATCH', '/tasks/task-1'],
        ['DELETE', '/tasks/task-1'],
        ['POST', '/tasks/task-1:unknown'],
        ['GET', '/tasks/a/b/c/d/e'],
        ['POST', '/tasks'],
        ['GET', '/v1/tasks'],
        ['GET', '/demo%2Fnope/tasks'],
        ['GET', '/other/tasks'],
        ['GET', '/demo%2Fecho%00/tasks'],
        ['GET', '/tasks/%E0%A4%A'],
        ['PUT', '/x-%'],
      ),
    )
    .map(
      ([method, path]): RestCase => ({
        kind: 'route',
        method,
        path,
        headers: REST_JSON,
        ...(method === 'POST' || method === 'PUT' || method === 'PATCH'
          ? { body: validSendBody }
          : {}),
      }),
    );
  const brokenBody = fc
    .tuple(
      fc.constantFrom('/message:send', '/message:stream', '/tasks/task-1:cancel'),
      fc.oneof(
        fc.integer({ min: 1, max: validSendBody.length - 1 }).map((n) => validSendBody.slice(0, n)),
        fc.constantFrom(`${validSendBody}}`, `x${validSendBody}`, '[]', '1', '"x"', 'true', '[{}]'),
        fc
          .string({ minLength: 1, maxLength: 40 })
          .filter((s) => s.trim() !== '' && s.trim() !== '{}'),
      ),
    )
    .map(
      ([path, body]): RestCase => ({
        kind: 'body-text',
        method: 'POST',
        path,
        body,
        headers: REST_JSON,
      }),
    );
  const contentType = fc
    .constantFrom('text/plain', 'application/xml', 'multipart/form-data', 'application/jsonx')
    .map(
      (type): RestCase => ({
        kind: 'content-type',
        method: 'POST',
        path: '/message:send',
        body: validSendBody,
        headers: { ...REST_HEADERS, 'Content-Type': type },
      }),
    );
  const refused = refusingHeaders.map(
    (headers): RestCase => ({
      kind: 'headers',
      method: 'POST',
      path: '/message:send',
      body: validSendBody,
      headers: { ...headers, 'Content-Type': 'application/a2a+json' },
    }),
  );
  const deep = fc.oneof(fc.integer({ min: 60, max: 5_000 }), fc.constantFrom(100_000, 500_000)).map(
    (depth): RestCase => ({
      kind: 'deep-document',
      method: 'POST',
      path: '/message:send',
      body: deepText(
        JSON.stringify({ ...(VALID_PARAMS.SendMessage() as object), metadata: '__DEEP__' }),
        depth,
      ),
      headers: REST_JSON,
    }),
  );
  const oversized = fc.constant(null).map(
    (): RestCase => ({
      kind: 'oversized-body',
      method: 'POST',
      path: '/message:send',
      body: JSON.stringify({
        ...(VALID_PARAMS.SendMessage() as object),
        metadata: { blob: 'x'.repeat(FUZZ_MAX_BODY_BYTES) },
      }),
      headers: REST_JSON,
    }),
  );
  return fc.oneof(
    { arbitrary: bodyBreak, weight: 40 },
    { arbitrary: listQuery, weight: 14 },
    { arbitrary: otherQuery, weight: 6 },
    { arbitrary: routes, weight: 10 },
    { arbitrary: brokenBody, weight: 12 },
    { arbitrary: contentType, weight: 4 },
    { arbitrary: refused, weight: 8 },
    { arbitrary: deep, weight: 4 },
    { arbitrary: oversized, weight: 1 },
  );
}

const validSendBody = JSON.stringify(VALID_PARAMS.SendMessage());

// ---------------------------------------------------------------------------------------------------------
// gRPC (spec digest §8b).

export interface GrpcCase {
  kind: string;
  /** Full method path, e.g. `/lf.a2a.v1.A2AService/SendMessage`. */
  path: string;
  bytes: Buffer;
  metadata: Record<string, string>;
  streaming: boolean;
}

/** The generated message functions, typed loosely enough to hold every request type. */
interface WireCodec {
  decode(input: Uint8Array): object;
  encode(message: never): { finish(): Uint8Array };
  fromJSON(object: unknown): object;
  toJSON(message: never): unknown;
}

const WIRE: Readonly<Record<RequestType, WireCodec>> = {
  Part: a2aPb.Part,
  Message: a2aPb.Message,
  TaskStatus: a2aPb.TaskStatus,
  Artifact: a2aPb.Artifact,
  AuthenticationInfo: a2aPb.AuthenticationInfo,
  TaskPushNotificationConfig: a2aPb.TaskPushNotificationConfig,
  SendMessageConfiguration: a2aPb.SendMessageConfiguration,
  SendMessageRequest: a2aPb.SendMessageRequest,
  GetTaskRequest: a2aPb.GetTaskRequest,
  ListTasksRequest: a2aPb.ListTasksRequest,
  CancelTaskRequest: a2aPb.CancelTaskRequest,
  SubscribeToTaskRequest: a2aPb.SubscribeToTaskRequest,
  GetExtendedAgentCardRequest: a2aPb.GetExtendedAgentCardRequest,
  GetTaskPushNotificationConfigRequest: a2aPb.GetTaskPushNotificationConfigRequest,
  ListTaskPushNotificationConfigsRequest: a2aPb.ListTaskPushNotificationConfigsRequest,
  DeleteTaskPushNotificationConfigRequest: a2aPb.DeleteTaskPushNotificationConfigRequest,
};

const GRPC_METADATA = { 'x-api-key': 'demo-key', 'a2a-version': '1.0' };
const grpcPath = (method: string): string => `/lf.a2a.v1.A2AService/${method}`;
const isStreaming = (method: string): boolean =>
  method === 'SendStreamingMessage' || method === 'SubscribeToTask';

function encodeJson(type: RequestType, json: Json): Buffer {
  const codec = WIRE[type];
  return Buffer.from(codec.encode(codec.fromJSON(json) as never).finish());
}

const validWire = (method: Method): Buffer =>
  encodeJson(REQUEST_TYPES[method], { ...(VALID_PARAMS[method]() as object), tenant: FUZZ_TENANT });

/** Whether the platform would accept these bytes as `method`'s request for the fuzzed agent. */
export function acceptedOnTheWire(method: Method, bytes: Uint8Array): boolean {
  const type = REQUEST_TYPES[method];
  try {
    const json = WIRE[type].toJSON(WIRE[type].decode(bytes) as never) as { tenant?: unknown };
    // The gRPC binding also serves a request without a tenant.
    return (json.tenant === undefined || json.tenant === FUZZ_TENANT) && decodes(type, json);
  } catch {
    return false;
  }
}

/** Content a protobuf can carry but the request must not have (digest §4, §10.5, §10.7, limits). */
function wireBreaks(fd: FieldDescriptor): fc.Arbitrary<unknown>[] {
  const options: fc.Arbitrary<unknown>[] = [];
  if (fd.required) {
    options.push(
      fc.constant(
        fd.kind.type === 'message' && fd.cardinality !== 'repeated' ? DELETE : defaultOf(fd),
      ),
    );
  }
  if (fd.kind.type === 'string' && fd.cardinality !== 'repeated') {
    options.push(fc.constant('a\u0000b'));
  }
  if (fd.limit === 'maxIdLength' && fd.cardinality !== 'repeated') {
    options.push(fc.integer({ min: 513, max: 4_000 }).map((n) => 'i'.repeat(n)));
  }
  if (fd.kind.type === 'int32' && fd.min !== undefined) {
    options.push(fc.integer({ min: -(2 ** 31), max: fd.min - 1 }));
  }
  if (fd.kind.type === 'int32' && fd.max !== undefined) {
    options.push(fc.integer({ min: fd.max + 1, max: 2 ** 31 - 1 }));
  }
  if (fd.json === 'role') {
    options.push(fc.constant('ROLE_AGENT'));
  }
  if (fd.kind.type === 'struct') {
    options.push(tooDeepObject, fc.constant({ 'k\u0000': 1 }));
  }
  if (fd.kind.type === 'value') {
    options.push(tooDeep, fc.constant('a\u0000b'));
  }
  if (fd.limit === 'maxPartsPerMessage') {
    options.push(
      fc
        .integer({ min: 65, max: 100 })
        .map((n) => Array.from({ length: n }, () => ({ text: 'x' }))),
    );
  }
  return options;
}

function wireContent(method: Method): fc.Arbitrary<Buffer> {
  const type = REQUEST_TYPES[method];
  const base = { ...(VALID_PARAMS[method]() as object), tenant: FUZZ_TENANT };
  const breakable = slotsOf(A2A_MESSAGE_DESCRIPTORS[type]).filter(
    (s) => wireBreaks(s.fd).length > 0,
  );
  const tenants = fc
    .constantFrom(
      'demo',
      'demo/nope',
      'other/echo',
      'demo/echo/x',
      'demo/echo\u0000',
      'de\u0000mo/echo',
    )
    .map((tenant) => encodeJson(type, { ...base, tenant }));
  const fields = fc
    .constantFrom(...breakable)
    .chain((slot) =>
      fc
        .oneof(...wireBreaks(slot.fd))
        .map((value) => encodeJson(type, withValue(base, slot.path, value))),
    );
  return fc.oneof(fields, tenants);
}

/** `field` (length-delimited) holding `bytes`, as protobuf encodes it. */
function lengthDelimited(field: number, bytes: Uint8Array): Buffer {
  const length: number[] = [];
  let n = bytes.length;
  while (n >= 0x80) {
    length.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  length.push(n);
  return Buffer.concat([Buffer.from([(field << 3) | 2, ...length]), bytes]);
}

export function grpcCase(): fc.Arbitrary<GrpcCase> {
  const content = anyMethod.chain((method) =>
    wireContent(method)
      .filter((bytes) => !acceptedOnTheWire(method, bytes))
      .map(
        (bytes): GrpcCase => ({
          kind: `content:${method}`,
          path: grpcPath(method),
          bytes,
          metadata: GRPC_METADATA,
          streaming: isStreaming(method),
        }),
      ),
  );
  const randomBytes = fc
    .tuple(anyMethod, fc.uint8Array({ maxLength: 300 }))
    .filter(([method, bytes]) => !acceptedOnTheWire(method, bytes))
    .map(
      ([method, bytes]): GrpcCase => ({
        kind: `random-bytes:${method}`,
        path: grpcPath(method),
        bytes: Buffer.from(bytes),
        metadata: GRPC_METADATA,
        streaming: isStreaming(method),
      }),
    );
  const damaged = anyMethod
    .chain((method) => {
      const valid = validWire(method);
      return fc
        .oneof(
          fc.integer({ min: 0, max: valid.length - 1 }).map((n) => valid.subarray(0, n)),
          fc.tuple(fc.nat(valid.length - 1), fc.integer({ min: 1, max: 255 })).map(([at, xor]) => {
            const copy = Buffer.from(valid);
            copy[at] = (copy[at] ?? 0) ^ xor;
            return copy;
          }),
          fc.uint8Array({ minLength: 1, maxLength: 8 }).map((tail) => Buffer.concat([valid, tail])),
        )
        .map((bytes) => [method, Buffer.from(bytes)] as const);
    })
    .filter(([method, bytes]) => !acceptedOnTheWire(method, bytes))
    .map(
      ([method, bytes]): GrpcCase => ({
        kind: `damaged:${method}`,
        path: grpcPath(method),
        bytes,
        metadata: GRPC_METADATA,
        streaming: isStreaming(method),
      }),
    );
  const unknownEnum = fc.integer({ min: 9, max: 100_000 }).chain((number) =>
    fc.constantFrom<GrpcCase>(
      {
        kind: 'unknown-enum:ListTasks',
        path: grpcPath('ListTasks'),
        bytes: Buffer.concat([validWire('ListTasks'), Buffer.from([3 << 3, ...varint(number)])]),
        metadata: GRPC_METADATA,
        streaming: false,
      },
      {
        kind: 'unknown-enum:SendMessage',
        path: grpcPath('SendMessage'),
        bytes: Buffer.concat([
          lengthDelimited(1, Buffer.from(FUZZ_TENANT)),
          lengthDelimited(
            2,
            Buffer.concat([
              WIRE.Message.encode(
                WIRE.Message.fromJSON(
                  (VALID_PARAMS.SendMessage() as { message: Json }).message,
                ) as never,
              ).finish(),
              Buffer.from([4 << 3, ...varint(number)]),
            ]),
          ),
        ]),
        metadata: GRPC_METADATA,
        streaming: false,
      },
    ),
  );
  const refused = fc
    .tuple(
      fc.constantFrom('SendMessage', 'SendStreamingMessage') as fc.Arbitrary<Method>,
      fc.constantFrom<Record<string, string>>(
        { 'a2a-version': '1.0' },
        { ...GRPC_METADATA, 'x-api-key': 'wrong-key' },
        { 'x-api-key': 'demo-key' },
        { ...GRPC_METADATA, 'a2a-version': '0.5' },
        { ...GRPC_METADATA, 'a2a-version': 'x' },
      ),
    )
    .map(
      ([method, metadata]): GrpcCase => ({
        kind: 'metadata',
        path: grpcPath(method),
        bytes: validWire(method),
        metadata,
        streaming: isStreaming(method),
      }),
    );
  const unknownPath = fc
    .constantFrom(
      grpcPath('Nope'),
      grpcPath('sendMessage'),
      '/a2a.v1.A2AService/SendMessage',
      '/lf.a2a.v1.Other/GetTask',
    )
    .map(
      (path): GrpcCase => ({
        kind: 'unknown-method',
        path,
        bytes: validWire('SendMessage'),
        metadata: GRPC_METADATA,
        streaming: false,
      }),
    );
  const oversized = fc.constant(null).map(
    (): GrpcCase => ({
      kind: 'oversized',
      path: grpcPath('SendMessage'),
      bytes: Buffer.concat([
        validWire('SendMessage'),
        lengthDelimited(4, Buffer.alloc(FUZZ_MAX_BODY_BYTES)),
      ]),
      metadata: GRPC_METADATA,
      streaming: false,
    }),
  );
  return fc.oneof(
    { arbitrary: content, weight: 40 },
    { arbitrary: randomBytes, weight: 15 },
    { arbitrary: damaged, weight: 20 },
    { arbitrary: unknownEnum, weight: 5 },
    { arbitrary: refused, weight: 10 },
    { arbitrary: unknownPath, weight: 4 },
    { arbitrary: oversized, weight: 1 },
  );
}

function varint(value: number): number[] {
  const bytes: number[] = [];
  let n = value;
  while (n >= 0x80) {
    bytes.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  bytes.push(n);
  return bytes;
}

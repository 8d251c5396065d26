/**
 * A small descriptor-driven ProtoJSON decoder for A2A request messages (spec digest §3, §4).
 *
 * Each message is described as data ({@link MessageDescriptor}); one generic {@link decode} walks untrusted
 * input against a descriptor, collects every violation with its path (`message.parts[1].raw`) and either
 * returns the canonical object (camelCase keys, enum names, normalised timestamps and base64) or throws a
 * single `INVALID_PARAMS` {@link A2aError} carrying all of them.
 */
import { A2aError, type FieldViolation, invalidParams } from './errors';
import {
  type Artifact,
  type CancelTaskRequest,
  type GetExtendedAgentCardRequest,
  type GetTaskRequest,
  type JsonObject,
  type JsonValue,
  type ListTasksRequest,
  type Message,
  ROLES,
  type SendMessageRequest,
  type SubscribeToTaskRequest,
  type Task,
  TASK_STATES,
  type TaskPushNotificationConfig,
  type TaskStatus,
} from './model';

/** `GetTaskPushNotificationConfigRequest` (digest §4.4); `id` is the config id. */
export interface GetTaskPushNotificationConfigRequest {
  tenant?: string;
  taskId: string;
  id: string;
}

/** `ListTaskPushNotificationConfigsRequest` (digest §4.4). */
export interface ListTaskPushNotificationConfigsRequest {
  tenant?: string;
  taskId: string;
  pageSize?: number;
  pageToken?: string;
}

/** `DeleteTaskPushNotificationConfigRequest` (digest §4.4); `id` is the config id. */
export interface DeleteTaskPushNotificationConfigRequest {
  tenant?: string;
  taskId: string;
  id: string;
}

/** Limits that keep one request from costing the server too much. Exceeding one is a violation. */
export interface ProtoJsonLimits {
  /** Most parts one Message or Artifact may carry. */
  maxPartsPerMessage: number;
  /** Deepest nesting of arrays and objects inside a Struct or Value (the outer container counts as 1). */
  maxJsonDepth: number;
  /** Largest `metadata` object, in UTF-8 bytes of its JSON text. */
  maxMetadataBytes: number;
  /** Longest `Part.text`, in UTF-16 code units (JavaScript string length). */
  maxTextPartLength: number;
  /**
   * Longest client-chosen identifier (`messageId`, `contextId`, task and config ids), in UTF-16 code units.
   * Identifiers are index keys in Postgres, whose B-tree entries cannot exceed about 2.7 kB; 512 code units
   * are at most 1.5 kB of UTF-8.
   */
  maxIdLength: number;
  /** Most violations listed in one error; the remainder is summarised so the error stays small. */
  maxViolations: number;
}

export const DEFAULT_PROTO_JSON_LIMITS: Readonly<ProtoJsonLimits> = {
  maxPartsPerMessage: 64,
  maxJsonDepth: 32,
  maxMetadataBytes: 64 * 1024,
  maxTextPartLength: 1024 * 1024,
  maxIdLength: 512,
  maxViolations: 100,
};

/**
 * Deepest nesting of arrays and objects any request document may have before it is parsed. No valid request
 * comes close: five levels of messages (envelope, params, message, parts, part) plus a Value of
 * `maxJsonDepth` levels. Refusing deeper text up front keeps a hostile body from costing a deep parse and
 * from overflowing the stack of the recursive `JSON.stringify` further down.
 */
export const MAX_REQUEST_JSON_NESTING = 64;

/**
 * Whether JSON text nests arrays and objects deeper than `maxDepth`, found in one pass without parsing
 * (brackets inside strings do not count). Malformed text is left to the parser to report.
 */
export function jsonNestingExceeds(text: string, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) {
        i += 1; // the escaped character cannot end the string
      } else if (c === QUOTE) {
        inString = false;
      }
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_BRACKET || c === OPEN_BRACE) {
      depth += 1;
      if (depth > maxDepth) {
        return true;
      }
    } else if (c === CLOSE_BRACKET || c === CLOSE_BRACE) {
      depth -= 1;
    }
  }
  return false;
}

const QUOTE = '"'.charCodeAt(0);
const BACKSLASH = '\\'.charCodeAt(0);
const OPEN_BRACKET = '['.charCodeAt(0);
const CLOSE_BRACKET = ']'.charCodeAt(0);
const OPEN_BRACE = '{'.charCodeAt(0);
const CLOSE_BRACE = '}'.charCodeAt(0);

/** The limits a single field can be guarded by; each name has exactly one meaning (see {@link ProtoJsonLimits}). */
export type FieldLimit =
  | 'maxPartsPerMessage'
  | 'maxMetadataBytes'
  | 'maxTextPartLength'
  | 'maxIdLength';

/** What a field holds. `struct` is `google.protobuf.Struct`, `value` is `google.protobuf.Value`. */
export type FieldKind =
  | { readonly type: 'string' }
  | { readonly type: 'int32' }
  | { readonly type: 'bool' }
  | { readonly type: 'enum'; readonly name: string; readonly values: readonly string[] }
  | { readonly type: 'message'; readonly descriptor: MessageDescriptor }
  | { readonly type: 'struct' }
  | { readonly type: 'value' }
  | { readonly type: 'timestamp' }
  | { readonly type: 'bytes' };

export interface FieldDescriptor {
  /** The proto (snake_case) name, also accepted on input. */
  readonly proto: string;
  /** The lowerCamelCase JSON name used on output and in violation paths. */
  readonly json: string;
  readonly kind: FieldKind;
  /** `repeated` is a JSON array, `map` a JSON object with string keys (`map<string, kind>`). */
  readonly cardinality?: 'singular' | 'repeated' | 'map';
  /** Name of the oneof group this field belongs to. */
  readonly oneof?: string;
  /** `google.api.field_behavior = REQUIRED`: present and not the default value (§3). */
  readonly required?: boolean;
  /** proto3 `optional`: a default value is kept on output instead of being dropped. */
  readonly presence?: boolean;
  /** Inclusive bounds for an `int32`. */
  readonly min?: number;
  readonly max?: number;
  readonly limit?: FieldLimit;
}

/** A check that spans fields; `report` takes a path relative to the message being decoded. */
export type MessageRule = (
  value: DecodedMessage,
  report: (field: string, description: string) => void,
) => void;

export interface MessageDescriptor {
  /** The proto message name, used in descriptions. */
  readonly name: string;
  readonly fields: readonly FieldDescriptor[];
  /** Oneof groups of which exactly one member must be set. */
  readonly requiredOneofs?: readonly string[];
  readonly rules?: readonly MessageRule[];
}

/** A decoded message before it is narrowed to its model type. */
export type DecodedMessage = { [field: string]: unknown };

/**
 * Decodes `input` against `descriptor`. `path` prefixes every violation path (`''` for a request's root).
 * Throws one `INVALID_PARAMS` error listing every violation.
 */
export function decode(
  descriptor: MessageDescriptor,
  input: unknown,
  path: string,
  limits: Partial<ProtoJsonLimits> = {},
): DecodedMessage {
  const resolved = { ...DEFAULT_PROTO_JSON_LIMITS, ...limits };
  const ctx: DecodeContext = {
    limits: resolved,
    violations: new Violations(resolved.maxViolations),
  };
  const value = decodeMessageValue(descriptor, input, path, ctx);
  const violations = ctx.violations.toArray();
  if (violations.length > 0 || value === undefined) {
    throw invalidParams(violations);
  }
  return value;
}

// ---------------------------------------------------------------------------------------------------------
// Descriptors (digest §4). JSON names are the lowerCamelCase of the proto names (no json_name options in 1.0).

const STRING: FieldKind = { type: 'string' };
const INT32: FieldKind = { type: 'int32' };
const BOOL: FieldKind = { type: 'bool' };
const STRUCT: FieldKind = { type: 'struct' };
const VALUE: FieldKind = { type: 'value' };
const TIMESTAMP: FieldKind = { type: 'timestamp' };
const BYTES: FieldKind = { type: 'bytes' };
const TASK_STATE: FieldKind = { type: 'enum', name: 'TaskState', values: TASK_STATES };
const ROLE: FieldKind = { type: 'enum', name: 'Role', values: ROLES };
const message = (descriptor: MessageDescriptor): FieldKind => ({ type: 'message', descriptor });

function field(
  proto: string,
  kind: FieldKind,
  options: Omit<FieldDescriptor, 'proto' | 'json' | 'kind'> = {},
): FieldDescriptor {
  return {
    proto,
    json: proto.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase()),
    kind,
    ...options,
  };
}

const metadataField = field('metadata', STRUCT, { limit: 'maxMetadataBytes' });
const tenantField = field('tenant', STRING);
/** A client-chosen identifier (see {@link ProtoJsonLimits.maxIdLength}). */
const idField = (proto: string, options: Omit<FieldDescriptor, 'proto' | 'json' | 'kind'> = {}) =>
  field(proto, STRING, { limit: 'maxIdLength', ...options });

const PART: MessageDescriptor = {
  name: 'Part',
  fields: [
    field('text', STRING, { oneof: 'content', limit: 'maxTextPartLength' }),
    field('raw', BYTES, { oneof: 'content' }),
    field('url', STRING, { oneof: 'content' }),
    field('data', VALUE, { oneof: 'content' }),
    metadataField,
    field('filename', STRING),
    field('media_type', STRING),
  ],
  requiredOneofs: ['content'],
};

const MESSAGE: MessageDescriptor = {
  name: 'Message',
  fields: [
    idField('message_id', { required: true }),
    idField('context_id'),
    idField('task_id'),
    field('role', ROLE, { required: true }),
    field('parts', message(PART), {
      cardinality: 'repeated',
      required: true,
      limit: 'maxPartsPerMessage',
    }),
    metadataField,
    field('extensions', STRING, { cardinality: 'repeated' }),
    idField('reference_task_ids', { cardinality: 'repeated' }),
  ],
};

const TASK_STATUS: MessageDescriptor = {
  name: 'TaskStatus',
  fields: [
    field('state', TASK_STATE, { required: true }),
    field('message', message(MESSAGE)),
    field('timestamp', TIMESTAMP),
  ],
};

const ARTIFACT: MessageDescriptor = {
  name: 'Artifact',
  fields: [
    idField('artifact_id', { required: true }),
    field('name', STRING),
    field('description', STRING),
    field('parts', message(PART), {
      cardinality: 'repeated',
      required: true,
      limit: 'maxPartsPerMessage',
    }),
    metadataField,
    field('extensions', STRING, { cardinality: 'repeated' }),
  ],
};

const AUTHENTICATION_INFO: MessageDescriptor = {
  name: 'AuthenticationInfo',
  fields: [field('scheme', STRING, { required: true }), field('credentials', STRING)],
};

const TASK_PUSH_NOTIFICATION_CONFIG: MessageDescriptor = {
  name: 'TaskPushNotificationConfig',
  fields: [
    tenantField,
    idField('id'),
    idField('task_id'),
    field('url', STRING, { required: true }),
    field('token', STRING),
    field('authentication', message(AUTHENTICATION_INFO)),
  ],
};

const historyLengthField = field('history_length', INT32, { presence: true, min: 0 });

const SEND_MESSAGE_CONFIGURATION: MessageDescriptor = {
  name: 'SendMessageConfiguration',
  fields: [
    field('accepted_output_modes', STRING, { cardinality: 'repeated' }),
    field('task_push_notification_config', message(TASK_PUSH_NOTIFICATION_CONFIG)),
    historyLengthField,
    field('return_immediately', BOOL),
  ],
};

/** A client sends user messages only (digest §4.1 Message.role); agent messages come from workers. */
const clientMessageRole: MessageRule = (value, report) => {
  const sent = value['message'];
  if (isPlainObject(sent) && sent['role'] === 'ROLE_AGENT') {
    report('message.role', 'a message sent by a client must have role ROLE_USER');
  }
};

const SEND_MESSAGE_REQUEST: MessageDescriptor = {
  name: 'SendMessageRequest',
  fields: [
    tenantField,
    field('message', message(MESSAGE), { required: true }),
    field('configuration', message(SEND_MESSAGE_CONFIGURATION)),
    metadataField,
  ],
  rules: [clientMessageRole],
};

const GET_TASK_REQUEST: MessageDescriptor = {
  name: 'GetTaskRequest',
  fields: [tenantField, idField('id', { required: true }), historyLengthField],
};

/** An invalid page token is invalid params (digest §10.7), so it is checked with the rest of the request. */
const validPageToken: MessageRule = (value, report) => {
  const token = value['pageToken'];
  if (typeof token === 'string' && readListPageToken(token) === undefined) {
    report('pageToken', 'is not a page token issued by this server');
  }
};

const LIST_TASKS_REQUEST: MessageDescriptor = {
  name: 'ListTasksRequest',
  fields: [
    tenantField,
    idField('context_id'),
    field('status', TASK_STATE),
    field('page_size', INT32, { presence: true, min: 1, max: 100 }),
    field('page_token', STRING),
    historyLengthField,
    field('status_timestamp_after', TIMESTAMP),
    field('include_artifacts', BOOL, { presence: true }),
  ],
  rules: [validPageToken],
};

const CANCEL_TASK_REQUEST: MessageDescriptor = {
  name: 'CancelTaskRequest',
  fields: [tenantField, idField('id', { required: true }), metadataField],
};

const SUBSCRIBE_TO_TASK_REQUEST: MessageDescriptor = {
  name: 'SubscribeToTaskRequest',
  fields: [tenantField, idField('id', { required: true })],
};

const GET_EXTENDED_AGENT_CARD_REQUEST: MessageDescriptor = {
  name: 'GetExtendedAgentCardRequest',
  fields: [tenantField],
};

const GET_TASK_PUSH_NOTIFICATION_CONFIG_REQUEST: MessageDescriptor = {
  name: 'GetTaskPushNotificationConfigRequest',
  fields: [tenantField, idField('task_id', { required: true }), idField('id', { required: true })],
};

const LIST_TASK_PUSH_NOTIFICATION_CONFIGS_REQUEST: MessageDescriptor = {
  name: 'ListTaskPushNotificationConfigsRequest',
  fields: [
    idField('task_id', { required: true }),
    // The spec sets no bounds; a negative size is still meaningless, 0 means "server default".
    field('page_size', INT32, { min: 0 }),
    field('page_token', STRING),
    tenantField,
  ],
};

const DELETE_TASK_PUSH_NOTIFICATION_CONFIG_REQUEST: MessageDescriptor = {
  name: 'DeleteTaskPushNotificationConfigRequest',
  fields: [tenantField, idField('task_id', { required: true }), idField('id', { required: true })],
};

/** Every descriptor, keyed by proto message name. */
export const A2A_MESSAGE_DESCRIPTORS = {
  Part: PART,
  Message: MESSAGE,
  TaskStatus: TASK_STATUS,
  Artifact: ARTIFACT,
  AuthenticationInfo: AUTHENTICATION_INFO,
  TaskPushNotificationConfig: TASK_PUSH_NOTIFICATION_CONFIG,
  SendMessageConfiguration: SEND_MESSAGE_CONFIGURATION,
  SendMessageRequest: SEND_MESSAGE_REQUEST,
  GetTaskRequest: GET_TASK_REQUEST,
  ListTasksRequest: LIST_TASKS_REQUEST,
  CancelTaskRequest: CANCEL_TASK_REQUEST,
  SubscribeToTaskRequest: SUBSCRIBE_TO_TASK_REQUEST,
  GetExtendedAgentCardRequest: GET_EXTENDED_AGENT_CARD_REQUEST,
  GetTaskPushNotificationConfigRequest: GET_TASK_PUSH_NOTIFICATION_CONFIG_REQUEST,
  ListTaskPushNotificationConfigsRequest: LIST_TASK_PUSH_NOTIFICATION_CONFIGS_REQUEST,
  DeleteTaskPushNotificationConfigRequest: DELETE_TASK_PUSH_NOTIFICATION_CONFIG_REQUEST,
} as const satisfies Record<string, MessageDescriptor>;

// ---------------------------------------------------------------------------------------------------------
// Typed decoders. The descriptors above are the single source of the shapes; the unit tests pin them to the
// model types, which is why the one cast below is safe.

type Limits = Partial<ProtoJsonLimits>;

function decodeAs<T>(descriptor: MessageDescriptor, input: unknown, limits?: Limits): T {
  return decode(descriptor, input, '', limits) as unknown as T;
}

export const decodeSendMessageRequest = (input: unknown, limits?: Limits): SendMessageRequest =>
  decodeAs(SEND_MESSAGE_REQUEST, input, limits);

export const decodeGetTaskRequest = (input: unknown, limits?: Limits): GetTaskRequest =>
  decodeAs(GET_TASK_REQUEST, input, limits);

export const decodeListTasksRequest = (input: unknown, limits?: Limits): ListTasksRequest =>
  decodeAs(LIST_TASKS_REQUEST, input, limits);

export const decodeCancelTaskRequest = (input: unknown, limits?: Limits): CancelTaskRequest =>
  decodeAs(CANCEL_TASK_REQUEST, input, limits);

export const decodeSubscribeToTaskRequest = (
  input: unknown,
  limits?: Limits,
): SubscribeToTaskRequest => decodeAs(SUBSCRIBE_TO_TASK_REQUEST, input, limits);

/** Missing params are allowed here: the spec's own example sends none (digest §7.2). */
export const decodeGetExtendedAgentCardRequest = (
  input: unknown,
  limits?: Limits,
): GetExtendedAgentCardRequest =>
  input === undefined || input === null
    ? {}
    : decodeAs(GET_EXTENDED_AGENT_CARD_REQUEST, input, limits);

/** The CreateTaskPushNotificationConfig request (there is no wrapper type, digest §2 row 7). */
export const decodeTaskPushNotificationConfig = (
  input: unknown,
  limits?: Limits,
): TaskPushNotificationConfig => decodeAs(TASK_PUSH_NOTIFICATION_CONFIG, input, limits);

export const decodeGetTaskPushNotificationConfigRequest = (
  input: unknown,
  limits?: Limits,
): GetTaskPushNotificationConfigRequest =>
  decodeAs(GET_TASK_PUSH_NOTIFICATION_CONFIG_REQUEST, input, limits);

export const decodeListTaskPushNotificationConfigsRequest = (
  input: unknown,
  limits?: Limits,
): ListTaskPushNotificationConfigsRequest =>
  decodeAs(LIST_TASK_PUSH_NOTIFICATION_CONFIGS_REQUEST, input, limits);

export const decodeDeleteTaskPushNotificationConfigRequest = (
  input: unknown,
  limits?: Limits,
): DeleteTaskPushNotificationConfigRequest =>
  decodeAs(DELETE_TASK_PUSH_NOTIFICATION_CONFIG_REQUEST, input, limits);

/** A Message from an agent worker (any role). */
export const decodeMessage = (input: unknown, limits?: Limits): Message =>
  decodeAs(MESSAGE, input, limits);

export const decodeArtifact = (input: unknown, limits?: Limits): Artifact =>
  decodeAs(ARTIFACT, input, limits);

export const decodeTaskStatus = (input: unknown, limits?: Limits): TaskStatus =>
  decodeAs(TASK_STATUS, input, limits);

// ---------------------------------------------------------------------------------------------------------
// Scalar normalisation, exported for bindings that read values outside a message (e.g. REST query params).

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;
/** The range of `google.protobuf.Timestamp`: 0001-01-01T00:00:00Z … 9999-12-31T23:59:59.999Z. */
const MIN_TIMESTAMP_MS = -62_135_596_800_000;
const MAX_TIMESTAMP_MS = 253_402_300_799_999;

/**
 * Parses an RFC 3339 timestamp (any offset, up to nanosecond fraction) and returns it in UTC as
 * `YYYY-MM-DDTHH:mm:ss.sssZ` (digest §3), or `undefined` when it is not a valid timestamp.
 * Sub-millisecond digits are truncated.
 */
export function normalizeTimestamp(text: string): string | undefined {
  const match = RFC3339.exec(text);
  if (match === null) {
    return undefined;
  }
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const millis = Number((match[7] ?? '').padEnd(3, '0').slice(0, 3));
  const offsetHours = Number(match[9] ?? '0');
  const offsetMinutes = Number(match[10] ?? '0');
  if (
    month < 1 ||
    month > 12 ||
    day < 1 ||
    day > daysInMonth(year, month) ||
    hour > 23 ||
    minute > 59 ||
    second > 59 ||
    offsetHours > 23 ||
    offsetMinutes > 59
  ) {
    return undefined;
  }
  const local = new Date(0);
  // setUTCFullYear, unlike Date.UTC, does not map years 0–99 onto 1900–1999.
  local.setUTCFullYear(year, month - 1, day);
  local.setUTCHours(hour, minute, second, millis);
  const sign = match[8] === '-' ? -1 : 1;
  const utc = local.getTime() - sign * (offsetHours * 60 + offsetMinutes) * 60_000;
  if (utc < MIN_TIMESTAMP_MS || utc > MAX_TIMESTAMP_MS) {
    return undefined;
  }
  return new Date(utc).toISOString();
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) {
    const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
    return leap ? 29 : 28;
  }
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/**
 * Accepts standard or URL-safe base64, padded or not (never a mix of alphabets), and returns the standard
 * padded form (digest §3 `bytes`), or `undefined` when the text is not base64.
 */
export function normalizeBase64(text: string): string | undefined {
  const match = /^([A-Za-z0-9+/_-]*)(={0,2})$/.exec(text);
  if (match === null) {
    return undefined;
  }
  const body = match[1] ?? '';
  const padding = (match[2] ?? '').length;
  const mixedAlphabets = /[+/]/.test(body) && /[-_]/.test(body);
  const remainder = body.length % 4;
  if (mixedAlphabets || remainder === 1 || (padding > 0 && padding !== (4 - remainder) % 4)) {
    return undefined;
  }
  // Re-encoding also canonicalises non-zero trailing bits.
  return Buffer.from(body.replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('base64');
}

// ---------------------------------------------------------------------------------------------------------
// ListTasks page tokens (digest §10.7): opaque to clients, base64url of a small versioned JSON cursor.

export interface ListPageCursor {
  /** Status timestamp of the last task on the previous page (normalised RFC 3339). */
  statusTimestamp: string;
  /** Id of that task; breaks ties between equal timestamps. */
  taskId: string;
}

const PAGE_TOKEN_VERSION = 1;

export function encodeListPageToken(cursor: ListPageCursor): string {
  const payload = { v: PAGE_TOKEN_VERSION, ts: cursor.statusTimestamp, id: cursor.taskId };
  return Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
}

/** Throws `INVALID_PARAMS` on field `pageToken` when the token was not issued by {@link encodeListPageToken}. */
export function decodeListPageToken(token: string): ListPageCursor {
  const cursor = readListPageToken(token);
  if (cursor === undefined) {
    throw invalidParams([
      { field: 'pageToken', description: 'is not a page token issued by this server' },
    ]);
  }
  return cursor;
}

function readListPageToken(token: string): ListPageCursor | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(token)) {
    return undefined;
  }
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (
    !isPlainObject(payload) ||
    payload['v'] !== PAGE_TOKEN_VERSION ||
    typeof payload['ts'] !== 'string' ||
    normalizeTimestamp(payload['ts']) !== payload['ts'] ||
    typeof payload['id'] !== 'string' ||
    payload['id'] === ''
  ) {
    return undefined;
  }
  return { statusTimestamp: payload['ts'], taskId: payload['id'] };
}

// ---------------------------------------------------------------------------------------------------------
// Response shaping.

/**
 * Trims `history` per `historyLength` (digest §10.5): unset → unchanged; 0 → the `history` key is removed;
 * N → the N most recent messages. A negative value is invalid params.
 */
export function applyHistoryLength(task: Task, historyLength: number | undefined): Task {
  if (historyLength === undefined) {
    return task;
  }
  if (historyLength < 0) {
    throw invalidParams([{ field: 'historyLength', description: 'must not be negative' }]);
  }
  const { history, ...rest } = task;
  if (historyLength === 0 || history === undefined) {
    return rest;
  }
  return { ...rest, history: history.slice(-historyLength) };
}

/** The task without its `artifacts` key, as ListTasks returns it unless `includeArtifacts` (digest §10.7). */
export function withoutArtifacts(task: Task): Task {
  const { artifacts: _artifacts, ...rest } = task;
  return rest;
}

// ---------------------------------------------------------------------------------------------------------
// The walker.

interface DecodeContext {
  readonly limits: ProtoJsonLimits;
  readonly violations: Violations;
}

class Violations {
  private readonly list: FieldViolation[] = [];
  private dropped = 0;

  constructor(private readonly max: number) {}

  add(field: string, description: string): void {
    if (this.list.length < this.max) {
      this.list.push({ field, description });
    } else {
      this.dropped += 1;
    }
  }

  toArray(): FieldViolation[] {
    return this.dropped === 0
      ? this.list
      : [...this.list, { field: '', description: `${this.dropped} further violations not listed` }];
  }
}

const INT32_MIN = -2_147_483_648;
const INT32_MAX = 2_147_483_647;

function decodeMessageValue(
  descriptor: MessageDescriptor,
  input: unknown,
  path: string,
  ctx: DecodeContext,
): DecodedMessage | undefined {
  if (!isPlainObject(input)) {
    const got = input === undefined ? 'nothing' : describeType(input);
    ctx.violations.add(path, `must be a JSON object (${descriptor.name}), got ${got}`);
    return undefined;
  }
  const output: DecodedMessage = {};
  const oneofMembers = new Map<string, string[]>();
  for (const fd of descriptor.fields) {
    const fieldPath = join(path, fd.json);
    const raw = readField(input, fd, fieldPath, ctx);
    // ProtoJSON: null means absent, except for a Value, where it is the JSON null value.
    if (raw === undefined || (raw === null && fd.kind.type !== 'value')) {
      if (fd.required) {
        ctx.violations.add(fieldPath, 'is required');
      }
      continue;
    }
    if (fd.oneof !== undefined) {
      const members = oneofMembers.get(fd.oneof) ?? [];
      members.push(fd.json);
      oneofMembers.set(fd.oneof, members);
    }
    const decoded = decodeField(fd, raw, fieldPath, ctx);
    if (decoded === undefined) {
      continue;
    }
    if (isDefault(fd, decoded.value)) {
      if (fd.required) {
        ctx.violations.add(fieldPath, requiredDescription(fd));
        continue;
      }
      if (!hasPresence(fd)) {
        continue;
      }
    }
    output[fd.json] = decoded.value;
  }
  checkOneofs(descriptor, oneofMembers, path, ctx);
  for (const rule of descriptor.rules ?? []) {
    rule(output, (field, description) => ctx.violations.add(join(path, field), description));
  }
  return output;
}

function readField(
  input: { [key: string]: unknown },
  fd: FieldDescriptor,
  fieldPath: string,
  ctx: DecodeContext,
): unknown {
  const camel = own(input, fd.json);
  const snake = fd.proto === fd.json ? undefined : own(input, fd.proto);
  if (camel !== undefined && snake !== undefined) {
    ctx.violations.add(fieldPath, `is set twice, as "${fd.proto}" and as "${fd.json}"`);
  }
  // Not `??`: a JSON null must survive, it is a value for `google.protobuf.Value` fields.
  return camel !== undefined ? camel : snake;
}

function checkOneofs(
  descriptor: MessageDescriptor,
  oneofMembers: ReadonlyMap<string, readonly string[]>,
  path: string,
  ctx: DecodeContext,
): void {
  const groups = new Set(
    descriptor.fields.flatMap((fd) => (fd.oneof === undefined ? [] : [fd.oneof])),
  );
  for (const group of groups) {
    const names = descriptor.fields.filter((fd) => fd.oneof === group).map((fd) => fd.json);
    const set = oneofMembers.get(group) ?? [];
    if (set.length > 1) {
      ctx.violations.add(
        path,
        `only one of ${names.join(', ')} may be set (oneof ${group}), got ${set.join(', ')}`,
      );
    } else if (set.length === 0 && descriptor.requiredOneofs?.includes(group)) {
      ctx.violations.add(path, `exactly one of ${names.join(', ')} must be set (oneof ${group})`);
    }
  }
}

/** Returns `undefined` when the value was rejected (the violation is already recorded). */
function decodeField(
  fd: FieldDescriptor,
  raw: unknown,
  path: string,
  ctx: DecodeContext,
): { value: unknown } | undefined {
  const cardinality = fd.cardinality ?? 'singular';
  switch (cardinality) {
    case 'singular': {
      const value = decodeSingular(fd.kind, raw, path, ctx);
      return value === undefined ? undefined : checkSingular(fd, value, path, ctx);
    }
    case 'repeated':
      return decodeRepeated(fd, raw, path, ctx);
    case 'map':
      return decodeMap(fd, raw, path, ctx);
    default:
      return assertNever(cardinality);
  }
}

function decodeRepeated(
  fd: FieldDescriptor,
  raw: unknown,
  path: string,
  ctx: DecodeContext,
): { value: unknown[] } | undefined {
  if (!Array.isArray(raw)) {
    ctx.violations.add(path, `must be a JSON array, got ${describeType(raw)}`);
    return undefined;
  }
  if (fd.limit === 'maxPartsPerMessage' && raw.length > ctx.limits.maxPartsPerMessage) {
    // Do not walk an oversized list: that is the cost the limit is there to avoid.
    ctx.violations.add(
      path,
      `has ${raw.length} parts; at most ${ctx.limits.maxPartsPerMessage} allowed`,
    );
    return undefined;
  }
  const items: unknown[] = [];
  let ok = true;
  raw.forEach((item: unknown, index) => {
    const itemPath = `${path}[${index}]`;
    if (item === null || item === undefined) {
      ctx.violations.add(itemPath, 'must not be null');
      ok = false;
      return;
    }
    const value = decodeSingular(fd.kind, item, itemPath, ctx);
    const checked = value === undefined ? undefined : checkSingular(fd, value, itemPath, ctx);
    if (checked === undefined) {
      ok = false;
    } else {
      items.push(checked.value);
    }
  });
  return ok ? { value: items } : undefined;
}

function decodeMap(
  fd: FieldDescriptor,
  raw: unknown,
  path: string,
  ctx: DecodeContext,
): { value: { [key: string]: unknown } } | undefined {
  if (!isPlainObject(raw)) {
    ctx.violations.add(path, `must be a JSON object, got ${describeType(raw)}`);
    return undefined;
  }
  const entries: [string, unknown][] = [];
  let ok = true;
  for (const [key, item] of Object.entries(raw)) {
    const entryPath = `${path}[${JSON.stringify(key)}]`;
    if (item === null) {
      ctx.violations.add(entryPath, 'must not be null');
      ok = false;
      continue;
    }
    const value = decodeSingular(fd.kind, item, entryPath, ctx);
    if (value === undefined) {
      ok = false;
    } else {
      entries.push([key, value]);
    }
  }
  // fromEntries defines own properties, so a "__proto__" key stays data.
  return ok ? { value: Object.fromEntries(entries) } : undefined;
}

/** Range and limit checks for a decoded singular value. */
function checkSingular(
  fd: FieldDescriptor,
  value: unknown,
  path: string,
  ctx: DecodeContext,
): { value: unknown } | undefined {
  if (typeof value === 'number' && !withinBounds(fd, value)) {
    ctx.violations.add(path, `${boundsDescription(fd)}, got ${value}`);
    return undefined;
  }
  if (
    (fd.limit === 'maxTextPartLength' || fd.limit === 'maxIdLength') &&
    typeof value === 'string'
  ) {
    const max = ctx.limits[fd.limit];
    if (value.length > max) {
      ctx.violations.add(path, `is ${value.length} characters long; at most ${max} allowed`);
      return undefined;
    }
  }
  if (fd.limit === 'maxMetadataBytes') {
    const bytes = Buffer.byteLength(JSON.stringify(value), 'utf8');
    if (bytes > ctx.limits.maxMetadataBytes) {
      ctx.violations.add(
        path,
        `is ${bytes} bytes of JSON; at most ${ctx.limits.maxMetadataBytes} allowed`,
      );
      return undefined;
    }
  }
  return { value };
}

/** Decodes one non-null value of `kind`; returns `undefined` after recording a violation. */
function decodeSingular(kind: FieldKind, raw: unknown, path: string, ctx: DecodeContext): unknown {
  const reject = (description: string): undefined => {
    ctx.violations.add(path, description);
    return undefined;
  };
  switch (kind.type) {
    case 'string': {
      if (typeof raw !== 'string') {
        return reject(`must be a string, got ${describeType(raw)}`);
      }
      const problem = stringProblem(raw);
      return problem === undefined ? raw : reject(problem);
    }
    case 'bool':
      return typeof raw === 'boolean'
        ? raw
        : reject(`must be true or false, got ${describeType(raw)}`);
    case 'int32': {
      const value = toInt32(raw);
      return value ?? reject(`must be a 32-bit integer, got ${describeValue(raw)}`);
    }
    case 'enum':
      return decodeEnum(kind.values, raw) ?? reject(enumDescription(kind.name, kind.values, raw));
    case 'message':
      return decodeMessageValue(kind.descriptor, raw, path, ctx);
    case 'struct': {
      if (!isPlainObject(raw)) {
        return reject(`must be a JSON object, got ${describeType(raw)}`);
      }
      const problem = jsonProblem(raw, 0, ctx.limits.maxJsonDepth);
      return problem === undefined ? (raw as JsonObject) : reject(problem);
    }
    case 'value': {
      const problem = jsonProblem(raw, 0, ctx.limits.maxJsonDepth);
      return problem === undefined ? (raw as JsonValue) : reject(problem);
    }
    case 'timestamp': {
      const value = typeof raw === 'string' ? normalizeTimestamp(raw) : undefined;
      return value ?? reject('must be an RFC 3339 timestamp such as 2026-01-01T00:00:00Z');
    }
    case 'bytes': {
      const value = typeof raw === 'string' ? normalizeBase64(raw) : undefined;
      return value ?? reject('must be base64 (standard or URL-safe alphabet)');
    }
    default:
      return assertNever(kind);
  }
}

function withinBounds(fd: FieldDescriptor, value: number): boolean {
  return (fd.min === undefined || value >= fd.min) && (fd.max === undefined || value <= fd.max);
}

function boundsDescription(fd: FieldDescriptor): string {
  if (fd.min !== undefined && fd.max !== undefined) {
    return `must be between ${fd.min} and ${fd.max}`;
  }
  return fd.min !== undefined ? `must be at least ${fd.min}` : `must be at most ${fd.max ?? ''}`;
}

/** A JSON number's text (RFC 8259 §6): no plus sign, no leading zeros, no surrounding whitespace. */
const JSON_NUMBER = /^(-?)(0|[1-9]\d*)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/**
 * An int32 per ProtoJSON (digest §3): a JSON number or a string holding a JSON number, either way with an
 * integral value in range (`1e2`, `"100.0"` and `-0` are 100, 100 and 0; `1.5`, `"NaN"`, `" 1"` are not).
 */
function toInt32(raw: unknown): number | undefined {
  let value: number | undefined;
  if (typeof raw === 'number') {
    value = raw;
  } else if (typeof raw === 'string') {
    value = integerText(raw);
  }
  return value !== undefined && Number.isInteger(value) && value >= INT32_MIN && value <= INT32_MAX
    ? value + 0 // -0 becomes 0
    : undefined;
}

/**
 * The exact integer a JSON number text denotes, or `undefined` when it has a fractional part or more than
 * ten significant digits (beyond int32 either way). Exact, unlike `Number("1.0000000000000000001")`.
 */
function integerText(text: string): number | undefined {
  const match = JSON_NUMBER.exec(text);
  if (match === null) {
    return undefined;
  }
  const [, sign = '', whole = '', fraction = '', exponent = '0'] = match;
  let digits = `${whole}${fraction}`.replace(/^0+/, '');
  let scale = Number(exponent) - fraction.length;
  if (digits === '') {
    return 0;
  }
  const trailingZeros = /0*$/.exec(digits)?.[0].length ?? 0;
  digits = digits.slice(0, digits.length - trailingZeros);
  scale += trailingZeros;
  if (scale < 0 || digits.length + scale > 10) {
    return undefined;
  }
  return Number(`${sign}${digits}${'0'.repeat(scale)}`);
}

/** Enum values arrive as their full proto name or their number (digest §3, §5). */
function decodeEnum(values: readonly string[], raw: unknown): string | undefined {
  if (typeof raw === 'string') {
    return values.includes(raw) ? raw : undefined;
  }
  if (typeof raw === 'number' && Number.isInteger(raw)) {
    return values[raw];
  }
  return undefined;
}

function enumDescription(name: string, values: readonly string[], raw: unknown): string {
  if (typeof raw === 'string') {
    // "completed" / "input-required" / "user" are the 0.3 spellings (digest §11).
    const prefix = (values[0] ?? '').replace(/UNSPECIFIED$/, '');
    const suggestion = `${prefix}${raw.toUpperCase().replace(/-/g, '_')}`;
    const hint = values.includes(suggestion) ? `; A2A 1.0 spells it ${suggestion}` : '';
    return `"${raw}" is not a ${name} value${hint}`;
  }
  return `must be a ${name} name or number (0–${values.length - 1}), got ${describeValue(raw)}`;
}

const NUL = '\u0000';
/** Task documents are stored as Postgres jsonb, which cannot hold U+0000: refuse it up front. */
const NUL_PROBLEM = 'contains the character U+0000, which is not accepted';
/** An unpaired surrogate is not Unicode: Postgres refuses it in jsonb, and UTF-8 cannot carry it. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const SURROGATE_PROBLEM = 'contains an unpaired UTF-16 surrogate, which is not valid Unicode';

/** Why a string cannot be stored as sent, or `undefined` when it can. */
function stringProblem(text: string): string | undefined {
  if (text.includes(NUL)) {
    return NUL_PROBLEM;
  }
  return LONE_SURROGATE.test(text) ? SURROGATE_PROBLEM : undefined;
}

/** Why `value` is not acceptable JSON for a Struct or Value, or `undefined` when it is. */
function jsonProblem(value: unknown, depth: number, maxDepth: number): string | undefined {
  if (typeof value === 'string') {
    return stringProblem(value);
  }
  if (value === null || typeof value === 'boolean') {
    return undefined;
  }
  if (typeof value === 'number') {
    return Number.isFinite(value) ? undefined : 'contains a number that is not finite';
  }
  const isArray = Array.isArray(value);
  if (!isArray && !isPlainObject(value)) {
    return `contains ${describeType(value)}, which is not JSON`;
  }
  if (depth >= maxDepth) {
    return `nests deeper than ${maxDepth} levels`;
  }
  if (!isArray) {
    const keyProblem = Object.keys(value)
      .map(stringProblem)
      .find((problem) => problem !== undefined);
    if (keyProblem !== undefined) {
      return keyProblem;
    }
  }
  const children: unknown[] = isArray ? value : Object.values(value);
  for (const child of children) {
    const problem = jsonProblem(child, depth + 1, maxDepth);
    if (problem !== undefined) {
      return problem;
    }
  }
  return undefined;
}

function isDefault(fd: FieldDescriptor, value: unknown): boolean {
  if (Array.isArray(value)) {
    return value.length === 0;
  }
  if (fd.cardinality === 'map') {
    return isPlainObject(value) && Object.keys(value).length === 0;
  }
  return isDefaultValue(fd.kind, value);
}

/**
 * Whether one value of a field of this kind is the proto3 default (ProtoJSON omits it without presence):
 * zero-like scalars and the first enum value (by name or number). A message, Struct, Value or Timestamp that
 * is set is never a default.
 */
export function isDefaultValue(kind: FieldKind, value: unknown): boolean {
  switch (kind.type) {
    case 'string':
    case 'bytes':
      return value === '';
    case 'int32':
      return value === 0;
    case 'bool':
      return value === false;
    case 'enum':
      return value === kind.values[0] || value === 0;
    case 'message':
    case 'struct':
    case 'value':
    case 'timestamp':
      return false;
    default:
      return assertNever(kind);
  }
}

/** Message-typed fields and oneof members always have presence in proto3; scalars only with `optional`. */
function hasPresence(fd: FieldDescriptor): boolean {
  return fd.presence === true || fd.oneof !== undefined;
}

function requiredDescription(fd: FieldDescriptor): string {
  if (fd.cardinality === 'repeated') {
    return 'is required and must have at least one element';
  }
  if (fd.kind.type === 'enum') {
    return `is required and must not be ${fd.kind.values[0] ?? 'unspecified'}`;
  }
  return 'is required and must not be empty';
}

function own(input: { [key: string]: unknown }, key: string): unknown {
  return Object.prototype.hasOwnProperty.call(input, key) ? input[key] : undefined;
}

/** A JSON object: not null, not an array, not a class instance. */
export function isPlainObject(value: unknown): value is { [key: string]: unknown } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return false;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function describeType(value: unknown): string {
  if (value === null) {
    return 'null';
  }
  if (Array.isArray(value)) {
    return 'an array';
  }
  const type = typeof value;
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

function describeValue(value: unknown): string {
  return typeof value === 'number' || typeof value === 'string'
    ? JSON.stringify(value)
    : describeType(value);
}

function join(path: string, name: string): string {
  return path === '' ? name : `${path}.${name}`;
}

function assertNever(value: never): never {
  throw new A2aError('INTERNAL', `unhandled descriptor case ${JSON.stringify(value)}`);
}

/**
 * One client interface over the three A2A bindings (spec digest §7 JSON-RPC, §8 HTTP+JSON, §8b gRPC), for
 * the conformance suite. Every call takes the ProtoJSON of the request message and returns a normalised
 * outcome: the ProtoJSON of the response message, or the error as the wire reported it (binding status,
 * ErrorInfo, BadRequest). Nothing here knows the platform's mapping tables; the suite compares what comes
 * back with the spec.
 */
import { BinaryReader, BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import {
  credentials,
  Client as GrpcClient,
  status as GrpcStatus,
  Metadata,
  type ServiceError,
} from '@grpc/grpc-js';
import { a2aPb } from '@lib/a2a-protocol';
import { SseConnection } from '../support/sse';

export type BindingName = 'JSONRPC' | 'HTTP+JSON' | 'GRPC';

/** The RPCs of `lf.a2a.v1.A2AService` (spec digest §2), by their JSON-RPC / gRPC name. */
export type UnaryRpc =
  | 'SendMessage'
  | 'GetTask'
  | 'ListTasks'
  | 'CancelTask'
  | 'CreateTaskPushNotificationConfig'
  | 'GetTaskPushNotificationConfig'
  | 'ListTaskPushNotificationConfigs'
  | 'DeleteTaskPushNotificationConfig'
  | 'GetExtendedAgentCard';
export type StreamingRpc = 'SendStreamingMessage' | 'SubscribeToTask';

/**
 * How the request finds its agent (spec digest §10.9): the agent's own URL, or an entry point shared by all
 * agents that routes by the `tenant` field (`<tenant>/<agent>`, the card's AgentInterface.tenant). gRPC has
 * only the second: its per-agent variant is the client copying AgentInterface.tenant into every request.
 */
export type Routing = 'agent-url' | 'tenant';

/**
 * Fields a gRPC request cannot carry as ProtoJSON (an enum number or a Timestamp no JSON text parses to):
 * `omit` lists the ProtoJSON keys left out of the encoding, `append` is raw protobuf appended after it.
 */
export interface GrpcRawFields {
  omit: readonly string[];
  append: Uint8Array;
}

export interface CallOptions {
  /** The tenant of the route. Default `demo`. */
  tenantId?: string;
  /** The hosted agent. Default `echo`. */
  agent?: string;
  /** The API key; `null` sends none. Default `demo-key`. */
  apiKey?: string | null;
  /** `A2A-Version`; `null` sends none. Default `1.0`. */
  a2aVersion?: string | null;
  /** Sent in `A2A-Extensions` (comma-separated), when given. */
  extensions?: readonly string[];
  /** Default `agent-url`. */
  routing?: Routing;
  /** gRPC only; see {@link GrpcRawFields}. */
  grpcRaw?: GrpcRawFields;
  /** HTTP bindings only: send A2A-Version as the `A2A-Version` query parameter (spec digest §8.1). */
  versionInQuery?: boolean;
  /** HTTP+JSON only: SubscribeToTask on POST, as the prose has it, instead of the proto's GET (§12 #1). */
  subscribeWithPost?: boolean;
  /** Streams only: told each event as it arrives (the stream is still read to its end). */
  onEvent?: (event: Record<string, unknown>) => void;
}

/** How a binding signalled an error on the wire. */
export type WireError =
  | { binding: 'JSONRPC'; httpStatus: number; jsonRpcCode: number | undefined }
  | {
      binding: 'HTTP+JSON';
      httpStatus: number;
      /** `error.status` of the google.rpc.Status body. */
      status: string | undefined;
      /** `error.code` of the body (must equal the HTTP status). */
      bodyCode: number | undefined;
    }
  | { binding: 'GRPC'; grpcCode: string };

export interface ErrorOutcome {
  ok: false;
  wire: WireError;
  message: string;
  /** ErrorInfo `reason` (exactly one ErrorInfo is expected; `undefined` when there is none). */
  reason: string | undefined;
  errorInfoDomain: string | undefined;
  errorInfoMetadata: Record<string, string>;
  /** How many ErrorInfo details the error carried. */
  errorInfoCount: number;
  /** `field` of every google.rpc.BadRequest violation, in order. */
  badRequestFields: string[];
  /** The response's `A2A-Extensions` (header or metadata), split. */
  activatedExtensions: string[];
}

export interface ResultOutcome {
  ok: true;
  /** ProtoJSON of the response message. */
  result: unknown;
  activatedExtensions: string[];
}

export type CallOutcome = ResultOutcome | ErrorOutcome;

export interface StreamOutcomeOk {
  ok: true;
  /** Every StreamResponse, as ProtoJSON, in order. */
  events: Record<string, unknown>[];
  /** An error delivered after the stream started (none expected). */
  streamError: string | null;
  activatedExtensions: string[];
}

export type StreamOutcome = StreamOutcomeOk | ErrorOutcome;

export interface BindingClient {
  readonly name: BindingName;
  call(
    method: UnaryRpc,
    params: Record<string, unknown>,
    options?: CallOptions,
  ): Promise<CallOutcome>;
  /** Reads the stream to its end (the server must close it); a pre-stream error is an ErrorOutcome. */
  stream(
    method: StreamingRpc,
    params: Record<string, unknown>,
    options?: CallOptions,
  ): Promise<StreamOutcome>;
}

export interface PlatformAddress {
  baseUrl: string;
  grpcTarget: string;
}

const ERROR_INFO = 'type.googleapis.com/google.rpc.ErrorInfo';
const BAD_REQUEST = 'type.googleapis.com/google.rpc.BadRequest';
/** Bound on every call and every stream: a binding that hangs fails its scenario instead of the file. */
const CALL_TIMEOUT_MS = 30_000;

const defaults = (options: CallOptions = {}) => ({
  tenantId: options.tenantId ?? 'demo',
  agent: options.agent ?? 'echo',
  apiKey: options.apiKey === undefined ? 'demo-key' : options.apiKey,
  a2aVersion: options.a2aVersion === undefined ? '1.0' : options.a2aVersion,
  extensions: options.extensions ?? [],
  routing: options.routing ?? 'agent-url',
  versionInQuery: options.versionInQuery ?? false,
});

/** The `tenant` a request carries: the one in the params, else the route's on tenant-routed entry points. */
function tenantFor(params: Record<string, unknown>, options: ReturnType<typeof defaults>) {
  const given = params['tenant'];
  if (typeof given === 'string') {
    return given;
  }
  return options.routing === 'tenant' ? `${options.tenantId}/${options.agent}` : undefined;
}

function httpHeaders(options: ReturnType<typeof defaults>): Record<string, string> {
  const headers: Record<string, string> = {};
  if (options.apiKey !== null) {
    headers['X-API-Key'] = options.apiKey;
  }
  if (options.a2aVersion !== null && !options.versionInQuery) {
    headers['A2A-Version'] = options.a2aVersion;
  }
  if (options.extensions.length > 0) {
    headers['A2A-Extensions'] = options.extensions.join(',');
  }
  return headers;
}

/** `?A2A-Version=…` when the version travels in the query, else nothing. */
function versionQuery(options: ReturnType<typeof defaults>): URLSearchParams {
  const query = new URLSearchParams();
  if (options.a2aVersion !== null && options.versionInQuery) {
    query.set('A2A-Version', options.a2aVersion);
  }
  return query;
}

function splitList(value: string | null | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v !== '');
}

interface JsonDetail {
  '@type'?: unknown;
  reason?: unknown;
  domain?: unknown;
  metadata?: unknown;
  fieldViolations?: unknown;
}

/** ErrorInfo and BadRequest out of ProtoJSON `Any` details (JSON-RPC `data`, REST `details`). */
function fromJsonDetails(
  details: unknown,
): Pick<
  ErrorOutcome,
  'reason' | 'errorInfoDomain' | 'errorInfoMetadata' | 'errorInfoCount' | 'badRequestFields'
> {
  const list = Array.isArray(details) ? (details as JsonDetail[]) : [];
  const infos = list.filter((d) => d['@type'] === ERROR_INFO);
  const info = infos[0];
  const violations = list
    .filter((d) => d['@type'] === BAD_REQUEST)
    .flatMap((d) => (Array.isArray(d.fieldViolations) ? (d.fieldViolations as unknown[]) : []));
  return {
    reason: typeof info?.reason === 'string' ? info.reason : undefined,
    errorInfoDomain: typeof info?.domain === 'string' ? info.domain : undefined,
    errorInfoMetadata:
      typeof info?.metadata === 'object' && info.metadata !== null
        ? (info.metadata as Record<string, string>)
        : {},
    errorInfoCount: infos.length,
    badRequestFields: violations.map((v) => String((v as { field?: unknown }).field)),
  };
}

async function readJson(response: Response): Promise<{ text: string; json: unknown }> {
  const text = await response.text();
  try {
    return { text, json: text === '' ? undefined : (JSON.parse(text) as unknown) };
  } catch {
    return { text, json: undefined };
  }
}

/** Reads an SSE body to its end; `toEvent` turns one `data:` into a StreamResponse or an error text. */
async function readSse(
  response: Response,
  controller: AbortController,
  toEvent: (data: string) => { event: Record<string, unknown> } | { error: string },
  onEvent: (event: Record<string, unknown>) => void = () => undefined,
): Promise<{ events: Record<string, unknown>[]; streamError: string | null }> {
  const connection = new SseConnection(response, controller);
  const deadline = Date.now() + CALL_TIMEOUT_MS;
  const events: Record<string, unknown>[] = [];
  let streamError: string | null = null;
  for (;;) {
    const frame = await connection.next(Math.max(1, deadline - Date.now()));
    if (frame === null) {
      return { events, streamError };
    }
    const item = frame.event === 'error' ? { error: frame.data } : toEvent(frame.data);
    if ('error' in item) {
      streamError = item.error;
    } else {
      events.push(item.event);
      onEvent(item.event);
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// JSON-RPC (spec digest §7)
// ---------------------------------------------------------------------------------------------------------

interface RpcBody {
  jsonrpc?: unknown;
  id?: unknown;
  result?: unknown;
  error?: { code?: unknown; message?: unknown; data?: unknown };
}

export class JsonRpcBindingClient implements BindingClient {
  readonly name = 'JSONRPC';
  private nextId = 1;

  constructor(private readonly address: PlatformAddress) {}

  async call(
    method: UnaryRpc,
    params: Record<string, unknown>,
    options?: CallOptions,
  ): Promise<CallOutcome> {
    const { response, id } = await this.post(method, params, options, 'application/json');
    const { text, json } = await readJson(response);
    const body = (json ?? {}) as RpcBody;
    const activatedExtensions = splitList(response.headers.get('a2a-extensions'));
    if (body.id !== id) {
      throw new Error(`JSON-RPC response does not echo id ${id}: ${response.status} ${text}`);
    }
    if ('result' in body) {
      return { ok: true, result: body.result, activatedExtensions };
    }
    return this.error(response, body, activatedExtensions);
  }

  async stream(
    method: StreamingRpc,
    params: Record<string, unknown>,
    options?: CallOptions,
  ): Promise<StreamOutcome> {
    const { response, id, controller } = await this.post(
      method,
      params,
      options,
      'text/event-stream',
    );
    const activatedExtensions = splitList(response.headers.get('a2a-extensions'));
    if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      const { json } = await readJson(response);
      return this.error(response, (json ?? {}) as RpcBody, activatedExtensions);
    }
    const read = await readSse(
      response,
      controller,
      (data) => {
        const frame = JSON.parse(data) as RpcBody;
        if (frame.id !== id || !('result' in frame)) {
          return { error: data };
        }
        return { event: frame.result as Record<string, unknown> };
      },
      options?.onEvent,
    );
    return { ok: true, ...read, activatedExtensions };
  }

  private async post(
    method: string,
    params: Record<string, unknown>,
    callOptions: CallOptions | undefined,
    accept: string,
  ): Promise<{ response: Response; id: number; controller: AbortController }> {
    const options = defaults(callOptions);
    const url =
      options.routing === 'tenant'
        ? `${this.address.baseUrl}/a2a/jsonrpc`
        : `${this.address.baseUrl}/agents/${options.tenantId}/${options.agent}/jsonrpc`;
    const query = versionQuery(options);
    const tenant = tenantFor(params, options);
    const id = this.nextId++;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), CALL_TIMEOUT_MS);
    try {
      const response = await fetch(query.size > 0 ? `${url}?${query.toString()}` : url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: accept, ...httpHeaders(options) },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id,
          method,
          params: tenant === undefined ? params : { ...params, tenant },
        }),
        signal: controller.signal,
      });
      return { response, id, controller };
    } finally {
      clearTimeout(timer);
    }
  }

  private error(response: Response, body: RpcBody, activatedExtensions: string[]): ErrorOutcome {
    const error = body.error ?? {};
    return {
      ok: false,
      wire: {
        binding: 'JSONRPC',
        httpStatus: response.status,
        jsonRpcCode: typeof error.code === 'number' ? error.code : undefined,
      },
      message: typeof error.message === 'string' ? error.message : '',
      ...fromJsonDetails(error.data),
      activatedExtensions,
    };
  }
}

// ---------------------------------------------------------------------------------------------------------
// HTTP+JSON (spec digest §8)
// ---------------------------------------------------------------------------------------------------------

interface RestRequest {
  method: 'GET' | 'POST' | 'DELETE';
  /** Path after the base URL (and tenant prefix), already encoded. */
  path: string;
  query?: URLSearchParams;
  body?: Record<string, unknown>;
}

const seg = (value: unknown): string => encodeURIComponent(String(value));

function without(params: Record<string, unknown>, ...keys: string[]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(params).filter(([k]) => !keys.includes(k)));
}

/** Query parameters by camelCase JSON name, scalars only (spec digest §8.2 "Query-parameter rules"). */
function queryOf(params: Record<string, unknown>): URLSearchParams {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    query.set(key, String(value));
  }
  return query;
}

/** The HTTP rule of each RPC (spec digest §2, §8.2). */
function restRequest(
  method: UnaryRpc | StreamingRpc,
  params: Record<string, unknown>,
): RestRequest {
  const p = without(params, 'tenant');
  switch (method) {
    case 'SendMessage':
      return { method: 'POST', path: '/message:send', body: p };
    case 'SendStreamingMessage':
      return { method: 'POST', path: '/message:stream', body: p };
    case 'GetTask':
      return { method: 'GET', path: `/tasks/${seg(p['id'])}`, query: queryOf(without(p, 'id')) };
    case 'ListTasks':
      return { method: 'GET', path: '/tasks', query: queryOf(p) };
    case 'CancelTask':
      return { method: 'POST', path: `/tasks/${seg(p['id'])}:cancel`, body: without(p, 'id') };
    case 'SubscribeToTask':
      return { method: 'GET', path: `/tasks/${seg(p['id'])}:subscribe` };
    case 'CreateTaskPushNotificationConfig':
      return {
        method: 'POST',
        path: `/tasks/${seg(p['taskId'])}/pushNotificationConfigs`,
        body: without(p, 'taskId'),
      };
    case 'GetTaskPushNotificationConfig':
      return {
        method: 'GET',
        path: `/tasks/${seg(p['taskId'])}/pushNotificationConfigs/${seg(p['id'])}`,
      };
    case 'ListTaskPushNotificationConfigs':
      return {
        method: 'GET',
        path: `/tasks/${seg(p['taskId'])}/pushNotificationConfigs`,
        query: queryOf(without(p, 'taskId')),
      };
    case 'DeleteTaskPushNotificationConfig':
      return {
        method: 'DELETE',
        path: `/tasks/${seg(p['taskId'])}/pushNotificationConfigs/${seg(p['id'])}`,
      };
    case 'GetExtendedAgentCard':
      return { method: 'GET', path: '/extendedAgentCard' };
  }
}

interface RestErrorBody {
  error?: { code?: unknown; status?: unknown; message?: unknown; details?: unknown };
}

export class RestBindingClient implements BindingClient {
  readonly name = 'HTTP+JSON';

  constructor(private readonly address: PlatformAddress) {}

  async call(
    method: UnaryRpc,
    params: Record<string, unknown>,
    options?: CallOptions,
  ): Promise<CallOutcome> {
    const { response } = await this.send(method, params, options, 'application/a2a+json');
    const { json } = await readJson(response);
    const activatedExtensions = splitList(response.headers.get('a2a-extensions'));
    if (response.ok) {
      return { ok: true, result: json ?? {}, activatedExtensions };
    }
    return this.error(response, json, activatedExtensions);
  }

  async stream(
    method: StreamingRpc,
    params: Record<string, unknown>,
    options?: CallOptions,
  ): Promise<StreamOutcome> {
    const { response, controller } = await this.send(method, params, options, 'text/event-stream');
    const activatedExtensions = splitList(response.headers.get('a2a-extensions'));
    if (
      !response.ok ||
      !(response.headers.get('content-type') ?? '').startsWith('text/event-stream')
    ) {
      const { json } = await readJson(response);
      return this.error(response, json, activatedExtensions);
    }
    const read = await readSse(
      response,
      controller,
      (data) => {
        const event = JSON.parse(data) as Record<string, unknown>;
        return 'error' in event ? { error: data } : { event };
      },
      options?.onEvent,
    );
    return { ok: true, ...read, activatedExtensions };
  }

  private async send(
    method: UnaryRpc | StreamingRpc,
    params: Record<string, unknown>,
    callOptions: CallOptions | undefined,
    accept: string,
  ): Promise<{ response: Response; controller: AbortController }> {
    const options = defaults(callOptions);
    const base =
      options.routing === 'tenant'
        ? `${this.address.baseUrl}/a2a/rest`
        : `${this.address.baseUrl}/agents/${options.tenantId}/${options.agent}/rest`;
    const tenant = tenantFor(params, options);
    const prefix = tenant === undefined ? '' : `/${seg(tenant)}`;
    const rest = restRequest(method, params);
    if (method === 'SubscribeToTask' && callOptions?.subscribeWithPost) {
      rest.method = 'POST';
    }
    const search = new URLSearchParams([...(rest.query ?? []), ...versionQuery(options)]);
    const query = search.size > 0 ? `?${search.toString()}` : '';
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), CALL_TIMEOUT_MS);
    try {
      const response = await fetch(`${base}${prefix}${rest.path}${query}`, {
        method: rest.method,
        headers: {
          Accept: accept,
          ...(rest.body ? { 'Content-Type': 'application/a2a+json' } : {}),
          ...httpHeaders(options),
        },
        ...(rest.body ? { body: JSON.stringify(rest.body) } : {}),
        signal: controller.signal,
      });
      return { response, controller };
    } finally {
      clearTimeout(timer);
    }
  }

  private error(response: Response, json: unknown, activatedExtensions: string[]): ErrorOutcome {
    const error = (json as RestErrorBody | undefined)?.error ?? {};
    return {
      ok: false,
      wire: {
        binding: 'HTTP+JSON',
        httpStatus: response.status,
        status: typeof error.status === 'string' ? error.status : undefined,
        bodyCode: typeof error.code === 'number' ? error.code : undefined,
      },
      message: typeof error.message === 'string' ? error.message : '',
      ...fromJsonDetails(error.details),
      activatedExtensions,
    };
  }
}

// ---------------------------------------------------------------------------------------------------------
// gRPC (spec digest §8b)
// ---------------------------------------------------------------------------------------------------------

interface ProtoType<T> {
  fromJSON(object: unknown): T;
  toJSON(message: T): unknown;
  encode(message: T, writer?: BinaryWriter): BinaryWriter;
  decode(input: Uint8Array): T;
}

interface RpcTypes {
  request: ProtoType<unknown>;
  response: ProtoType<unknown>;
}

const types = <Req, Res>(request: ProtoType<Req>, response: ProtoType<Res>): RpcTypes => ({
  request: request as ProtoType<unknown>,
  response: response as ProtoType<unknown>,
});

const EMPTY: ProtoType<Record<string, never>> = {
  fromJSON: () => ({}),
  toJSON: () => ({}),
  encode: (_message, writer = new BinaryWriter()) => writer,
  decode: () => ({}),
};

/** Request and response message of each RPC (spec digest §2). */
const GRPC_TYPES: Readonly<Record<UnaryRpc | StreamingRpc, RpcTypes>> = {
  SendMessage: types(a2aPb.SendMessageRequest, a2aPb.SendMessageResponse),
  SendStreamingMessage: types(a2aPb.SendMessageRequest, a2aPb.StreamResponse),
  GetTask: types(a2aPb.GetTaskRequest, a2aPb.Task),
  ListTasks: types(a2aPb.ListTasksRequest, a2aPb.ListTasksResponse),
  CancelTask: types(a2aPb.CancelTaskRequest, a2aPb.Task),
  SubscribeToTask: types(a2aPb.SubscribeToTaskRequest, a2aPb.StreamResponse),
  CreateTaskPushNotificationConfig: types(
    a2aPb.TaskPushNotificationConfig,
    a2aPb.TaskPushNotificationConfig,
  ),
  GetTaskPushNotificationConfig: types(
    a2aPb.GetTaskPushNotificationConfigRequest,
    a2aPb.TaskPushNotificationConfig,
  ),
  ListTaskPushNotificationConfigs: types(
    a2aPb.ListTaskPushNotificationConfigsRequest,
    a2aPb.ListTaskPushNotificationConfigsResponse,
  ),
  DeleteTaskPushNotificationConfig: types(a2aPb.DeleteTaskPushNotificationConfigRequest, EMPTY),
  GetExtendedAgentCard: types(a2aPb.GetExtendedAgentCardRequest, a2aPb.AgentCard),
};

/**
 * ProtoJSON of a decoded response. Binary proto3 cannot tell an implicit field's default from its absence,
 * so the REQUIRED fields A2A makes JSON always emit (spec digest §3: ListTasksResponse's four) are restored;
 * that is the only wire-only difference this removes.
 */
function responseJson(method: UnaryRpc | StreamingRpc, message: unknown): unknown {
  const json = GRPC_TYPES[method].response.toJSON(message);
  if (method === 'ListTasks') {
    return { tasks: [], nextPageToken: '', pageSize: 0, totalSize: 0, ...(json as object) };
  }
  return json;
}

/** Decoded `google.rpc.Status` details (`grpc-status-details-bin`, spec digest §9.3). */
interface StatusDetails {
  infos: { reason: string; domain: string; metadata: Record<string, string> }[];
  badRequestFields: string[];
}

/** The length-delimited fields of one message (strings, bytes, nested messages), in order. */
function fieldsOf(bytes: Uint8Array): { no: number; bytes: Uint8Array }[] {
  const reader = new BinaryReader(bytes);
  const fields: { no: number; bytes: Uint8Array }[] = [];
  while (reader.pos < reader.len) {
    const [no, wireType] = reader.tag();
    if (wireType === WireType.LengthDelimited) {
      fields.push({ no, bytes: reader.bytes() });
    } else {
      reader.skip(wireType);
    }
  }
  return fields;
}

const text = (bytes: Uint8Array | undefined): string => new TextDecoder().decode(bytes);

/**
 * google.rpc.Status{details=3: Any{type_url=1, value=2}} with ErrorInfo and BadRequest decoded. Deliberately
 * independent of `decodeGrpcStatus` in `@lib/a2a-protocol`: the suite checks the wire bytes against the
 * proto's field numbers, not against the platform's own codec.
 */
export function decodeStatusDetails(bin: Uint8Array): StatusDetails {
  const details: StatusDetails = { infos: [], badRequestFields: [] };
  for (const any of fieldsOf(bin).filter((f) => f.no === 3)) {
    const anyFields = fieldsOf(any.bytes);
    const typeUrl = text(anyFields.find((f) => f.no === 1)?.bytes);
    const value = anyFields.find((f) => f.no === 2)?.bytes ?? new Uint8Array();
    if (typeUrl === ERROR_INFO) {
      // ErrorInfo{reason=1, domain=2, metadata=3 map<string,string> as entries {key=1, value=2}}
      const info = fieldsOf(value);
      const metadata: Record<string, string> = {};
      for (const entry of info.filter((f) => f.no === 3)) {
        const kv = fieldsOf(entry.bytes);
        metadata[text(kv.find((f) => f.no === 1)?.bytes)] = text(kv.find((f) => f.no === 2)?.bytes);
      }
      details.infos.push({
        reason: text(info.find((f) => f.no === 1)?.bytes),
        domain: text(info.find((f) => f.no === 2)?.bytes),
        metadata,
      });
    } else if (typeUrl === BAD_REQUEST) {
      // BadRequest{field_violations=1: FieldViolation{field=1, description=2}}
      for (const violation of fieldsOf(value).filter((f) => f.no === 1)) {
        const field = fieldsOf(violation.bytes).find((f) => f.no === 1);
        details.badRequestFields.push(text(field?.bytes));
      }
    }
  }
  return details;
}

const GRPC_CODE_NAMES: Readonly<Record<number, string>> = Object.fromEntries(
  Object.entries(GrpcStatus)
    .filter((entry): entry is [string, number] => typeof entry[1] === 'number')
    .map(([name, code]) => [code, name]),
);

export class GrpcBindingClient implements BindingClient {
  readonly name = 'GRPC';
  private readonly client: GrpcClient;

  constructor(address: PlatformAddress) {
    this.client = new GrpcClient(address.grpcTarget, credentials.createInsecure());
  }

  close(): void {
    this.client.close();
  }

  call(
    method: UnaryRpc,
    params: Record<string, unknown>,
    callOptions?: CallOptions,
  ): Promise<CallOutcome> {
    const { request, metadata } = this.prepare(method, params, callOptions);
    let headers: Metadata | undefined;
    return new Promise((resolve) => {
      const call = this.client.makeUnaryRequest<Uint8Array, unknown>(
        `/lf.a2a.v1.A2AService/${method}`,
        (bytes) => Buffer.from(bytes),
        (buffer) => GRPC_TYPES[method].response.decode(buffer),
        request,
        metadata,
        { deadline: Date.now() + CALL_TIMEOUT_MS },
        (error, response) => {
          if (error) {
            resolve(this.error(error, headers));
          } else {
            resolve({
              ok: true,
              result: responseJson(method, response),
              activatedExtensions: extensionsOf(headers),
            });
          }
        },
      );
      call.on('metadata', (received: Metadata) => {
        headers = received;
      });
    });
  }

  stream(
    method: StreamingRpc,
    params: Record<string, unknown>,
    callOptions?: CallOptions,
  ): Promise<StreamOutcome> {
    const { request, metadata } = this.prepare(method, params, callOptions);
    let headers: Metadata | undefined;
    return new Promise((resolve) => {
      const events: Record<string, unknown>[] = [];
      const call = this.client.makeServerStreamRequest<Uint8Array, unknown>(
        `/lf.a2a.v1.A2AService/${method}`,
        (bytes) => Buffer.from(bytes),
        (buffer) => GRPC_TYPES[method].response.decode(buffer),
        request,
        metadata,
        { deadline: Date.now() + CALL_TIMEOUT_MS },
      );
      call.on('metadata', (received: Metadata) => {
        headers = received;
      });
      call.on('data', (message: unknown) => {
        const event = responseJson(method, message) as Record<string, unknown>;
        events.push(event);
        callOptions?.onEvent?.(event);
      });
      call.on('error', (error: ServiceError) => {
        if (events.length === 0) {
          resolve(this.error(error, headers));
        } else {
          const streamError = `${GRPC_CODE_NAMES[error.code] ?? error.code}: ${error.details}`;
          resolve({ ok: true, events, streamError, activatedExtensions: extensionsOf(headers) });
        }
      });
      call.on('end', () => {
        resolve({
          ok: true,
          events,
          streamError: null,
          activatedExtensions: extensionsOf(headers),
        });
      });
    });
  }

  private prepare(
    method: UnaryRpc | StreamingRpc,
    params: Record<string, unknown>,
    callOptions: CallOptions | undefined,
  ): { request: Uint8Array; metadata: Metadata } {
    const options = defaults(callOptions);
    // gRPC has no per-agent URL: the client copies AgentInterface.tenant into every request.
    const tenant = tenantFor(params, { ...options, routing: 'tenant' });
    const omitted = new Set(callOptions?.grpcRaw?.omit ?? []);
    const json = Object.fromEntries(
      Object.entries({ ...params, tenant }).filter(([k]) => !omitted.has(k)),
    );
    const types = GRPC_TYPES[method].request;
    const encoded = types.encode(types.fromJSON(json)).finish();
    const extra = callOptions?.grpcRaw?.append ?? new Uint8Array();
    const request = new Uint8Array(encoded.length + extra.length);
    request.set(encoded);
    request.set(extra, encoded.length);
    const metadata = new Metadata();
    if (options.apiKey !== null) {
      metadata.set('x-api-key', options.apiKey);
    }
    if (options.a2aVersion !== null) {
      metadata.set('a2a-version', options.a2aVersion);
    }
    if (options.extensions.length > 0) {
      metadata.set('a2a-extensions', options.extensions.join(','));
    }
    return { request, metadata };
  }

  private error(error: ServiceError, headers: Metadata | undefined): ErrorOutcome {
    const [bin] = error.metadata?.get('grpc-status-details-bin') ?? [];
    const details =
      bin instanceof Uint8Array ? decodeStatusDetails(bin) : { infos: [], badRequestFields: [] };
    const info = details.infos[0];
    return {
      ok: false,
      wire: { binding: 'GRPC', grpcCode: GRPC_CODE_NAMES[error.code] ?? String(error.code) },
      message: error.details,
      reason: info?.reason,
      errorInfoDomain: info?.domain,
      errorInfoMetadata: info?.metadata ?? {},
      errorInfoCount: details.infos.length,
      badRequestFields: details.badRequestFields,
      activatedExtensions: extensionsOf(headers ?? error.metadata),
    };
  }
}

function extensionsOf(metadata: Metadata | undefined): string[] {
  return (metadata?.get('a2a-extensions') ?? []).flatMap((v) => splitList(String(v)));
}

/** The raw protobuf of one field: a varint (enum, int32) or a nested message. */
export const rawField = {
  varint(no: number, value: number): Uint8Array {
    return new BinaryWriter()
      .uint32((no << 3) | WireType.Varint)
      .int32(value)
      .finish();
  },
  /** A google.protobuf.Timestamp field with the given seconds and nanos (even out of range). */
  timestamp(no: number, seconds: number, nanos: number): Uint8Array {
    const inner = new BinaryWriter().uint32(8).int64(seconds).uint32(16).int32(nanos).finish();
    return new BinaryWriter()
      .uint32((no << 3) | WireType.LengthDelimited)
      .bytes(inner)
      .finish();
  },
};

export function bindingClients(address: PlatformAddress): {
  clients: Record<BindingName, BindingClient>;
  close: () => void;
} {
  const grpc = new GrpcBindingClient(address);
  return {
    clients: {
      JSONRPC: new JsonRpcBindingClient(address),
      'HTTP+JSON': new RestBindingClient(address),
      GRPC: grpc,
    },
    close: () => grpc.close(),
  };
}

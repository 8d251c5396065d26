/**
 * One client interface over the three A2A bindings (spec digest §7 JSON-RPC, §8 HTTP+JSON, §8b gRPC), built
 * on the wire helpers of each binding (json-rpc.ts, rest.ts, grpc.ts). Every call takes the ProtoJSON of the
 * request message and returns a normalised outcome: the ProtoJSON of the response message, or the error as
 * the wire reported it (binding status, ErrorInfo, BadRequest). The wire rules every response must keep
 * (envelope, media type, well-formed details) are asserted on the way; nothing here knows the platform's
 * mapping tables, the suites compare what comes back with the spec.
 */
import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import type { Metadata, ServiceError } from '@grpc/grpc-js';
import { a2aPb } from '@lib/a2a-protocol';
import {
  a2aGrpcClient,
  a2aMethodPath,
  grpcCodeName,
  rawServerStream,
  rawUnary,
  statusOf,
  type GrpcCallOptions,
} from './grpc';
import { readReply, type HttpReply } from './http';
import {
  asRpcReply,
  expectRpcEnvelope,
  jsonRpcUrl,
  rawRpc,
  request,
  rpcErrorOf,
  type RpcReply,
} from './json-rpc';
import {
  expectA2aJson,
  openRestSse,
  rest,
  restBaseUrl,
  restErrorOf,
  restRoute,
  type RestReply,
} from './rest';
import { openSse, rpcOf, type SseConnection, type SseFrame } from './sse';
import {
  expectWellFormedDetails,
  splitList,
  type ErrorDetails,
  type Routing,
  type ServiceParams,
  type StreamingRpc,
  type UnaryRpc,
} from './wire';

export type { Routing, StreamingRpc, UnaryRpc };

export type BindingName = 'JSONRPC' | 'HTTP+JSON' | 'GRPC';

/**
 * Fields a gRPC request cannot carry as ProtoJSON (an enum number or a Timestamp no JSON text parses to):
 * `omit` lists the ProtoJSON keys left out of the encoding, `append` is raw protobuf appended after it.
 */
export interface GrpcRawFields {
  omit: readonly string[];
  append: Uint8Array;
}

export interface CallOptions extends ServiceParams {
  /** The tenant of the route. Default `demo`. */
  tenantId?: string;
  /** The hosted agent. Default `echo`. */
  agent?: string;
  /**
   * `agent-url` (the default) or `tenant` (spec digest §10.9). gRPC has only the second: its per-agent
   * variant is the client copying AgentInterface.tenant into every request.
   */
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

/** Bound on every call and every stream: a binding that hangs fails its scenario instead of the file. */
const CALL_TIMEOUT_MS = 30_000;

/** The error outcome of a binding's error: its wire status, message and decoded details. */
function errorOutcome(
  wire: WireError,
  message: string,
  details: ErrorDetails,
  activatedExtensions: string[],
): ErrorOutcome {
  expectWellFormedDetails(details, `${JSON.stringify(wire)} ${message}`);
  const [info] = details.infos;
  return {
    ok: false,
    wire,
    message,
    reason: info?.reason,
    errorInfoDomain: info?.domain,
    errorInfoMetadata: info?.metadata ?? {},
    errorInfoCount: details.infos.length,
    badRequestFields: details.violations.map((v) => v.field),
    activatedExtensions,
  };
}

interface Target {
  tenantId: string;
  agent: string;
  routing: Routing;
  /** The `tenant` the request carries, if any. */
  tenant: string | undefined;
}

/** The agent a call is for, and the `tenant` it carries: the params', else the route's on tenant routing. */
function targetOf(params: Record<string, unknown>, options: CallOptions = {}): Target {
  const tenantId = options.tenantId ?? 'demo';
  const agent = options.agent ?? 'echo';
  const routing = options.routing ?? 'agent-url';
  const given = params['tenant'];
  const tenant =
    typeof given === 'string' ? given : routing === 'tenant' ? `${tenantId}/${agent}` : undefined;
  return { tenantId, agent, routing, tenant };
}

/** The service parameters of an HTTP call, and the query that carries A2A-Version when asked to. */
function httpService(options: CallOptions = {}): {
  service: ServiceParams;
  query: [string, string][];
} {
  if (!options.versionInQuery) {
    return { service: options, query: [] };
  }
  const version = options.version === undefined ? '1.0' : options.version;
  return {
    service: { ...options, version: null },
    query: version === null ? [] : [['A2A-Version', version]],
  };
}

const withQuery = (url: string, query: [string, string][]): string =>
  query.length > 0 ? `${url}?${new URLSearchParams(query).toString()}` : url;

/** A 2xx status: the HTTP+JSON binding answers success with a body of the response message. */
const isSuccess = (status: number): boolean => status >= 200 && status < 300;

const extensionsHeader = (headers: Headers): string[] => splitList(headers.get('a2a-extensions'));

/**
 * The outcome of a stream over HTTP: its events, read to the end, when the response is an event stream;
 * else the error of the plain response (a stream refused before its first event, spec digest §10.6).
 * `toEvent` reads a frame's StreamResponse, or undefined for a frame that reports an error.
 */
async function httpStream(
  connection: SseConnection,
  plain: (reply: HttpReply) => CallOutcome,
  toEvent: (frame: SseFrame) => Record<string, unknown> | undefined,
  onEvent: (event: Record<string, unknown>) => void = () => undefined,
): Promise<StreamOutcome> {
  if (!isSuccess(connection.status) || !connection.isEventStream) {
    const outcome = plain(await readReply(connection.response));
    if (outcome.ok) {
      throw new Error(`a stream was answered without one: ${JSON.stringify(outcome)}`);
    }
    return outcome;
  }
  const events: Record<string, unknown>[] = [];
  let streamError: string | null = null;
  await connection.collect(CALL_TIMEOUT_MS, (frame) => {
    const event = frame.event === 'error' ? undefined : toEvent(frame);
    if (event === undefined) {
      streamError = frame.data;
    } else {
      events.push(event);
      onEvent(event);
    }
  });
  return {
    ok: true,
    events,
    streamError,
    activatedExtensions: extensionsHeader(connection.headers),
  };
}

// ---------------------------------------------------------------------------------------------------------
// JSON-RPC (spec digest §7)
// ---------------------------------------------------------------------------------------------------------

/** The JSON-RPC binding: the agent's endpoint, or `/a2a/jsonrpc` with `tenant` in the params. */
export function jsonRpcBindingClient(address: PlatformAddress): BindingClient {
  let nextId = 1;

  const prepare = (method: string, params: Record<string, unknown>, options?: CallOptions) => {
    const target = targetOf(params, options);
    const { service, query } = httpService(options);
    const id = nextId++;
    const url = jsonRpcUrl(address.baseUrl, target.tenantId, target.agent, target.routing);
    const tenant = target.tenant === undefined ? {} : { tenant: target.tenant };
    return {
      url: withQuery(url, query),
      body: request(method, { ...params, ...tenant }, id),
      id,
      service,
    };
  };

  /** The outcome of a response, checked as a JSON-RPC envelope for the request's id. */
  const outcome = (reply: RpcReply, id: number): CallOutcome => {
    const member = 'result' in reply.json ? 'result' : 'error';
    expectRpcEnvelope(reply, member, id);
    const activatedExtensions = extensionsHeader(reply.headers);
    if (member === 'result') {
      return { ok: true, result: reply.json.result, activatedExtensions };
    }
    const { code, message, details } = rpcErrorOf(reply);
    return errorOutcome(
      { binding: 'JSONRPC', httpStatus: reply.status, jsonRpcCode: code },
      message,
      details,
      activatedExtensions,
    );
  };

  return {
    name: 'JSONRPC',
    async call(method, params, options) {
      const { url, body, id, service } = prepare(method, params, options);
      return outcome(await rawRpc(url, body, { ...service, timeoutMs: CALL_TIMEOUT_MS }), id);
    },
    async stream(method, params, options) {
      const { url, body, id, service } = prepare(method, params, options);
      return httpStream(
        await openSse(url, body, service, CALL_TIMEOUT_MS),
        (reply) => outcome(asRpcReply(reply), id),
        (frame) => {
          // Every frame is a success response for the request's id (spec digest §7.3).
          const rpc = rpcOf(frame);
          return rpc.id === id ? (rpc.result as Record<string, unknown> | undefined) : undefined;
        },
        options?.onEvent,
      );
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// HTTP+JSON (spec digest §8)
// ---------------------------------------------------------------------------------------------------------

/** The HTTP+JSON binding: the agent's base URL, or `/a2a/rest` with the `/{tenant}` segment. */
export function restBindingClient(address: PlatformAddress): BindingClient {
  const prepare = (
    method: UnaryRpc | StreamingRpc,
    params: Record<string, unknown>,
    options?: CallOptions,
  ) => {
    const target = targetOf(params, options);
    const { service, query } = httpService(options);
    const route = restRoute(method, params);
    const base = restBaseUrl(
      address.baseUrl,
      target.tenantId,
      target.agent,
      target.routing,
      target.tenant,
    );
    return {
      url: withQuery(`${base}${route.path}`, [...route.query, ...query]),
      route,
      options: { ...service, body: route.body, timeoutMs: CALL_TIMEOUT_MS },
    };
  };

  /** The outcome of a response: the body of a 2xx, else its google.rpc.Status; always a2a+json. */
  const outcome = (reply: RestReply): CallOutcome => {
    expectA2aJson(reply);
    const activatedExtensions = extensionsHeader(reply.headers);
    if (isSuccess(reply.status)) {
      return { ok: true, result: reply.json ?? {}, activatedExtensions };
    }
    const { code, status, message, details } = restErrorOf(reply);
    return errorOutcome(
      { binding: 'HTTP+JSON', httpStatus: reply.status, status, bodyCode: code },
      message,
      details,
      activatedExtensions,
    );
  };

  return {
    name: 'HTTP+JSON',
    async call(method, params, options) {
      const { url, route, options: restOptions } = prepare(method, params, options);
      return outcome(await rest(route.method, url, restOptions));
    },
    async stream(method, params, options) {
      const { url, route, options: restOptions } = prepare(method, params, options);
      const verb = route.method === 'POST' || options?.subscribeWithPost ? 'POST' : 'GET';
      return httpStream(
        await openRestSse(verb, url, restOptions),
        outcome,
        (frame) => {
          const event = JSON.parse(frame.data) as Record<string, unknown>;
          return 'error' in event ? undefined : event;
        },
        options?.onEvent,
      );
    },
  };
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
 * ProtoJSON of a response message from its bytes. Binary proto3 cannot tell an implicit field's default from
 * its absence, so the REQUIRED fields A2A makes JSON always emit (spec digest §3: ListTasksResponse's four)
 * are restored; that is the only wire-only difference this removes.
 */
function responseJson(method: UnaryRpc | StreamingRpc, bytes: Uint8Array): unknown {
  const types = GRPC_TYPES[method].response;
  const json = types.toJSON(types.decode(bytes));
  if (method === 'ListTasks') {
    return { tasks: [], nextPageToken: '', pageSize: 0, totalSize: 0, ...(json as object) };
  }
  return json;
}

const extensionsOf = (metadata: Metadata | undefined): string[] =>
  (metadata?.get('a2a-extensions') ?? []).flatMap((v) => splitList(String(v)));

/** The gRPC binding: one server for every agent, the route's tenant in every request's `tenant`. */
export function grpcBindingClient(address: PlatformAddress): BindingClient & { close(): void } {
  const client = a2aGrpcClient(address.grpcTarget);
  const service = (options: CallOptions = {}): GrpcCallOptions => ({
    ...options,
    deadlineMs: CALL_TIMEOUT_MS,
  });

  /** The request bytes: the ProtoJSON with the route's tenant, plus any raw fields. */
  const encode = (
    method: UnaryRpc | StreamingRpc,
    params: Record<string, unknown>,
    options?: CallOptions,
  ): Uint8Array => {
    const { tenant } = targetOf(params, { ...options, routing: 'tenant' });
    const omitted = new Set(options?.grpcRaw?.omit ?? []);
    const json = Object.fromEntries(
      Object.entries({ ...params, tenant }).filter(([k]) => !omitted.has(k)),
    );
    const types = GRPC_TYPES[method].request;
    const encoded = types.encode(types.fromJSON(json)).finish();
    const extra = options?.grpcRaw?.append ?? new Uint8Array();
    const bytes = new Uint8Array(encoded.length + extra.length);
    bytes.set(encoded);
    bytes.set(extra, encoded.length);
    return bytes;
  };

  const error = (e: ServiceError, headers: Metadata | undefined): ErrorOutcome =>
    errorOutcome(
      { binding: 'GRPC', grpcCode: grpcCodeName(e.code) },
      e.details,
      statusOf(e)?.details ?? { types: [], infos: [], violations: [] },
      extensionsOf(headers ?? e.metadata),
    );

  return {
    name: 'GRPC',
    close: () => client.close(),
    async call(method, params, options) {
      const path = a2aMethodPath(method);
      const reply = await rawUnary(client, path, encode(method, params, options), service(options));
      if (!reply.ok) {
        return error(reply.error, reply.headers);
      }
      return {
        ok: true,
        result: responseJson(method, reply.value),
        activatedExtensions: extensionsOf(reply.headers),
      };
    },
    async stream(method, params, options) {
      const events: Record<string, unknown>[] = [];
      const ended = await rawServerStream(
        client,
        a2aMethodPath(method),
        encode(method, params, options),
        service(options),
        (bytes) => {
          const event = responseJson(method, bytes) as Record<string, unknown>;
          events.push(event);
          options?.onEvent?.(event);
        },
      );
      if (ended.error !== null && events.length === 0) {
        return error(ended.error, ended.headers);
      }
      return {
        ok: true,
        events,
        streamError:
          ended.error === null ? null : `${grpcCodeName(ended.error.code)}: ${ended.error.details}`,
        activatedExtensions: extensionsOf(ended.headers),
      };
    },
  };
}

/** The raw protobuf of one field: a varint (enum, int32), a Timestamp, or a Message with extra fields. */
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
    return rawField.nested(no, inner);
  },
  /** A lf.a2a.v1.Message field: the message given as ProtoJSON, then `extra` raw fields inside it. */
  message(no: number, json: Record<string, unknown>, extra: Uint8Array): Uint8Array {
    const encoded = a2aPb.Message.encode(a2aPb.Message.fromJSON(json)).finish();
    return rawField.nested(no, new Uint8Array([...encoded, ...extra]));
  },
  /** A length-delimited field holding `bytes`. */
  nested(no: number, bytes: Uint8Array): Uint8Array {
    return new BinaryWriter()
      .uint32((no << 3) | WireType.LengthDelimited)
      .bytes(bytes)
      .finish();
  },
};

export function bindingClients(address: PlatformAddress): {
  clients: Record<BindingName, BindingClient>;
  close: () => void;
} {
  const grpc = grpcBindingClient(address);
  return {
    clients: {
      JSONRPC: jsonRpcBindingClient(address),
      'HTTP+JSON': restBindingClient(address),
      GRPC: grpc,
    },
    close: () => grpc.close(),
  };
}

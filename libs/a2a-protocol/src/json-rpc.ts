/**
 * JSON-RPC 2.0 envelopes for the A2A JSON-RPC binding (spec digest §7). Parsing stops at the envelope:
 * `params` is returned untouched for the method's decoder in `proto-json/a2a-descriptors.ts`.
 */
import { toJsonRpcError, type JsonRpcErrorObject } from './binding-errors';
import { A2aError, type ErrorReason, type FieldViolation } from './errors';
import { jsonNestingExceeds, MAX_REQUEST_JSON_NESTING } from './proto-json';

export type JsonRpcId = string | number | null;

/** The A2A 1.0 methods (digest §7.2): the gRPC RPC names. */
export const A2A_JSON_RPC_METHODS = [
  'SendMessage',
  'SendStreamingMessage',
  'GetTask',
  'ListTasks',
  'CancelTask',
  'SubscribeToTask',
  'CreateTaskPushNotificationConfig',
  'GetTaskPushNotificationConfig',
  'ListTaskPushNotificationConfigs',
  'DeleteTaskPushNotificationConfig',
  'GetExtendedAgentCard',
] as const;
export type A2aJsonRpcMethod = (typeof A2A_JSON_RPC_METHODS)[number];

export function isA2aMethod(method: string): method is A2aJsonRpcMethod {
  return (A2A_JSON_RPC_METHODS as readonly string[]).includes(method);
}

export interface JsonRpcRequest {
  /** `null` when the request carried no id or an explicit null. */
  id: JsonRpcId;
  method: string;
  /** `undefined` when absent or `null`; otherwise a JSON object. */
  params: unknown;
}

/**
 * An envelope failure that knows which id the error response must echo. JSON-RPC 2.0 answers with the
 * request's id when it could be read and with `null` otherwise; {@link jsonRpcRequestIdOf} reads it back.
 * The id rides on the error object rather than in `metadata`, which is client-visible ErrorInfo data and
 * would lose the string/number distinction.
 */
export class JsonRpcEnvelopeError extends A2aError {
  constructor(
    readonly requestId: JsonRpcId,
    reason: ErrorReason,
    message: string,
    violation?: FieldViolation,
  ) {
    super(reason, message, {}, violation === undefined ? [] : [violation]);
  }
}

/** The id to echo for an error thrown while handling a request envelope (`null` if unknown). */
export function jsonRpcRequestIdOf(error: unknown): JsonRpcId {
  return error instanceof JsonRpcEnvelopeError ? error.requestId : null;
}

/**
 * Parses one JSON-RPC request. Throws {@link JsonRpcEnvelopeError}: INVALID_PARAMS (id `null`) for text nested
 * deeper than any request can be ({@link MAX_REQUEST_JSON_NESTING}), before it costs a parse; PARSE_ERROR
 * for invalid JSON;
 * INVALID_REQUEST for a batch (A2A defines none), a non-object body, a bad `id`, `jsonrpc` other than "2.0",
 * a missing or non-string `method`; INVALID_PARAMS for array or scalar `params` (A2A params are
 * always the ProtoJSON object of the request message, §7.1). A missing `id` is answered with `null`.
 */
export function parseJsonRpcRequest(body: string): JsonRpcRequest {
  if (jsonNestingExceeds(body, MAX_REQUEST_JSON_NESTING)) {
    throw new JsonRpcEnvelopeError(null, 'INVALID_PARAMS', 'invalid parameters', {
      field: 'params',
      description: `nests deeper than ${MAX_REQUEST_JSON_NESTING} levels`,
    });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new JsonRpcEnvelopeError(null, 'PARSE_ERROR', 'invalid JSON payload');
  }
  if (Array.isArray(parsed)) {
    throw invalidRequest(null, '', 'batch requests are not supported by A2A');
  }
  if (typeof parsed !== 'object' || parsed === null) {
    throw invalidRequest(null, '', 'the request must be a JSON object');
  }
  const envelope = parsed as { [key: string]: unknown };
  const rawId = envelope['id'];
  if (
    rawId !== undefined &&
    rawId !== null &&
    typeof rawId !== 'string' &&
    !isFiniteNumber(rawId)
  ) {
    throw invalidRequest(null, 'id', 'must be a string, a number or null');
  }
  const id: JsonRpcId = rawId ?? null;
  if (envelope['jsonrpc'] !== '2.0') {
    throw invalidRequest(id, 'jsonrpc', 'must be "2.0"');
  }
  const method = envelope['method'];
  if (typeof method !== 'string') {
    throw invalidRequest(id, 'method', 'must be a string');
  }
  const params = envelope['params'] ?? undefined;
  // A2A params are always the request message's ProtoJSON object (§7.1, §13: otherwise -32602).
  if (params !== undefined && (Array.isArray(params) || typeof params !== 'object')) {
    throw new JsonRpcEnvelopeError(id, 'INVALID_PARAMS', 'invalid parameters', {
      field: 'params',
      description: `must be a JSON object, not ${Array.isArray(params) ? 'an array' : typeof params}`,
    });
  }
  return { id, method, params };
}

function invalidRequest(id: JsonRpcId, field: string, description: string): JsonRpcEnvelopeError {
  return new JsonRpcEnvelopeError(id, 'INVALID_REQUEST', 'invalid JSON-RPC request', {
    field,
    description,
  });
}

function isFiniteNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

export interface JsonRpcSuccessResponse<T> {
  jsonrpc: '2.0';
  id: JsonRpcId;
  result: T;
}

export interface JsonRpcErrorResponse {
  jsonrpc: '2.0';
  id: JsonRpcId;
  error: JsonRpcErrorObject;
}

export function jsonRpcResult<T>(id: JsonRpcId, result: T): JsonRpcSuccessResponse<T> {
  return { jsonrpc: '2.0', id, result };
}

export function jsonRpcErrorResponse(id: JsonRpcId, error: A2aError): JsonRpcErrorResponse {
  return { jsonrpc: '2.0', id, error: toJsonRpcError(error) };
}

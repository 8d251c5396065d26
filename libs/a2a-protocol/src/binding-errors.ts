/**
 * Error mapping tables, one per binding (spec digest §7.4, §8.3, §8b, §9.1 v1.0.1 column). Each table is a
 * `Record<ErrorReason, …>`, so a new reason in `errors.ts` does not compile until every binding maps it.
 * The builders produce plain wire data: encoding `google.rpc.Status` to bytes belongs to the gRPC adapter.
 */
import {
  A2A_ERROR_DOMAIN,
  A2aError,
  type ErrorReason,
  type FieldViolation,
  PLATFORM_ERROR_DOMAIN,
} from './errors';

/** google.rpc canonical codes and their numbers. */
export const GRPC_STATUS_CODES = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;
export type GrpcStatusName = keyof typeof GRPC_STATUS_CODES;

export interface JsonRpcErrorMapping {
  /** JSON-RPC `error.code`. */
  code: number;
  /** HTTP status of the response carrying the envelope. */
  httpStatus: number;
}

/**
 * JSON-RPC codes (digest §7.4, §9.1). Envelopes go out with HTTP 200 (what the a2a-tck asserts) except where
 * the HTTP layer has a more precise status that intermediaries act on: 401, 403 and 413.
 *
 * UNAUTHENTICATED and PERMISSION_DENIED use -32000: the spec defines no code for them, A2A reserves
 * -32001…-32099 for its own errors, and -32600 would misreport a well-formed request as malformed. -32000 is
 * the one implementation-defined server-error code left, and the ErrorInfo `reason` plus the HTTP status tell
 * them apart.
 *
 * UNAVAILABLE (a dependency of the platform is down for a moment; retry the same request) is -32000 too, in an
 * HTTP 503 with `Retry-After`, so that HTTP clients and proxies see a retryable status. INTERNAL keeps
 * -32603 with 200: it is a bug, and retrying does not help.
 */
export const JSON_RPC_ERRORS: Readonly<Record<ErrorReason, JsonRpcErrorMapping>> = {
  TASK_NOT_FOUND: { code: -32001, httpStatus: 200 },
  TASK_NOT_CANCELABLE: { code: -32002, httpStatus: 200 },
  PUSH_NOTIFICATION_NOT_SUPPORTED: { code: -32003, httpStatus: 200 },
  UNSUPPORTED_OPERATION: { code: -32004, httpStatus: 200 },
  CONTENT_TYPE_NOT_SUPPORTED: { code: -32005, httpStatus: 200 },
  INVALID_AGENT_RESPONSE: { code: -32006, httpStatus: 200 },
  EXTENDED_AGENT_CARD_NOT_CONFIGURED: { code: -32007, httpStatus: 200 },
  EXTENSION_SUPPORT_REQUIRED: { code: -32008, httpStatus: 200 },
  VERSION_NOT_SUPPORTED: { code: -32009, httpStatus: 200 },
  PARSE_ERROR: { code: -32700, httpStatus: 200 },
  INVALID_REQUEST: { code: -32600, httpStatus: 200 },
  METHOD_NOT_FOUND: { code: -32601, httpStatus: 200 },
  INVALID_PARAMS: { code: -32602, httpStatus: 200 },
  UNAUTHENTICATED: { code: -32000, httpStatus: 401 },
  PERMISSION_DENIED: { code: -32000, httpStatus: 403 },
  PAYLOAD_TOO_LARGE: { code: -32602, httpStatus: 413 },
  QUOTA_EXCEEDED: { code: -32000, httpStatus: 429 },
  UNSUPPORTED_MEDIA_TYPE: { code: -32600, httpStatus: 415 },
  UNAVAILABLE: { code: -32000, httpStatus: 503 },
  INTERNAL: { code: -32603, httpStatus: 200 },
};

export interface RestErrorMapping {
  httpStatus: number;
  /** `error.status` of the google.rpc.Status body. */
  status: GrpcStatusName;
}

/**
 * HTTP+JSON statuses (digest §8.3, §9.1 v1.0.1). PAYLOAD_TOO_LARGE is 413 with RESOURCE_EXHAUSTED, the same
 * canonical code gRPC itself uses for an oversized message, so REST and gRPC report it alike; the ErrorInfo
 * reason keeps it apart from rate limiting.
 */
export const REST_ERRORS: Readonly<Record<ErrorReason, RestErrorMapping>> = {
  TASK_NOT_FOUND: { httpStatus: 404, status: 'NOT_FOUND' },
  TASK_NOT_CANCELABLE: { httpStatus: 400, status: 'FAILED_PRECONDITION' },
  PUSH_NOTIFICATION_NOT_SUPPORTED: { httpStatus: 400, status: 'FAILED_PRECONDITION' },
  UNSUPPORTED_OPERATION: { httpStatus: 400, status: 'FAILED_PRECONDITION' },
  CONTENT_TYPE_NOT_SUPPORTED: { httpStatus: 400, status: 'INVALID_ARGUMENT' },
  INVALID_AGENT_RESPONSE: { httpStatus: 500, status: 'INTERNAL' },
  EXTENDED_AGENT_CARD_NOT_CONFIGURED: { httpStatus: 400, status: 'FAILED_PRECONDITION' },
  EXTENSION_SUPPORT_REQUIRED: { httpStatus: 400, status: 'FAILED_PRECONDITION' },
  VERSION_NOT_SUPPORTED: { httpStatus: 400, status: 'FAILED_PRECONDITION' },
  PARSE_ERROR: { httpStatus: 400, status: 'INVALID_ARGUMENT' },
  INVALID_REQUEST: { httpStatus: 400, status: 'INVALID_ARGUMENT' },
  METHOD_NOT_FOUND: { httpStatus: 404, status: 'NOT_FOUND' },
  INVALID_PARAMS: { httpStatus: 400, status: 'INVALID_ARGUMENT' },
  UNAUTHENTICATED: { httpStatus: 401, status: 'UNAUTHENTICATED' },
  PERMISSION_DENIED: { httpStatus: 403, status: 'PERMISSION_DENIED' },
  PAYLOAD_TOO_LARGE: { httpStatus: 413, status: 'RESOURCE_EXHAUSTED' },
  QUOTA_EXCEEDED: { httpStatus: 429, status: 'RESOURCE_EXHAUSTED' },
  UNSUPPORTED_MEDIA_TYPE: { httpStatus: 415, status: 'INVALID_ARGUMENT' },
  UNAVAILABLE: { httpStatus: 503, status: 'UNAVAILABLE' },
  INTERNAL: { httpStatus: 500, status: 'INTERNAL' },
};

/** gRPC status codes (digest §8b, §9.1 v1.0.1). An unknown method is UNIMPLEMENTED, as gRPC servers report it. */
export const GRPC_ERRORS: Readonly<Record<ErrorReason, GrpcStatusName>> = {
  TASK_NOT_FOUND: 'NOT_FOUND',
  TASK_NOT_CANCELABLE: 'FAILED_PRECONDITION',
  PUSH_NOTIFICATION_NOT_SUPPORTED: 'FAILED_PRECONDITION',
  UNSUPPORTED_OPERATION: 'FAILED_PRECONDITION',
  CONTENT_TYPE_NOT_SUPPORTED: 'INVALID_ARGUMENT',
  INVALID_AGENT_RESPONSE: 'INTERNAL',
  EXTENDED_AGENT_CARD_NOT_CONFIGURED: 'FAILED_PRECONDITION',
  EXTENSION_SUPPORT_REQUIRED: 'FAILED_PRECONDITION',
  VERSION_NOT_SUPPORTED: 'FAILED_PRECONDITION',
  PARSE_ERROR: 'INVALID_ARGUMENT',
  INVALID_REQUEST: 'INVALID_ARGUMENT',
  METHOD_NOT_FOUND: 'UNIMPLEMENTED',
  INVALID_PARAMS: 'INVALID_ARGUMENT',
  UNAUTHENTICATED: 'UNAUTHENTICATED',
  PERMISSION_DENIED: 'PERMISSION_DENIED',
  PAYLOAD_TOO_LARGE: 'RESOURCE_EXHAUSTED',
  QUOTA_EXCEEDED: 'RESOURCE_EXHAUSTED',
  UNSUPPORTED_MEDIA_TYPE: 'INVALID_ARGUMENT',
  UNAVAILABLE: 'UNAVAILABLE',
  INTERNAL: 'INTERNAL',
};

export const ERROR_INFO_TYPE_URL = 'type.googleapis.com/google.rpc.ErrorInfo';
export const BAD_REQUEST_TYPE_URL = 'type.googleapis.com/google.rpc.BadRequest';

/** `google.rpc.ErrorInfo` as a ProtoJSON `Any`. */
export interface ErrorInfoDetail {
  '@type': typeof ERROR_INFO_TYPE_URL;
  reason: ErrorReason;
  domain: string;
  metadata?: Record<string, string>;
}

/** `google.rpc.BadRequest` as a ProtoJSON `Any`. */
export interface BadRequestDetail {
  '@type': typeof BAD_REQUEST_TYPE_URL;
  fieldViolations: FieldViolation[];
}

export type ErrorDetail = ErrorInfoDetail | BadRequestDetail;

/** The message every INTERNAL error shows on the wire; the real cause is only logged. */
export const INTERNAL_ERROR_MESSAGE = 'internal error';

/**
 * ErrorInfo for any error: domain `a2a-protocol.org` for A2A-specific reasons, the platform domain otherwise.
 * INTERNAL carries no metadata, for the same reason it carries no message.
 */
export function errorInfoDetail(error: A2aError): ErrorInfoDetail {
  const detail: ErrorInfoDetail = {
    '@type': ERROR_INFO_TYPE_URL,
    reason: error.reason,
    domain: error.isA2aSpecific ? A2A_ERROR_DOMAIN : PLATFORM_ERROR_DOMAIN,
  };
  if (error.reason !== 'INTERNAL' && Object.keys(error.metadata).length > 0) {
    detail.metadata = { ...error.metadata };
  }
  return detail;
}

/** BadRequest listing the field violations, or `undefined` when there are none. */
export function badRequestDetail(error: A2aError): BadRequestDetail | undefined {
  if (error.fieldViolations.length === 0) {
    return undefined;
  }
  return {
    '@type': BAD_REQUEST_TYPE_URL,
    fieldViolations: error.fieldViolations.map((v) => ({
      field: v.field,
      description: v.description,
    })),
  };
}

/** ErrorInfo first, then BadRequest when there are violations. */
export function errorDetails(error: A2aError): ErrorDetail[] {
  const badRequest = badRequestDetail(error);
  return badRequest === undefined ? [errorInfoDetail(error)] : [errorInfoDetail(error), badRequest];
}

/** The message clients see: the error's own, except for INTERNAL, which never leaks its text. */
export function wireMessage(error: A2aError): string {
  return error.reason === 'INTERNAL' ? INTERNAL_ERROR_MESSAGE : error.message;
}

export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data: ErrorDetail[];
}

/** The JSON-RPC `error` member (digest §7.4). Its HTTP status is `JSON_RPC_ERRORS[reason].httpStatus`. */
export function toJsonRpcError(error: A2aError): JsonRpcErrorObject {
  return {
    code: JSON_RPC_ERRORS[error.reason].code,
    message: wireMessage(error),
    data: errorDetails(error),
  };
}

export interface RestErrorBody {
  error: {
    /** The HTTP status, repeated in the body (AIP-193). */
    code: number;
    status: GrpcStatusName;
    message: string;
    details: ErrorDetail[];
  };
}

/** The HTTP+JSON error body (digest §8.3); send it with status `body.error.code`. */
export function toRestErrorBody(error: A2aError): RestErrorBody {
  const mapping = REST_ERRORS[error.reason];
  return {
    error: {
      code: mapping.httpStatus,
      status: mapping.status,
      message: wireMessage(error),
      details: errorDetails(error),
    },
  };
}

/** A `google.protobuf.Any` detail as plain data: `typeUrl` plus the message's fields. */
export type GrpcStatusDetail =
  | {
      typeUrl: typeof ERROR_INFO_TYPE_URL;
      reason: ErrorReason;
      domain: string;
      metadata?: Record<string, string>;
    }
  | { typeUrl: typeof BAD_REQUEST_TYPE_URL; fieldViolations: FieldViolation[] };

export interface GrpcStatus {
  code: number;
  message: string;
  details: GrpcStatusDetail[];
}

/** `google.rpc.Status` for the gRPC binding (digest §8b, §9.3), not yet encoded. */
export function toGrpcStatus(error: A2aError): GrpcStatus {
  return {
    code: GRPC_STATUS_CODES[GRPC_ERRORS[error.reason]],
    message: wireMessage(error),
    details: errorDetails(error).map(toGrpcDetail),
  };
}

function toGrpcDetail(detail: ErrorDetail): GrpcStatusDetail {
  if (detail['@type'] === ERROR_INFO_TYPE_URL) {
    const { '@type': typeUrl, ...info } = detail;
    return { typeUrl, ...info };
  }
  const { '@type': typeUrl, ...badRequest } = detail;
  return { typeUrl, ...badRequest };
}

/**
 * Any thrown value as an A2aError: A2aErrors pass through unchanged; anything else becomes INTERNAL with the
 * generic message, keeping the original as `cause` for the log line at the edge.
 */
export function asA2aError(e: unknown): A2aError {
  return e instanceof A2aError
    ? e
    : new A2aError('INTERNAL', INTERNAL_ERROR_MESSAGE, {}, [], { cause: e });
}

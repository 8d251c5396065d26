import { describe, expect, it } from 'vitest';
import {
  asA2aError,
  badRequestDetail,
  errorInfoDetail,
  GRPC_ERRORS,
  JSON_RPC_ERRORS,
  REST_ERRORS,
  toGrpcStatus,
  toJsonRpcError,
  toRestErrorBody,
} from './binding-errors';
import {
  A2A_ERROR_REASONS,
  A2aError,
  type ErrorReason,
  GENERIC_ERROR_REASONS,
  invalidParams,
  taskNotFound,
} from './errors';

const A2A = 'a2a-protocol.org';
const PLATFORM = 'a2a-platform.dev';

/** JSON-RPC code, JSON-RPC HTTP status, REST HTTP status, REST status, gRPC code, ErrorInfo domain. */
type Row = [number, number, number, string, number, string];

/** Digest §9.1 (v1.0.1 column), §7.4 and §8.3, written out by hand so a table edit shows up here. */
const EXPECTED: Record<ErrorReason, Row> = {
  TASK_NOT_FOUND: [-32001, 200, 404, 'NOT_FOUND', 5, A2A],
  TASK_NOT_CANCELABLE: [-32002, 200, 400, 'FAILED_PRECONDITION', 9, A2A],
  PUSH_NOTIFICATION_NOT_SUPPORTED: [-32003, 200, 400, 'FAILED_PRECONDITION', 9, A2A],
  UNSUPPORTED_OPERATION: [-32004, 200, 400, 'FAILED_PRECONDITION', 9, A2A],
  CONTENT_TYPE_NOT_SUPPORTED: [-32005, 200, 400, 'INVALID_ARGUMENT', 3, A2A],
  INVALID_AGENT_RESPONSE: [-32006, 200, 500, 'INTERNAL', 13, A2A],
  EXTENDED_AGENT_CARD_NOT_CONFIGURED: [-32007, 200, 400, 'FAILED_PRECONDITION', 9, A2A],
  EXTENSION_SUPPORT_REQUIRED: [-32008, 200, 400, 'FAILED_PRECONDITION', 9, A2A],
  VERSION_NOT_SUPPORTED: [-32009, 200, 400, 'FAILED_PRECONDITION', 9, A2A],
  PARSE_ERROR: [-32700, 200, 400, 'INVALID_ARGUMENT', 3, PLATFORM],
  INVALID_REQUEST: [-32600, 200, 400, 'INVALID_ARGUMENT', 3, PLATFORM],
  METHOD_NOT_FOUND: [-32601, 200, 404, 'NOT_FOUND', 12, PLATFORM],
  INVALID_PARAMS: [-32602, 200, 400, 'INVALID_ARGUMENT', 3, PLATFORM],
  UNAUTHENTICATED: [-32000, 401, 401, 'UNAUTHENTICATED', 16, PLATFORM],
  PERMISSION_DENIED: [-32000, 403, 403, 'PERMISSION_DENIED', 7, PLATFORM],
  PAYLOAD_TOO_LARGE: [-32602, 413, 413, 'RESOURCE_EXHAUSTED', 8, PLATFORM],
  QUOTA_EXCEEDED: [-32000, 429, 429, 'RESOURCE_EXHAUSTED', 8, PLATFORM],
  UNSUPPORTED_MEDIA_TYPE: [-32600, 415, 415, 'INVALID_ARGUMENT', 3, PLATFORM],
  UNAVAILABLE: [-32000, 503, 503, 'UNAVAILABLE', 14, PLATFORM],
  INTERNAL: [-32603, 200, 500, 'INTERNAL', 13, PLATFORM],
};

const ALL_REASONS: ErrorReason[] = [...A2A_ERROR_REASONS, ...GENERIC_ERROR_REASONS];

describe('binding error tables (§9.1 v1.0.1, §7.4, §8.3, §8b)', () => {
  it('map every reason in the catalogue and nothing else', () => {
    const sorted = [...ALL_REASONS].sort();
    expect(Object.keys(JSON_RPC_ERRORS).sort()).toEqual(sorted);
    expect(Object.keys(REST_ERRORS).sort()).toEqual(sorted);
    expect(Object.keys(GRPC_ERRORS).sort()).toEqual(sorted);
    expect(Object.keys(EXPECTED).sort()).toEqual(sorted);
  });

  it('keep A2A-specific JSON-RPC codes inside -32001…-32009 and generic ones outside -32001…-32099 (§7.4)', () => {
    for (const reason of ALL_REASONS) {
      const code = JSON_RPC_ERRORS[reason].code;
      const reserved = code <= -32001 && code >= -32099;
      expect(reserved).toBe((A2A_ERROR_REASONS as readonly string[]).includes(reason));
    }
  });

  it.each(ALL_REASONS)('maps %s on all three bindings', (reason) => {
    const [jsonRpc, jsonRpcHttp, restHttp, restStatus, grpcCode, domain] = EXPECTED[reason];
    const error = new A2aError(reason, `a ${reason} happened`);

    const rpc = toJsonRpcError(error);
    expect(rpc.code).toBe(jsonRpc);
    expect(JSON_RPC_ERRORS[reason].httpStatus).toBe(jsonRpcHttp);
    expect(rpc.data).toEqual([
      { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain },
    ]);

    const rest = toRestErrorBody(error);
    expect(rest.error.code).toBe(restHttp);
    expect(rest.error.status).toBe(restStatus);
    expect(rest.error.details).toEqual(rpc.data);

    const grpc = toGrpcStatus(error);
    expect(grpc.code).toBe(grpcCode);
    expect(grpc.details).toEqual([
      { typeUrl: 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain },
    ]);

    const message = reason === 'INTERNAL' ? 'internal error' : `a ${reason} happened`;
    expect([rpc.message, rest.error.message, grpc.message]).toEqual([message, message, message]);
  });
});

describe('error details (§7.4, §8.3, §9.3)', () => {
  it('carries ErrorInfo metadata for A2A errors', () => {
    expect(errorInfoDetail(taskNotFound('t1'))).toEqual({
      '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
      reason: 'TASK_NOT_FOUND',
      domain: 'a2a-protocol.org',
      metadata: { taskId: 't1' },
    });
  });

  it('adds BadRequest only when there are field violations', () => {
    const violations = [{ field: 'message.parts[0]', description: 'is required' }];
    const error = invalidParams(violations);
    expect(badRequestDetail(error)).toEqual({
      '@type': 'type.googleapis.com/google.rpc.BadRequest',
      fieldViolations: violations,
    });
    expect(toJsonRpcError(error).data).toHaveLength(2);
    expect(toRestErrorBody(error).error.details[1]).toEqual(badRequestDetail(error));
    expect(toGrpcStatus(error).details[1]).toEqual({
      typeUrl: 'type.googleapis.com/google.rpc.BadRequest',
      fieldViolations: violations,
    });
    expect(badRequestDetail(taskNotFound('t1'))).toBeUndefined();
    expect(toJsonRpcError(taskNotFound('t1')).data).toHaveLength(1);
  });

  it('renders the digest example of a JSON-RPC A2A error (§14)', () => {
    const error = new A2aError(
      'UNSUPPORTED_OPERATION',
      'task t1 is TASK_STATE_COMPLETED and accepts no further messages',
      { taskId: 't1' },
    );
    expect(toJsonRpcError(error)).toEqual({
      code: -32004,
      message: 'task t1 is TASK_STATE_COMPLETED and accepts no further messages',
      data: [
        {
          '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
          reason: 'UNSUPPORTED_OPERATION',
          domain: 'a2a-protocol.org',
          metadata: { taskId: 't1' },
        },
      ],
    });
  });

  it('renders the digest example of a REST error (§14)', () => {
    const error = new A2aError('VERSION_NOT_SUPPORTED', 'A2A-Version 0.5 is not supported');
    expect(toRestErrorBody(error)).toEqual({
      error: {
        code: 400,
        status: 'FAILED_PRECONDITION',
        message: 'A2A-Version 0.5 is not supported',
        details: [
          {
            '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
            reason: 'VERSION_NOT_SUPPORTED',
            domain: 'a2a-protocol.org',
          },
        ],
      },
    });
  });
});

describe('internal errors never leak', () => {
  it('hides the message and metadata of an INTERNAL A2aError on every binding', () => {
    const error = new A2aError('INTERNAL', 'password=hunter2 rejected by db', { host: 'db-1' });
    expect(toJsonRpcError(error)).toEqual({
      code: -32603,
      message: 'internal error',
      data: [
        {
          '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
          reason: 'INTERNAL',
          domain: PLATFORM,
        },
      ],
    });
    expect(toRestErrorBody(error).error.message).toBe('internal error');
    expect(toGrpcStatus(error).message).toBe('internal error');
  });

  it('turns a foreign Error into INTERNAL, keeping it only as the cause', () => {
    const thrown = new Error('connect ECONNREFUSED 10.0.0.7:5432');
    const error = asA2aError(thrown);
    expect(error.reason).toBe('INTERNAL');
    expect(error.message).toBe('internal error');
    expect(error.cause).toBe(thrown);
  });

  it('turns a thrown non-Error into INTERNAL', () => {
    expect(asA2aError('boom').reason).toBe('INTERNAL');
    expect(asA2aError(undefined).message).toBe('internal error');
  });

  it('passes an A2aError through unchanged', () => {
    const error = taskNotFound('t1');
    expect(asA2aError(error)).toBe(error);
  });
});

import { describe, expect, it } from 'vitest';
import { asA2aError } from './binding-errors';
import { A2aError, taskNotFound } from './errors';
import {
  A2A_JSON_RPC_METHODS,
  isA2aMethod,
  jsonRpcErrorResponse,
  jsonRpcRequestIdOf,
  jsonRpcResult,
  parseJsonRpcRequest,
} from './json-rpc';

/** Parses `body`, expects an envelope error and returns what the response needs. */
function failure(body: string): { reason: string; id: unknown; fields: string[] } {
  try {
    parseJsonRpcRequest(body);
  } catch (e) {
    expect(e).toBeInstanceOf(A2aError);
    const error = e as A2aError;
    return {
      reason: error.reason,
      id: jsonRpcRequestIdOf(e),
      fields: error.fieldViolations.map((v) => v.field),
    };
  }
  throw new Error('expected parseJsonRpcRequest to throw');
}

describe('parseJsonRpcRequest (§7.1, §7.4)', () => {
  it('returns id, method and params of a valid request', () => {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      method: 'GetTask',
      params: { id: 't1' },
    });
    expect(parseJsonRpcRequest(body)).toEqual({ id: 7, method: 'GetTask', params: { id: 't1' } });
  });

  it('accepts a string id and missing params (§7.2 GetExtendedAgentCard)', () => {
    expect(
      parseJsonRpcRequest('{"jsonrpc":"2.0","id":"req-1","method":"GetExtendedAgentCard"}'),
    ).toEqual({ id: 'req-1', method: 'GetExtendedAgentCard', params: undefined });
  });

  it('treats null params as absent', () => {
    expect(
      parseJsonRpcRequest('{"jsonrpc":"2.0","id":1,"method":"GetTask","params":null}').params,
    ).toBeUndefined();
  });

  it('answers a request without id with id null', () => {
    expect(parseJsonRpcRequest('{"jsonrpc":"2.0","method":"GetTask","params":{}}').id).toBeNull();
  });

  it.each([['{"jsonrpc":"2.0",'], [''], ['not json']])(
    'rejects malformed JSON %j with -32700 and id null (§7.4)',
    (body) => {
      expect(failure(body)).toEqual({ reason: 'PARSE_ERROR', id: null, fields: [] });
    },
  );

  it.each([
    ['a batch', '[{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{}}]'],
    ['an empty batch', '[]'],
    ['a number', '42'],
    ['a string', '"GetTask"'],
    ['null', 'null'],
  ])('rejects %s as INVALID_REQUEST with id null (§7.4)', (_label, body) => {
    expect(failure(body)).toMatchObject({ reason: 'INVALID_REQUEST', id: null });
  });

  it.each([['{"a":1}'], ['true'], ['[1]']])(
    'rejects the non-scalar id %s as INVALID_REQUEST with id null (§7.4)',
    (id) => {
      expect(failure(`{"jsonrpc":"2.0","id":${id},"method":"GetTask","params":{}}`)).toEqual({
        reason: 'INVALID_REQUEST',
        id: null,
        fields: ['id'],
      });
    },
  );

  it('rejects jsonrpc other than "2.0" and echoes the id (§7.4)', () => {
    expect(failure('{"jsonrpc":"1.0","id":9,"method":"GetTask","params":{}}')).toEqual({
      reason: 'INVALID_REQUEST',
      id: 9,
      fields: ['jsonrpc'],
    });
    expect(failure('{"id":"x","method":"GetTask","params":{}}')).toMatchObject({ id: 'x' });
  });

  it.each([
    ['{"jsonrpc":"2.0","id":"abc","params":{}}'],
    ['{"jsonrpc":"2.0","id":"abc","method":5}'],
  ])('rejects a missing or non-string method and echoes the id (§7.4): %s', (body) => {
    expect(failure(body)).toEqual({ reason: 'INVALID_REQUEST', id: 'abc', fields: ['method'] });
  });

  it('rejects array params as INVALID_PARAMS and echoes the id (§7.1)', () => {
    expect(failure('{"jsonrpc":"2.0","id":3,"method":"GetTask","params":["t1"]}')).toEqual({
      reason: 'INVALID_PARAMS',
      id: 3,
      fields: ['params'],
    });
  });

  it('rejects scalar params as INVALID_PARAMS and echoes the id (§13)', () => {
    expect(failure('{"jsonrpc":"2.0","id":4,"method":"GetTask","params":"t1"}')).toEqual({
      reason: 'INVALID_PARAMS',
      id: 4,
      fields: ['params'],
    });
  });

  it('does not validate the method name: unknown methods are the caller’s -32601 (§7.2)', () => {
    expect(parseJsonRpcRequest('{"jsonrpc":"2.0","id":1,"method":"message/send"}').method).toBe(
      'message/send',
    );
  });
});

describe('A2A methods (§7.2)', () => {
  it('lists the 11 PascalCase methods', () => {
    expect(A2A_JSON_RPC_METHODS).toEqual([
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
    ]);
  });

  it.each([['message/send'], ['tasks/get'], ['ListTaskPushNotificationConfig'], ['getTask'], ['']])(
    'does not accept the non-1.0 name %j (§11)',
    (name) => {
      expect(isA2aMethod(name)).toBe(false);
    },
  );

  it('accepts every listed method', () => {
    expect(A2A_JSON_RPC_METHODS.every((m) => isA2aMethod(m))).toBe(true);
  });
});

describe('responses (§7.3, §7.4)', () => {
  it('builds a success response', () => {
    expect(jsonRpcResult(7, { task: { id: 't1' } })).toEqual({
      jsonrpc: '2.0',
      id: 7,
      result: { task: { id: 't1' } },
    });
  });

  it('builds an error response with ErrorInfo data', () => {
    expect(jsonRpcErrorResponse('r1', taskNotFound('t1'))).toEqual({
      jsonrpc: '2.0',
      id: 'r1',
      error: {
        code: -32001,
        message: 'task t1 was not found',
        data: [
          {
            '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
            reason: 'TASK_NOT_FOUND',
            domain: 'a2a-protocol.org',
            metadata: { taskId: 't1' },
          },
        ],
      },
    });
  });

  it('answers an envelope error with the echoed id, -32600 and a BadRequest', () => {
    let response: unknown;
    try {
      parseJsonRpcRequest('{"jsonrpc":"1.0","id":12,"method":"GetTask"}');
    } catch (e) {
      response = jsonRpcErrorResponse(jsonRpcRequestIdOf(e), asA2aError(e));
    }
    expect(response).toEqual({
      jsonrpc: '2.0',
      id: 12,
      error: {
        code: -32600,
        message: 'invalid JSON-RPC request',
        data: [
          {
            '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
            reason: 'INVALID_REQUEST',
            domain: 'a2a-platform.dev',
          },
          {
            '@type': 'type.googleapis.com/google.rpc.BadRequest',
            fieldViolations: [{ field: 'jsonrpc', description: 'must be "2.0"' }],
          },
        ],
      },
    });
  });

  it('reads id null from errors that are not envelope errors', () => {
    expect(jsonRpcRequestIdOf(taskNotFound('t1'))).toBeNull();
    expect(jsonRpcRequestIdOf(new Error('x'))).toBeNull();
  });
});

describe('request nesting limit (docs/hardening.md)', () => {
  const envelope = (params: string): string =>
    `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":${params}}`;

  it('refuses text nested deeper than any request before parsing it, with id null', () => {
    const deep = `{"metadata":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    expect(failure(envelope(deep))).toEqual({
      reason: 'INVALID_PARAMS',
      id: null,
      fields: ['params'],
    });
  });

  it('refuses deep text even when it is not valid JSON (the depth is checked first)', () => {
    expect(failure(envelope('['.repeat(65))).reason).toBe('INVALID_PARAMS');
  });

  it('leaves a request of allowed depth to the decoder, brackets in strings not counted', () => {
    const inString = JSON.stringify('['.repeat(1000));
    const parsed = parseJsonRpcRequest(
      envelope(`{"a":${inString},"b":${'['.repeat(60)}${']'.repeat(60)}}`),
    );
    expect(parsed.params).toMatchObject({ a: '['.repeat(1000) });
  });
});

import { BinaryWriter } from '@bufbuild/protobuf/wire';
import { A2A_JSON_RPC_METHODS, a2aPb, decodeSendMessageRequest } from '@lib/a2a-protocol';
import { describe, expect, it } from 'vitest';
import { methodOf, readRequest, responseMessage, SERVICE_KEYS } from './a2a-grpc.codec';

const serialize = a2aPb.A2AServiceService;

describe('the gRPC codec of lf.a2a.v1.A2AService', () => {
  it('§2 maps each of the 11 RPCs to its A2A method', () => {
    expect(SERVICE_KEYS.map(methodOf).sort()).toEqual([...A2A_JSON_RPC_METHODS].sort());
  });

  it('§3 reads a request as the ProtoJSON the JSON bindings accept: enum names, base64, Values, Structs, presence', () => {
    const request: a2aPb.SendMessageRequest = {
      tenant: 'demo/echo',
      message: {
        messageId: 'm-1',
        contextId: '',
        taskId: '',
        role: 'ROLE_USER',
        parts: [
          { raw: Buffer.from([0, 255]), metadata: undefined, filename: 'b', mediaType: '' },
          { data: null, metadata: { k: [1, null] }, filename: '', mediaType: '' },
        ],
        metadata: { nested: { ok: true } },
        extensions: [],
        referenceTaskIds: [],
      },
      configuration: {
        acceptedOutputModes: [],
        taskPushNotificationConfig: undefined,
        historyLength: 0,
        returnImmediately: false,
      },
      metadata: undefined,
    };
    const read = readRequest('sendMessage', serialize.sendMessage.requestSerialize(request));
    const expected = {
      tenant: 'demo/echo',
      message: {
        messageId: 'm-1',
        role: 'ROLE_USER',
        parts: [
          { raw: 'AP8=', filename: 'b' },
          { data: null, metadata: { k: [1, null] } },
        ],
        metadata: { nested: { ok: true } },
      },
      configuration: { historyLength: 0 },
    };
    expect(read).toEqual({ params: expected });
    expect(decodeSendMessageRequest('params' in read ? read.params : undefined)).toEqual(expected);
  });

  it('bytes that do not decode are PARSE_ERROR; an enum number outside the proto is INVALID_PARAMS on its field', () => {
    const truncated = readRequest('getTask', Buffer.from([0x0a, 0x05, 0x61]));
    expect(truncated.error?.reason).toBe('PARSE_ERROR');
    expect(truncated.error?.message).toMatch(/lf\.a2a\.v1\.GetTaskRequest/);

    const status = new BinaryWriter().uint32(24).int32(42).finish();
    const badStatus = readRequest('listTasks', status);
    expect(badStatus.error?.reason).toBe('INVALID_PARAMS');
    expect(badStatus.error?.fieldViolations).toEqual([
      { field: 'status', description: '42 is not a TaskState value' },
    ]);

    const message = new BinaryWriter().uint32(32).int32(7).finish();
    const role = new BinaryWriter().uint32(18).bytes(message).finish();
    expect(readRequest('sendStreamingMessage', role).error?.fieldViolations).toEqual([
      { field: 'message.role', description: '7 is not a Role value' },
    ]);
  });

  it('encodes results: a Part whose data is JSON null keeps it; Delete answers an empty message', () => {
    const json = {
      statusUpdate: {
        taskId: 't',
        contextId: 'c',
        status: {
          state: 'TASK_STATE_WORKING',
          timestamp: '2026-01-02T03:04:05.678Z',
          message: {
            messageId: 'a',
            role: 'ROLE_AGENT',
            parts: [{ data: null }, { data: { data: null } }, { text: '' }],
          },
        },
      },
    };
    const bytes = serialize.subscribeToTask.responseSerialize(
      responseMessage('subscribeToTask', json) as a2aPb.StreamResponse,
    );
    expect(a2aPb.StreamResponse.toJSON(a2aPb.StreamResponse.decode(bytes))).toEqual(json);

    const empty = serialize.deleteTaskPushNotificationConfig.responseSerialize(
      responseMessage('deleteTaskPushNotificationConfig', {}) as Record<string, never>,
    );
    expect(empty).toHaveLength(0);
  });
});

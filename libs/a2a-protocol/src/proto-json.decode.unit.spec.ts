import { describe, expect, it } from 'vitest';
import { A2aError, type FieldViolation } from './errors';
import type {
  Artifact,
  CancelTaskRequest,
  GetTaskRequest,
  JsonValue,
  ListTasksRequest,
  Message,
  SendMessageRequest,
  Task,
  TaskPushNotificationConfig,
  TaskStatus,
} from './model';
import {
  applyHistoryLength,
  decode,
  decodeArtifact,
  decodeCancelTaskRequest,
  decodeDeleteTaskPushNotificationConfigRequest,
  decodeGetExtendedAgentCardRequest,
  decodeGetTaskPushNotificationConfigRequest,
  decodeGetTaskRequest,
  decodeListPageToken,
  decodeListTaskPushNotificationConfigsRequest,
  decodeListTasksRequest,
  decodeMessage,
  decodeSendMessageRequest,
  decodeSubscribeToTaskRequest,
  decodeTaskPushNotificationConfig,
  decodeTaskStatus,
  DEFAULT_PROTO_JSON_LIMITS,
  encodeListPageToken,
  type MessageDescriptor,
  normalizeBase64,
  normalizeTimestamp,
  withoutArtifacts,
} from './proto-json';

/** Runs `fn`, expects an INVALID_PARAMS A2aError and returns its violations. */
function violationsOf(fn: () => unknown): FieldViolation[] {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(A2aError);
    const error = e as A2aError;
    expect(error.reason).toBe('INVALID_PARAMS');
    return [...error.fieldViolations];
  }
  throw new Error('expected the decoder to throw');
}

const fieldsOf = (fn: () => unknown): string[] => violationsOf(fn).map((v) => v.field);

const userMessage = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  messageId: 'm1',
  role: 'ROLE_USER',
  parts: [{ text: 'hi' }],
  ...extra,
});

const sendWithParts = (parts: unknown[]): unknown => ({ message: userMessage({ parts }) });

describe('fully populated canonical objects decode to themselves (descriptors match the model, §4)', () => {
  it('SendMessageRequest', () => {
    const request: SendMessageRequest = {
      tenant: 't1',
      message: {
        messageId: 'm1',
        contextId: 'c1',
        taskId: 'task-1',
        role: 'ROLE_USER',
        parts: [
          { text: 'hi', metadata: { a: 1 }, filename: 'a.txt', mediaType: 'text/plain' },
          { raw: 'iVBORw==', filename: 'a.png', mediaType: 'image/png' },
          { url: 'https://x.example/y.pdf', mediaType: 'application/pdf' },
          { data: { k: [1, 'two', null, true] }, mediaType: 'application/json' },
        ],
        metadata: { 'https://ext.example/v1': { on: true } },
        extensions: ['https://ext.example/v1'],
        referenceTaskIds: ['task-0'],
      },
      configuration: {
        acceptedOutputModes: ['text/plain'],
        taskPushNotificationConfig: {
          tenant: 't1',
          id: 'cfg-1',
          taskId: 'task-1',
          url: 'https://hooks.example/a2a',
          token: 'tok',
          authentication: { scheme: 'Bearer', credentials: 's3cr3t' },
        },
        historyLength: 3,
        returnImmediately: true,
      },
      metadata: { trace: 'x' },
    };
    expect(decodeSendMessageRequest(request)).toEqual(request);
  });

  it('ListTasksRequest', () => {
    const request: ListTasksRequest = {
      tenant: 't1',
      contextId: 'c1',
      status: 'TASK_STATE_WORKING',
      pageSize: 10,
      pageToken: encodeListPageToken({ statusTimestamp: '2026-01-01T00:00:00.000Z', taskId: 't' }),
      historyLength: 0,
      statusTimestampAfter: '2026-01-01T00:00:00.000Z',
      includeArtifacts: false,
    };
    expect(decodeListTasksRequest(request)).toEqual(request);
  });

  it('GetTaskRequest and CancelTaskRequest', () => {
    const get: GetTaskRequest = { tenant: 't1', id: 'task-1', historyLength: 2 };
    const cancel: CancelTaskRequest = { tenant: 't1', id: 'task-1', metadata: { why: 'done' } };
    expect(decodeGetTaskRequest(get)).toEqual(get);
    expect(decodeCancelTaskRequest(cancel)).toEqual(cancel);
  });

  it('TaskStatus with an agent message, and Artifact', () => {
    const status: TaskStatus = {
      state: 'TASK_STATE_INPUT_REQUIRED',
      message: {
        messageId: 'm2',
        contextId: 'c1',
        taskId: 'task-1',
        role: 'ROLE_AGENT',
        parts: [{ text: 'which city?' }],
      },
      timestamp: '2026-01-01T00:00:01.000Z',
    };
    const artifact: Artifact = {
      artifactId: 'a1',
      name: 'report',
      description: 'the report',
      parts: [{ text: 'body' }],
      metadata: { v: 1 },
      extensions: ['https://ext.example/v1'],
    };
    expect(decodeTaskStatus(status)).toEqual(status);
    expect(decodeArtifact(artifact)).toEqual(artifact);
  });
});

describe('field names (§3)', () => {
  it('accepts snake_case input names and returns camelCase', () => {
    const decoded = decodeSendMessageRequest({
      message: {
        message_id: 'm1',
        context_id: 'c1',
        task_id: 't1',
        role: 'ROLE_USER',
        parts: [{ text: 'hi', media_type: 'text/plain' }],
        reference_task_ids: ['t0'],
      },
      configuration: {
        accepted_output_modes: ['text/plain'],
        history_length: 2,
        return_immediately: true,
        task_push_notification_config: { url: 'https://h.example', task_id: 't1' },
      },
    });
    expect(decoded).toEqual({
      message: {
        messageId: 'm1',
        contextId: 'c1',
        taskId: 't1',
        role: 'ROLE_USER',
        parts: [{ text: 'hi', mediaType: 'text/plain' }],
        referenceTaskIds: ['t0'],
      },
      configuration: {
        acceptedOutputModes: ['text/plain'],
        historyLength: 2,
        returnImmediately: true,
        taskPushNotificationConfig: { url: 'https://h.example', taskId: 't1' },
      },
    });
  });

  it('rejects the same field given as both snake_case and camelCase (§3)', () => {
    const violations = violationsOf(() =>
      decodeSendMessageRequest({ message: userMessage({ context_id: 'a', contextId: 'b' }) }),
    );
    expect(violations).toEqual([
      {
        field: 'message.contextId',
        description: 'is set twice, as "context_id" and as "contextId"',
      },
    ]);
  });

  it('ignores unknown fields such as the 0.3 kind discriminator (§3)', () => {
    const decoded = decodeSendMessageRequest({
      kind: 'message',
      message: userMessage({ kind: 'message', parts: [{ kind: 'text', text: 'hi' }] }),
      extra: { anything: true },
    });
    expect(decoded).toEqual({ message: userMessage() });
  });

  it('treats null as absent (§3)', () => {
    const decoded = decodeSendMessageRequest({
      message: userMessage({ contextId: null, metadata: null, extensions: null }),
      configuration: null,
      tenant: null,
    });
    expect(decoded).toEqual({ message: userMessage() });
  });

  it('drops implicit-presence defaults and keeps explicit-presence ones (§3)', () => {
    expect(
      decodeSendMessageRequest({
        message: userMessage({ contextId: '', extensions: [] }),
        configuration: { returnImmediately: false, historyLength: 0, acceptedOutputModes: [] },
        tenant: '',
      }),
    ).toEqual({ message: userMessage(), configuration: { historyLength: 0 } });
  });
});

describe('required fields (§3, §4)', () => {
  it('reports a missing message at its path', () => {
    expect(fieldsOf(() => decodeSendMessageRequest({}))).toEqual(['message']);
  });

  it('requires a non-empty messageId, a specified role and at least one part (§4.1)', () => {
    const violations = violationsOf(() =>
      decodeSendMessageRequest({ message: { messageId: '', role: 'ROLE_UNSPECIFIED', parts: [] } }),
    );
    expect(violations).toEqual([
      { field: 'message.messageId', description: 'is required and must not be empty' },
      { field: 'message.role', description: 'is required and must not be ROLE_UNSPECIFIED' },
      { field: 'message.parts', description: 'is required and must have at least one element' },
    ]);
  });

  it('treats role 0 as ROLE_UNSPECIFIED, which is not a valid role (§5)', () => {
    expect(fieldsOf(() => decodeSendMessageRequest({ message: userMessage({ role: 0 }) }))).toEqual(
      ['message.role'],
    );
  });

  it('requires TaskStatus.state (§4.1)', () => {
    expect(fieldsOf(() => decodeTaskStatus({ timestamp: '2026-01-01T00:00:00Z' }))).toEqual([
      'state',
    ]);
  });

  it('requires Artifact.artifactId and parts (§4.1)', () => {
    expect(fieldsOf(() => decodeArtifact({ name: 'x' }))).toEqual(['artifactId', 'parts']);
  });

  it('requires push config url and authentication scheme (§4.4)', () => {
    expect(
      fieldsOf(() =>
        decodeSendMessageRequest({
          message: userMessage(),
          configuration: { taskPushNotificationConfig: { authentication: { credentials: 'x' } } },
        }),
      ),
    ).toEqual([
      'configuration.taskPushNotificationConfig.url',
      'configuration.taskPushNotificationConfig.authentication.scheme',
    ]);
  });

  it('requires ids on task and push-config requests (§4.3, §4.4)', () => {
    expect(fieldsOf(() => decodeGetTaskRequest({}))).toEqual(['id']);
    expect(fieldsOf(() => decodeCancelTaskRequest({ id: '' }))).toEqual(['id']);
    expect(fieldsOf(() => decodeSubscribeToTaskRequest({ tenant: 't' }))).toEqual(['id']);
    expect(fieldsOf(() => decodeGetTaskPushNotificationConfigRequest({}))).toEqual([
      'taskId',
      'id',
    ]);
    expect(fieldsOf(() => decodeDeleteTaskPushNotificationConfigRequest({ id: 'c' }))).toEqual([
      'taskId',
    ]);
    expect(fieldsOf(() => decodeListTaskPushNotificationConfigsRequest({}))).toEqual(['taskId']);
    expect(fieldsOf(() => decodeTaskPushNotificationConfig({ taskId: 't' }))).toEqual(['url']);
  });
});

describe('root input', () => {
  it.each([
    ['undefined', undefined, 'must be a JSON object (GetTaskRequest), got nothing'],
    ['null', null, 'must be a JSON object (GetTaskRequest), got null'],
    ['an array', [{ id: 't' }], 'must be a JSON object (GetTaskRequest), got an array'],
    ['a string', 't1', 'must be a JSON object (GetTaskRequest), got a string'],
  ])('rejects %s as params at the root path (§7.2)', (_label, input, description) => {
    expect(violationsOf(() => decodeGetTaskRequest(input))).toEqual([{ field: '', description }]);
  });

  it('accepts missing params for GetExtendedAgentCard (§7.2)', () => {
    expect(decodeGetExtendedAgentCardRequest(undefined)).toEqual({});
    expect(decodeGetExtendedAgentCardRequest(null)).toEqual({});
    expect(decodeGetExtendedAgentCardRequest({ tenant: 'acme' })).toEqual({ tenant: 'acme' });
    expect(fieldsOf(() => decodeGetExtendedAgentCardRequest('acme'))).toEqual(['']);
  });
});

describe('enums (§3, §5)', () => {
  it('accepts enum numbers and returns names', () => {
    expect(decodeSendMessageRequest({ message: userMessage({ role: 1 }) }).message.role).toBe(
      'ROLE_USER',
    );
    expect(decodeTaskStatus({ state: 3 }).state).toBe('TASK_STATE_COMPLETED');
    expect(decodeListTasksRequest({ status: 2 }).status).toBe('TASK_STATE_WORKING');
  });

  it.each([
    ['completed', 'TASK_STATE_COMPLETED'],
    ['input-required', 'TASK_STATE_INPUT_REQUIRED'],
    ['canceled', 'TASK_STATE_CANCELED'],
  ])('rejects the 0.3 spelling "%s" and names the 1.0 one (§11)', (spelling, name) => {
    expect(violationsOf(() => decodeTaskStatus({ state: spelling }))).toEqual([
      {
        field: 'state',
        description: `"${spelling}" is not a TaskState value; A2A 1.0 spells it ${name}`,
      },
    ]);
  });

  it('rejects "cancelled", the old British spelling (§5)', () => {
    expect(violationsOf(() => decodeTaskStatus({ state: 'cancelled' }))).toEqual([
      { field: 'state', description: '"cancelled" is not a TaskState value' },
    ]);
  });

  it('rejects the 0.3 role "user" (§11)', () => {
    expect(
      violationsOf(() => decodeSendMessageRequest({ message: userMessage({ role: 'user' }) })),
    ).toEqual([
      {
        field: 'message.role',
        description: '"user" is not a Role value; A2A 1.0 spells it ROLE_USER',
      },
    ]);
  });

  it('rejects unknown enum numbers and non-integers (§5)', () => {
    expect(fieldsOf(() => decodeTaskStatus({ state: 9 }))).toEqual(['state']);
    expect(fieldsOf(() => decodeTaskStatus({ state: 1.5 }))).toEqual(['state']);
    expect(fieldsOf(() => decodeTaskStatus({ state: true }))).toEqual(['state']);
  });

  it('treats TASK_STATE_UNSPECIFIED as no ListTasks status filter (§4.3)', () => {
    expect(decodeListTasksRequest({ status: 'TASK_STATE_UNSPECIFIED' })).toEqual({});
    expect(decodeListTasksRequest({ status: 0 })).toEqual({});
  });

  it('rejects an unknown ListTasks status string (§10.7)', () => {
    expect(fieldsOf(() => decodeListTasksRequest({ status: 'working' }))).toEqual(['status']);
  });
});

describe('client message role (§4.1)', () => {
  it('rejects a ROLE_AGENT message in SendMessage', () => {
    expect(
      violationsOf(() =>
        decodeSendMessageRequest({ message: userMessage({ role: 'ROLE_AGENT' }) }),
      ),
    ).toEqual([
      { field: 'message.role', description: 'a message sent by a client must have role ROLE_USER' },
    ]);
  });

  it('accepts a ROLE_AGENT message from a worker', () => {
    expect(decodeMessage(userMessage({ role: 2 })).role).toBe('ROLE_AGENT');
  });
});

describe('int32 and historyLength (§3, §10.5)', () => {
  it('accepts numeric strings', () => {
    expect(decodeGetTaskRequest({ id: 't', historyLength: '5' })).toEqual({
      id: 't',
      historyLength: 5,
    });
  });

  it.each([[1.5], ['5.5'], ['1e-3'], [2 ** 31], [-(2 ** 31) - 1], [true], [''], [' 5']])(
    'rejects %j as an int32',
    (value) => {
      expect(fieldsOf(() => decodeGetTaskRequest({ id: 't', historyLength: value }))).toEqual([
        'historyLength',
      ]);
    },
  );

  it('rejects a negative historyLength in GetTask, ListTasks and SendMessage (§10.5)', () => {
    expect(violationsOf(() => decodeGetTaskRequest({ id: 't', history_length: -1 }))).toEqual([
      { field: 'historyLength', description: 'must be at least 0, got -1' },
    ]);
    expect(fieldsOf(() => decodeListTasksRequest({ historyLength: -1 }))).toEqual([
      'historyLength',
    ]);
    expect(
      fieldsOf(() =>
        decodeSendMessageRequest({ message: userMessage(), configuration: { historyLength: -3 } }),
      ),
    ).toEqual(['configuration.historyLength']);
  });

  it('keeps historyLength 0, which means "no history" (§10.5)', () => {
    expect(decodeGetTaskRequest({ id: 't', historyLength: 0 })).toEqual({
      id: 't',
      historyLength: 0,
    });
  });
});

describe('ListTasks validation (§10.7)', () => {
  it.each([[0], [-1], [101], [150]])('rejects pageSize %j (§10.7)', (pageSize) => {
    expect(violationsOf(() => decodeListTasksRequest({ pageSize }))).toEqual([
      { field: 'pageSize', description: `must be between 1 and 100, got ${pageSize}` },
    ]);
  });

  it.each([[1], [50], [100], ['100']])('accepts pageSize %j (§10.7)', (pageSize) => {
    expect(decodeListTasksRequest({ page_size: pageSize }).pageSize).toBe(Number(pageSize));
  });

  it('rejects a pageToken the server did not issue (§10.7)', () => {
    expect(violationsOf(() => decodeListTasksRequest({ pageToken: 'garbage!' }))).toEqual([
      { field: 'pageToken', description: 'is not a page token issued by this server' },
    ]);
  });

  it('keeps includeArtifacts false, an explicit-presence bool (§4.3)', () => {
    expect(decodeListTasksRequest({ includeArtifacts: false })).toEqual({
      includeArtifacts: false,
    });
  });

  it('rejects a bool given as a string', () => {
    expect(fieldsOf(() => decodeListTasksRequest({ includeArtifacts: 'true' }))).toEqual([
      'includeArtifacts',
    ]);
  });

  it('rejects an invalid statusTimestampAfter (§10.7)', () => {
    expect(fieldsOf(() => decodeListTasksRequest({ statusTimestampAfter: 'yesterday' }))).toEqual([
      'statusTimestampAfter',
    ]);
  });

  it('rejects a negative push-config pageSize', () => {
    expect(
      fieldsOf(() => decodeListTaskPushNotificationConfigsRequest({ task_id: 't', pageSize: -1 })),
    ).toEqual(['pageSize']);
    expect(decodeListTaskPushNotificationConfigsRequest({ task_id: 't', pageSize: 5 })).toEqual({
      taskId: 't',
      pageSize: 5,
    });
  });
});

describe('timestamps (§3)', () => {
  it.each([
    ['2026-01-01T00:00:00Z', '2026-01-01T00:00:00.000Z'],
    ['2026-01-01t00:00:00z', '2026-01-01T00:00:00.000Z'],
    ['2026-01-01T02:30:00+02:30', '2026-01-01T00:00:00.000Z'],
    ['2025-12-31T23:00:00-01:00', '2026-01-01T00:00:00.000Z'],
    ['2026-01-01T00:00:00.1Z', '2026-01-01T00:00:00.100Z'],
    ['2026-01-01T00:00:00.123456789Z', '2026-01-01T00:00:00.123Z'],
    ['2024-02-29T12:00:00Z', '2024-02-29T12:00:00.000Z'],
    ['0001-01-01T00:00:00Z', '0001-01-01T00:00:00.000Z'],
  ])('normalises %s to UTC milliseconds', (input, expected) => {
    expect(normalizeTimestamp(input)).toBe(expected);
    expect(decodeTaskStatus({ state: 1, timestamp: input }).timestamp).toBe(expected);
  });

  it.each([
    ['2026-02-30T00:00:00Z'],
    ['2025-02-29T00:00:00Z'],
    ['2026-13-01T00:00:00Z'],
    ['2026-01-01T24:00:00Z'],
    ['2026-01-01T00:00:60Z'],
    ['2026-01-01T00:00:00'],
    ['2026-01-01'],
    ['2026-01-01 00:00:00Z'],
    ['2026-01-01T00:00:00+0100'],
    ['0001-01-01T00:00:00+01:00'],
    ['yesterday'],
  ])('rejects %s', (input) => {
    expect(normalizeTimestamp(input)).toBeUndefined();
    expect(fieldsOf(() => decodeTaskStatus({ state: 1, timestamp: input }))).toEqual(['timestamp']);
  });

  it('rejects a number for a timestamp', () => {
    expect(fieldsOf(() => decodeTaskStatus({ state: 1, timestamp: 1_767_225_600_000 }))).toEqual([
      'timestamp',
    ]);
  });
});

describe('bytes (§3)', () => {
  it.each([
    ['+/8=', '+/8='],
    ['+/8', '+/8='],
    ['-_8', '+/8='],
    ['-_8=', '+/8='],
    ['aGVsbG8', 'aGVsbG8='],
    ['aGk', 'aGk='],
    ['aGk=', 'aGk='],
    ['', ''],
  ])('normalises %j to standard padded base64', (input, expected) => {
    expect(normalizeBase64(input)).toBe(expected);
  });

  it('normalises Part.raw given URL-safe and unpadded', () => {
    const decoded = decodeSendMessageRequest(sendWithParts([{ raw: '-_8' }]));
    expect(decoded.message.parts).toEqual([{ raw: '+/8=' }]);
  });

  it.each([['a'], ['aGk=='], ['aG=k'], ['+_8='], ['aGk$'], ['aGk==='], ['aGVsbG8=\n']])(
    'rejects invalid base64 %j at the part path',
    (raw) => {
      expect(violationsOf(() => decodeSendMessageRequest(sendWithParts([{ raw }])))).toEqual([
        {
          field: 'message.parts[0].raw',
          description: 'must be base64 (standard or URL-safe alphabet)',
        },
      ]);
    },
  );
});

describe('Part oneof content (§4.1)', () => {
  it('collects every part violation with its exact path', () => {
    const violations = violationsOf(() =>
      decodeSendMessageRequest(
        sendWithParts([
          { text: 'ok' },
          { raw: 'not base64!' },
          { text: 'a', url: 'https://x.example' },
          { filename: 'x' },
          'plain string',
          null,
        ]),
      ),
    );
    expect(violations).toEqual([
      {
        field: 'message.parts[1].raw',
        description: 'must be base64 (standard or URL-safe alphabet)',
      },
      {
        field: 'message.parts[2]',
        description: 'only one of text, raw, url, data may be set (oneof content), got text, url',
      },
      {
        field: 'message.parts[3]',
        description: 'exactly one of text, raw, url, data must be set (oneof content)',
      },
      { field: 'message.parts[4]', description: 'must be a JSON object (Part), got a string' },
      { field: 'message.parts[5]', description: 'must not be null' },
    ]);
  });

  it('accepts an empty text part: oneof members have presence (§3)', () => {
    expect(decodeSendMessageRequest(sendWithParts([{ text: '' }])).message.parts).toEqual([
      { text: '' },
    ]);
  });

  it('accepts any JSON value as data, including null (§4.1)', () => {
    const parts = [{ data: null }, { data: [1, 'a'] }, { data: 42 }, { data: { k: { n: true } } }];
    expect(decodeSendMessageRequest(sendWithParts(parts)).message.parts).toEqual(parts);
  });

  it('rejects a parts value that is not an array', () => {
    expect(
      violationsOf(() =>
        decodeSendMessageRequest({ message: userMessage({ parts: { text: 'x' } }) }),
      ),
    ).toEqual([{ field: 'message.parts', description: 'must be a JSON array, got an object' }]);
  });

  it('rejects a text part that is not a string', () => {
    expect(fieldsOf(() => decodeSendMessageRequest(sendWithParts([{ text: 5 }])))).toEqual([
      'message.parts[0].text',
    ]);
  });
});

describe('Struct metadata (§3)', () => {
  it.each([[[1, 2]], ['x'], [3]])('rejects %j as metadata', (metadata) => {
    expect(fieldsOf(() => decodeSendMessageRequest({ message: userMessage(), metadata }))).toEqual([
      'metadata',
    ]);
  });

  it('rejects non-JSON values inside a Struct', () => {
    expect(
      fieldsOf(() =>
        decodeCancelTaskRequest({ id: 't', metadata: { at: new Date(0), n: Number.NaN } }),
      ),
    ).toEqual(['metadata']);
  });
});

describe('server limits', () => {
  const nested = (levels: number): JsonValue => {
    let value: JsonValue = 'leaf';
    for (let i = 0; i < levels; i += 1) {
      value = [value];
    }
    return value;
  };

  it('exports its defaults', () => {
    expect(DEFAULT_PROTO_JSON_LIMITS).toEqual({
      maxPartsPerMessage: 64,
      maxJsonDepth: 32,
      maxMetadataBytes: 65_536,
      maxTextPartLength: 1_048_576,
      maxIdLength: 512,
      maxViolations: 100,
    });
  });

  it('allows 64 parts and rejects 65 by default', () => {
    const parts = (n: number) => Array.from({ length: n }, () => ({ text: 'x' }));
    expect(decodeSendMessageRequest(sendWithParts(parts(64))).message.parts).toHaveLength(64);
    expect(violationsOf(() => decodeSendMessageRequest(sendWithParts(parts(65))))).toEqual([
      { field: 'message.parts', description: 'has 65 parts; at most 64 allowed' },
    ]);
  });

  it('applies a custom parts limit to artifacts too', () => {
    const artifact = { artifactId: 'a', parts: [{ text: '1' }, { text: '2' }, { text: '3' }] };
    expect(fieldsOf(() => decodeArtifact(artifact, { maxPartsPerMessage: 2 }))).toEqual(['parts']);
  });

  it('allows JSON nested 32 deep and rejects 33 in Value and Struct', () => {
    expect(decodeSendMessageRequest(sendWithParts([{ data: nested(32) }]))).toBeDefined();
    expect(
      violationsOf(() => decodeSendMessageRequest(sendWithParts([{ data: nested(33) }]))),
    ).toEqual([{ field: 'message.parts[0].data', description: 'nests deeper than 32 levels' }]);
    expect(
      fieldsOf(() =>
        decodeCancelTaskRequest({ id: 't', metadata: { deep: nested(3) } }, { maxJsonDepth: 3 }),
      ),
    ).toEqual(['metadata']);
  });

  it('rejects metadata larger than 64 KiB', () => {
    const metadata = { blob: 'x'.repeat(64 * 1024) };
    expect(
      fieldsOf(() => decodeSendMessageRequest({ message: userMessage({ metadata }) })),
    ).toEqual(['message.metadata']);
    expect(
      decodeCancelTaskRequest(
        { id: 't', metadata: { blob: 'x'.repeat(1000) } },
        { maxMetadataBytes: 2000 },
      ),
    ).toBeDefined();
  });

  it('rejects a text part longer than 1 MiB', () => {
    const text = 'x'.repeat(1024 * 1024 + 1);
    expect(violationsOf(() => decodeSendMessageRequest(sendWithParts([{ text }])))).toEqual([
      {
        field: 'message.parts[0].text',
        description: 'is 1048577 characters long; at most 1048576 allowed',
      },
    ]);
    expect(
      fieldsOf(() =>
        decodeMessage(userMessage({ parts: [{ text: 'abc' }] }), { maxTextPartLength: 2 }),
      ),
    ).toEqual(['parts[0].text']);
  });

  it('lists at most maxViolations violations and summarises the rest', () => {
    const violations = violationsOf(() =>
      decodeMessage(userMessage({ extensions: [1, 2, 3, 4, 5] }), { maxViolations: 2 }),
    );
    expect(violations.map((v) => v.field)).toEqual(['extensions[0]', 'extensions[1]', '']);
    expect(violations[2]?.description).toBe('3 further violations not listed');
  });
});

describe('generic decode over a custom descriptor', () => {
  const scopes: MessageDescriptor = {
    name: 'Flow',
    fields: [
      {
        proto: 'scopes',
        json: 'scopes',
        kind: { type: 'string' },
        cardinality: 'map',
        required: true,
      },
    ],
  };

  it('decodes map<string, string> fields as objects', () => {
    expect(decode(scopes, { scopes: { read: 'Read', write: 'Write' } }, 'flow')).toEqual({
      scopes: { read: 'Read', write: 'Write' },
    });
  });

  it('reports map entries by key under the given root path', () => {
    expect(fieldsOf(() => decode(scopes, { scopes: { read: 1, write: null } }, 'flow'))).toEqual([
      'flow.scopes["read"]',
      'flow.scopes["write"]',
    ]);
    expect(fieldsOf(() => decode(scopes, { scopes: {} }, 'flow'))).toEqual(['flow.scopes']);
    expect(fieldsOf(() => decode(scopes, { scopes: ['read'] }, 'flow'))).toEqual(['flow.scopes']);
  });
});

describe('list page tokens (§10.7)', () => {
  it('round-trips a cursor through an opaque base64url token', () => {
    const cursor = { statusTimestamp: '2026-01-01T00:00:00.000Z', taskId: 'task-ü-1' };
    const token = encodeListPageToken(cursor);
    expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeListPageToken(token)).toEqual(cursor);
  });

  it.each([
    [''],
    ['%%%'],
    [Buffer.from('not json').toString('base64url')],
    [Buffer.from('{"v":2,"ts":"2026-01-01T00:00:00.000Z","id":"t"}').toString('base64url')],
    [Buffer.from('{"v":1,"ts":"yesterday","id":"t"}').toString('base64url')],
    [Buffer.from('{"v":1,"ts":"2026-01-01T00:00:00.000Z","id":""}').toString('base64url')],
    [Buffer.from('[1]').toString('base64url')],
  ])('rejects the malformed token %j with field pageToken', (token) => {
    expect(fieldsOf(() => decodeListPageToken(token))).toEqual(['pageToken']);
  });
});

describe('history and artifact shaping (§10.5, §10.7)', () => {
  const message = (id: string): Message => ({
    messageId: id,
    role: 'ROLE_USER',
    parts: [{ text: id }],
  });
  const task: Task = {
    id: 't1',
    contextId: 'c1',
    status: { state: 'TASK_STATE_COMPLETED' },
    history: [message('m1'), message('m2'), message('m3')],
    artifacts: [{ artifactId: 'a1', parts: [{ text: 'r' }] }],
  };

  it('leaves the task unchanged when historyLength is unset', () => {
    expect(applyHistoryLength(task, undefined)).toBe(task);
  });

  it('removes the history key for historyLength 0', () => {
    const trimmed = applyHistoryLength(task, 0);
    expect('history' in trimmed).toBe(false);
    expect(task.history).toHaveLength(3);
  });

  it('keeps the N most recent messages', () => {
    expect(applyHistoryLength(task, 2).history?.map((m) => m.messageId)).toEqual(['m2', 'm3']);
    expect(applyHistoryLength(task, 10).history).toHaveLength(3);
  });

  it('does not add a history key to a task without one', () => {
    const { history: _history, ...bare } = task;
    expect('history' in applyHistoryLength(bare, 5)).toBe(false);
  });

  it('rejects a negative historyLength', () => {
    expect(fieldsOf(() => applyHistoryLength(task, -1))).toEqual(['historyLength']);
  });

  it('removes the artifacts key without touching the input', () => {
    const bare = withoutArtifacts(task);
    expect('artifacts' in bare).toBe(false);
    expect(bare.history).toBe(task.history);
    expect(task.artifacts).toHaveLength(1);
  });
});

describe('push notification configs (§4.4)', () => {
  it('decodes a snake_case create request', () => {
    const config: TaskPushNotificationConfig = decodeTaskPushNotificationConfig({
      task_id: 't1',
      url: 'https://hooks.example/a2a',
      authentication: { scheme: 'Bearer', credentials: 'x' },
    });
    expect(config).toEqual({
      taskId: 't1',
      url: 'https://hooks.example/a2a',
      authentication: { scheme: 'Bearer', credentials: 'x' },
    });
  });

  it('decodes get and delete requests where id is the config id', () => {
    const input = { tenant: 'acme', task_id: 't1', id: 'cfg-1' };
    const expected = { tenant: 'acme', taskId: 't1', id: 'cfg-1' };
    expect(decodeGetTaskPushNotificationConfigRequest(input)).toEqual(expected);
    expect(decodeDeleteTaskPushNotificationConfigRequest(input)).toEqual(expected);
  });
});

describe('characters the store cannot hold', () => {
  it('rejects U+0000 in a text part, in metadata keys and in nested data values', () => {
    const message = (extra: Record<string, unknown>) => ({
      message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'ok' }], ...extra },
    });
    const paths = (input: unknown): string[] => {
      try {
        decodeSendMessageRequest(input);
        return [];
      } catch (error) {
        return (error as A2aError).fieldViolations.map((v) => v.field);
      }
    };
    expect(paths(message({ parts: [{ text: 'a\u0000b' }] }))).toEqual(['message.parts[0].text']);
    expect(paths(message({ metadata: { 'k\u0000': 1 } }))).toEqual(['message.metadata']);
    expect(paths(message({ parts: [{ data: { deep: ['x\u0000'] } }] }))).toEqual([
      'message.parts[0].data',
    ]);
    expect(paths(message({}))).toEqual([]);
  });
});

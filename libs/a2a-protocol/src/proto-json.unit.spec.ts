import { describe, expect, it } from 'vitest';
import {
  Artifact,
  ListTasksRequest,
  ListTasksResponse,
  Message,
  type MessageFns,
  Part,
  Role,
  SendMessageConfiguration,
  StreamResponse,
  Task,
  TaskState,
  TaskStatus,
} from './generated/lf/a2a/v1/a2a';
import { Assignment, PublishUpdateRequest } from './generated/platform/worker/v1/worker';

/** ProtoJSON → generated object → binary → generated object → ProtoJSON. */
function roundTrip<T>(fns: MessageFns<T>, json: unknown): unknown {
  const decoded = binaryRoundTrip(fns, fns.fromJSON(json));
  return fns.toJSON(decoded);
}

/** generated object → binary → generated object. */
function binaryRoundTrip<T>(fns: MessageFns<T>, value: T): T {
  const bytes = fns.encode(value).finish();
  expect(bytes).toBeInstanceOf(Uint8Array);
  return fns.decode(bytes);
}

const textPart = { text: 'Hello, agent' };
// "PNG\r\n" followed by 0x00 0xff: exercises non-ASCII bytes; standard alphabet with padding.
const rawBytes = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x00, 0xff]);
const rawPart = { raw: rawBytes.toString('base64'), filename: 'logo.png', mediaType: 'image/png' };
const urlPart = { url: 'https://files.example.com/report.pdf', mediaType: 'application/pdf' };
const dataPart = {
  data: {
    query: 'weather',
    limit: 3,
    ratio: 0.25,
    exact: true,
    nothing: null,
    tags: ['a', 'b', 7, false, null, { deep: [1, { deeper: 'yes' }] }],
    nested: { empty: {}, list: [] },
  },
  mediaType: 'application/json',
  metadata: { source: 'unit-test', weights: [1, 2, 3] },
};

const userMessage = {
  messageId: 'msg-user-1',
  contextId: 'ctx-1',
  taskId: 'task-1',
  role: 'ROLE_USER',
  parts: [textPart, rawPart, urlPart, dataPart],
  metadata: { 'https://ext.example.com/v1': { enabled: true } },
  extensions: ['https://ext.example.com/v1'],
  referenceTaskIds: ['task-0'],
};

const agentMessage = {
  messageId: 'msg-agent-1',
  contextId: 'ctx-1',
  taskId: 'task-1',
  role: 'ROLE_AGENT',
  parts: [{ text: 'Which city?' }],
};

const inputRequiredStatus = {
  state: 'TASK_STATE_INPUT_REQUIRED',
  message: agentMessage,
  timestamp: '2026-01-01T10:30:00.123Z',
};

const artifact = {
  artifactId: 'art-1',
  name: 'forecast',
  description: 'Three-day forecast',
  parts: [textPart, dataPart],
  metadata: { version: 2 },
  extensions: ['https://ext.example.com/v1'],
};

const task = {
  id: 'task-1',
  contextId: 'ctx-1',
  status: inputRequiredStatus,
  artifacts: [artifact],
  history: [userMessage, agentMessage],
  metadata: { priority: 'high', attempts: 1 },
};

describe('ProtoJSON round trip through binary (lf.a2a.v1)', () => {
  it.each([
    ['text', textPart],
    ['raw bytes (base64)', rawPart],
    ['url', urlPart],
    ['data with a nested JSON value', dataPart],
  ])('Part with %s content', (_kind, json) => {
    expect(roundTrip(Part, json)).toEqual(json);
  });

  it.each([
    ['string', 'just a string'],
    ['number', 42.5],
    ['boolean', false],
    ['array', [1, 'two', { three: 3 }, null]],
    ['empty object', {}],
  ])('Part.data holding a JSON %s', (_kind, value) => {
    const json = { data: value };
    expect(roundTrip(Part, json)).toEqual(json);
  });

  it('keeps the oneof member present even when it holds the default value', () => {
    expect(roundTrip(Part, { text: '' })).toEqual({ text: '' });
    expect(roundTrip(Part, { raw: '' })).toEqual({ raw: '' });
  });

  it('Part decodes raw bytes into a Buffer with the original content', () => {
    const part = Part.decode(Part.encode(Part.fromJSON(rawPart)).finish());
    expect(Buffer.isBuffer(part.raw)).toBe(true);
    expect(part.raw?.equals(rawBytes)).toBe(true);
    expect(part.text).toBeUndefined();
    expect(part.url).toBeUndefined();
    expect(part.data).toBeUndefined();
  });

  it('Message', () => {
    expect(roundTrip(Message, userMessage)).toEqual(userMessage);
    expect(roundTrip(Message, agentMessage)).toEqual(agentMessage);
  });

  it('TaskStatus', () => {
    expect(roundTrip(TaskStatus, inputRequiredStatus)).toEqual(inputRequiredStatus);
    const completed = { state: 'TASK_STATE_COMPLETED', timestamp: '2026-01-01T10:31:00.000Z' };
    expect(roundTrip(TaskStatus, completed)).toEqual(completed);
  });

  it('Artifact', () => {
    expect(roundTrip(Artifact, artifact)).toEqual(artifact);
  });

  it('Task', () => {
    expect(roundTrip(Task, task)).toEqual(task);
  });

  it.each([
    ['task', { task }],
    ['message', { message: agentMessage }],
    [
      'statusUpdate',
      {
        statusUpdate: {
          taskId: 'task-1',
          contextId: 'ctx-1',
          status: { state: 'TASK_STATE_WORKING', timestamp: '2026-01-01T10:30:01.000Z' },
          metadata: { step: 1 },
        },
      },
    ],
    [
      'artifactUpdate',
      {
        artifactUpdate: {
          taskId: 'task-1',
          contextId: 'ctx-1',
          artifact,
          append: true,
          lastChunk: true,
          metadata: { chunk: 3 },
        },
      },
    ],
  ])('StreamResponse with a %s payload', (_kind, json) => {
    expect(roundTrip(StreamResponse, json)).toEqual(json);
  });

  it('keeps explicitly-set proto3 `optional` fields even when they hold the default value', () => {
    const config = { acceptedOutputModes: ['text/plain'], historyLength: 0 };
    expect(roundTrip(SendMessageConfiguration, config)).toEqual(config);
    const list = {
      pageSize: 0,
      historyLength: 0,
      includeArtifacts: false,
      status: 'TASK_STATE_WORKING',
    };
    expect(roundTrip(ListTasksRequest, list)).toEqual(list);
    const unset = SendMessageConfiguration.fromJSON({});
    expect(unset.historyLength).toBeUndefined();
    expect(
      SendMessageConfiguration.toJSON(binaryRoundTrip(SendMessageConfiguration, unset)),
    ).toEqual({});
  });
});

describe('ProtoJSON representation of enums and timestamps', () => {
  it('renders enums as their full proto value names', () => {
    const status = TaskStatus.toJSON(TaskStatus.fromJSON(inputRequiredStatus)) as Record<
      string,
      unknown
    >;
    expect(status['state']).toBe('TASK_STATE_INPUT_REQUIRED');
    const message = Message.toJSON(Message.fromJSON(userMessage)) as Record<string, unknown>;
    expect(message['role']).toBe('ROLE_USER');
  });

  it('holds enums as string literals in the generated objects', () => {
    const decoded = binaryRoundTrip(Task, Task.fromJSON(task));
    expect(decoded.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(decoded.status?.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(decoded.history[0]?.role).toBe(Role.ROLE_USER);
    expect(typeof decoded.status?.state).toBe('string');
  });

  it('accepts enum numbers on input (ProtoJSON) and emits names', () => {
    const status = TaskStatus.fromJSON({ state: 3 });
    expect(status.state).toBe('TASK_STATE_COMPLETED');
    expect(TaskStatus.toJSON(status)).toEqual({ state: 'TASK_STATE_COMPLETED' });
  });

  it('rejects unknown enum names (unrecognizedEnum=false), including 0.3 spellings', () => {
    expect(() => TaskStatus.fromJSON({ state: 'completed' })).toThrow(/Unrecognized enum value/);
    expect(() => Message.fromJSON({ role: 'user' })).toThrow(/Unrecognized enum value/);
  });

  it('holds timestamps as ISO strings in objects and in JSON', () => {
    const decoded = binaryRoundTrip(TaskStatus, TaskStatus.fromJSON(inputRequiredStatus));
    expect(typeof decoded.timestamp).toBe('string');
    expect(decoded.timestamp).toBe('2026-01-01T10:30:00.123Z');
    const json = TaskStatus.toJSON(decoded) as Record<string, unknown>;
    expect(json['timestamp']).toBe('2026-01-01T10:30:00.123Z');
  });

  it('normalises timestamps to millisecond-precision UTC when they pass through binary', () => {
    // useDate=string converts through a JS Date on encode/decode: no fraction gains ".000", sub-millisecond
    // digits are truncated and offsets are converted to Z. A JSON-only pass keeps the string untouched.
    const cases: Array<[string, string]> = [
      ['2026-01-01T10:30:00Z', '2026-01-01T10:30:00.000Z'],
      ['2026-01-01T10:30:00.123456789Z', '2026-01-01T10:30:00.123Z'],
      ['2026-01-01T12:30:00+02:00', '2026-01-01T10:30:00.000Z'],
    ];
    for (const [input, output] of cases) {
      expect(roundTrip(TaskStatus, { state: 'TASK_STATE_WORKING', timestamp: input })).toEqual({
        state: 'TASK_STATE_WORKING',
        timestamp: output,
      });
      expect(TaskStatus.toJSON(TaskStatus.fromJSON({ timestamp: input }))).toEqual({
        timestamp: input,
      });
    }
  });
});

describe('documented ts-proto ProtoJSON deviations', () => {
  it('bytes: accepts unpadded and URL-safe base64, always emits padded standard base64', () => {
    expect(roundTrip(Part, { raw: 'aGk' })).toEqual({ raw: 'aGk=' });
    expect(roundTrip(Part, { raw: '-_8' })).toEqual({ raw: '+/8=' });
  });

  it('implicit-presence fields holding the default value are omitted on output, REQUIRED ones included', () => {
    // ProtoJSON behaviour; A2A wants REQUIRED fields (e.g. ListTasksResponse.nextPageToken) always emitted,
    // so the binding layer must add them back.
    const lastPage = { tasks: [], nextPageToken: '', pageSize: 50, totalSize: 0 };
    expect(roundTrip(ListTasksResponse, lastPage)).toEqual({ pageSize: 50 });
    const event = {
      artifactUpdate: { taskId: 't', contextId: 'c', artifact, append: false, lastChunk: false },
    };
    expect(roundTrip(StreamResponse, event)).toEqual({
      artifactUpdate: { taskId: 't', contextId: 'c', artifact },
    });
  });

  it('a top-level JSON null in Part.data is treated as "not set"', () => {
    // fromJSON uses isSet(), which is false for null, so {"data": null} loses its content member.
    expect(Part.fromJSON({ data: null }).data).toBeUndefined();
    expect(roundTrip(Part, { data: null })).toEqual({});
  });

  it('fromJSON reads lowerCamelCase keys only (snake_case input is ignored) and drops unknown keys', () => {
    const parsed = Message.fromJSON({
      message_id: 'm1',
      messageId: 'm2',
      kind: 'message',
      role: 'ROLE_USER',
    });
    expect(parsed.messageId).toBe('m2');
    expect(Message.fromJSON({ message_id: 'm1' }).messageId).toBe('');
    expect(Message.toJSON(parsed)).toEqual({ messageId: 'm2', role: 'ROLE_USER' });
  });
});

describe('platform.worker.v1 binary round trip', () => {
  it('Assignment', () => {
    const assignment = Assignment.fromPartial({
      taskId: 'task-1',
      contextId: 'ctx-1',
      leaseEpoch: 9_007_199_254_740_991, // Number.MAX_SAFE_INTEGER survives int64 as number
      leaseExpiresAt: '2026-01-01T10:31:00.500Z',
      task: Task.fromJSON(task),
      message: Message.fromJSON(userMessage),
      attempt: 2,
    });
    const decoded = binaryRoundTrip(Assignment, assignment);
    expect(decoded).toEqual(assignment);
    expect(typeof decoded.leaseEpoch).toBe('number');
    expect(decoded.message?.parts[1]?.raw?.equals(rawBytes)).toBe(true);
    expect(Task.toJSON(decoded.task as Task)).toEqual(task);
  });

  it.each([
    [
      'status',
      PublishUpdateRequest.fromPartial({
        taskId: 'task-1',
        leaseEpoch: 3,
        status: TaskStatus.fromJSON(inputRequiredStatus),
      }),
    ],
    [
      'message',
      PublishUpdateRequest.fromPartial({
        taskId: 'task-1',
        leaseEpoch: 3,
        message: Message.fromJSON(agentMessage),
      }),
    ],
    [
      'artifact',
      PublishUpdateRequest.fromPartial({
        taskId: 'task-1',
        leaseEpoch: 4,
        artifact: { artifact: Artifact.fromJSON(artifact), append: true, lastChunk: false },
      }),
    ],
  ])('PublishUpdateRequest with a %s update', (kind, request) => {
    const decoded = binaryRoundTrip(PublishUpdateRequest, request);
    expect(decoded).toEqual(request);
    const members = (['status', 'message', 'artifact'] as const).filter(
      (k) => decoded[k] !== undefined,
    );
    expect(members).toEqual([kind]);
  });
});

import { a2aPb, type Message, type Task, workerPb } from '@lib/a2a-protocol';
import { describe, expect, it } from 'vitest';
import { taskOf, toPublishUpdateRequest, userMessageOf } from './proto-codec';

const question: Message = {
  messageId: 'q',
  role: 'ROLE_AGENT',
  parts: [{ text: 'What is your name?' }],
};
const answer: Message = {
  messageId: 'a',
  taskId: 't',
  contextId: 'c',
  role: 'ROLE_USER',
  parts: [{ text: 'Ada' }, { raw: 'AQID', mediaType: 'application/octet-stream' }],
  metadata: { stepMs: 50 },
};
const task: Task = {
  id: 't',
  contextId: 'c',
  status: { state: 'TASK_STATE_WORKING', timestamp: '2025-01-01T00:00:00.000Z' },
  history: [{ ...answer, messageId: 'first' }, question, answer],
  artifacts: [{ artifactId: 'x', parts: [{ data: { ok: true } }] }],
};

function assignment(overrides: Partial<workerPb.Assignment> = {}): workerPb.Assignment {
  return {
    taskId: 't',
    contextId: 'c',
    leaseEpoch: 3,
    leaseExpiresAt: undefined,
    task: a2aPb.Task.fromJSON(task),
    message: a2aPb.Message.fromJSON(answer),
    attempt: 1,
    mayReply: false,
    traceparent: '',
    ...overrides,
  };
}

describe('toPublishUpdateRequest', () => {
  it('carries a status with its agent message', () => {
    const request = toPublishUpdateRequest(
      't',
      3,
      [
        {
          kind: 'status',
          status: { state: 'TASK_STATE_INPUT_REQUIRED', message: question },
        },
      ],
      'u1',
    );
    expect(request.taskId).toBe('t');
    expect(request.leaseEpoch).toBe(3);
    expect(request.updateId).toBe('u1');
    expect(request.message ?? request.artifact).toBeUndefined();
    expect(request.status?.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(a2aPb.Message.toJSON(request.status?.message ?? a2aPb.Message.create())).toEqual(
      question,
    );
  });

  it('carries an agent message', () => {
    const request = toPublishUpdateRequest('t', 3, [{ kind: 'message', message: question }], 'u1');
    expect(request.status ?? request.artifact).toBeUndefined();
    expect(request.message?.role).toBe('ROLE_AGENT');
  });

  it('carries an artifact chunk, defaulting append and lastChunk to false', () => {
    const artifact = { artifactId: 'countdown', name: 'countdown', parts: [{ text: '3' }] };
    const first = toPublishUpdateRequest('t', 3, [{ kind: 'artifact', artifact }], 'u1');
    expect(first.artifact?.append).toBe(false);
    expect(first.artifact?.lastChunk).toBe(false);
    expect(a2aPb.Artifact.toJSON(first.artifact?.artifact ?? a2aPb.Artifact.create())).toEqual(
      artifact,
    );
    const last = toPublishUpdateRequest(
      't',
      3,
      [
        {
          kind: 'artifact',
          artifact,
          append: true,
          lastChunk: true,
        },
      ],
      'u1',
    );
    expect(last.artifact).toMatchObject({ append: true, lastChunk: true });
  });

  it('survives the wire encoding', () => {
    const request = toPublishUpdateRequest('t', 7, [{ kind: 'message', message: answer }], 'u1');
    const decoded = workerPb.PublishUpdateRequest.decode(
      workerPb.PublishUpdateRequest.encode(request).finish(),
    );
    expect(a2aPb.Message.toJSON(decoded.message ?? a2aPb.Message.create())).toEqual(answer);
  });

  it('carries updates produced together in order, in `updates` only', () => {
    const artifact = { artifactId: 'echo', parts: [{ text: 'hi' }] };
    const request = toPublishUpdateRequest(
      't',
      7,
      [
        { kind: 'status', status: { state: 'TASK_STATE_WORKING' } },
        { kind: 'artifact', artifact, lastChunk: true },
        { kind: 'status', status: { state: 'TASK_STATE_COMPLETED' } },
      ],
      'u1',
    );
    expect(request.status ?? request.message ?? request.artifact).toBeUndefined();
    const decoded = workerPb.PublishUpdateRequest.decode(
      workerPb.PublishUpdateRequest.encode(request).finish(),
    );
    expect(decoded.updates.map((u) => u.status?.state ?? (u.artifact ? 'artifact' : '?'))).toEqual([
      a2aPb.TaskState.TASK_STATE_WORKING,
      'artifact',
      a2aPb.TaskState.TASK_STATE_COMPLETED,
    ]);
    expect(decoded.updates[1]?.artifact?.lastChunk).toBe(true);
  });
});

describe('taskOf and userMessageOf', () => {
  it('turn the assignment into the ProtoJSON model', () => {
    const a = assignment();
    expect(taskOf(a)).toEqual(task);
    expect(userMessageOf(a, taskOf(a))).toEqual(answer);
  });

  it('fall back to the last user message in history and to a bare task', () => {
    const withoutMessage = assignment({ message: undefined });
    expect(userMessageOf(withoutMessage, taskOf(withoutMessage))).toEqual(answer);
    const bare = assignment({ task: undefined, message: undefined });
    expect(taskOf(bare)).toEqual({
      id: 't',
      contextId: 'c',
      status: { state: 'TASK_STATE_UNSPECIFIED' },
    });
    expect(userMessageOf(bare, taskOf(bare))).toBeUndefined();
  });
});

import type { Artifact, Message, TaskStateName, TaskStatus } from '@lib/a2a-protocol';
import { describe, expect, it } from 'vitest';
import type { TaskEvent } from './task.events';
import {
  evolve,
  foldTask,
  initialTaskState,
  type PresentTask,
  type TaskAggregate,
} from './task.state';

const TASK_ID = 'tsk_1';
const CONTEXT_ID = 'ctx_1';
const SUBMITTED_AT = '2026-01-01T00:00:00.000Z';

function userMessage(messageId: string, text = messageId): Message {
  return {
    messageId,
    taskId: TASK_ID,
    contextId: CONTEXT_ID,
    role: 'ROLE_USER',
    parts: [{ text }],
  };
}

function agentMessage(messageId: string, text = messageId): Message {
  return {
    messageId,
    taskId: TASK_ID,
    contextId: CONTEXT_ID,
    role: 'ROLE_AGENT',
    parts: [{ text }],
  };
}

const submitted = (
  overrides: Partial<Extract<TaskEvent, { type: 'TaskSubmitted' }>['data']> = {},
) =>
  ({
    type: 'TaskSubmitted',
    data: {
      taskId: TASK_ID,
      contextId: CONTEXT_ID,
      agentId: 'agt_1',
      ownerId: 'usr_1',
      message: userMessage('m1'),
      submittedAt: SUBMITTED_AT,
      ...overrides,
    },
  }) satisfies TaskEvent;

const status = (state: TaskStateName, message?: Message, extra: Partial<TaskStatus> = {}) =>
  ({
    type: 'TaskStatusUpdated',
    data: {
      status: {
        state,
        ...(message ? { message } : {}),
        timestamp: '2026-01-01T00:01:00.000Z',
        ...extra,
      },
    },
  }) satisfies TaskEvent;

const leaseGranted = (leaseEpoch: number, attempt = 1, workerId = `wrk_${leaseEpoch}`) =>
  ({
    type: 'TaskLeaseGranted',
    data: { leaseEpoch, workerId, expiresAt: '2026-01-01T00:05:00.000Z', attempt },
  }) satisfies TaskEvent;

const leaseExpired = (leaseEpoch: number, workerId = `wrk_${leaseEpoch}`) =>
  ({ type: 'TaskLeaseExpired', data: { leaseEpoch, workerId } }) satisfies TaskEvent;

const chunk = (artifact: Artifact, append: boolean, lastChunk = false) =>
  ({ type: 'ArtifactChunkAppended', data: { artifact, append, lastChunk } }) satisfies TaskEvent;

const cancelRequested = (deadline = '2026-01-01T00:02:00.000Z') =>
  ({ type: 'TaskCancelRequested', data: { requestedBy: 'usr_1', deadline } }) satisfies TaskEvent;

function presentAfter(...events: TaskEvent[]): PresentTask {
  const state = foldTask(events);
  if (state.status !== 'present') {
    throw new Error('expected a present task');
  }
  return state;
}

describe('evolve: TaskSubmitted', () => {
  it('builds a SUBMITTED task whose history is the first message, queued at version 1', () => {
    const state = presentAfter(submitted());

    expect(state).toEqual({
      status: 'present',
      task: {
        id: TASK_ID,
        contextId: CONTEXT_ID,
        status: { state: 'TASK_STATE_SUBMITTED', timestamp: SUBMITTED_AT },
        history: [userMessage('m1')],
      },
      agentId: 'agt_1',
      ownerId: 'usr_1',
      version: 1,
      work: 'queued',
      lease: null,
      lastLeaseEpoch: 0,
      attempt: 1,
      cancel: null,
      answer: { kind: 'task' },
      pushConfigIds: [],
    } satisfies PresentTask);
  });

  it('keeps the request metadata on the task and omits the key when there is none', () => {
    expect(presentAfter(submitted({ metadata: { source: 'cli' } })).task.metadata).toEqual({
      source: 'cli',
    });
    expect('metadata' in presentAfter(submitted()).task).toBe(false);
  });

  it('starts from the absent state at version 0', () => {
    expect(initialTaskState()).toEqual({ status: 'absent', version: 0 });
  });
});

describe('evolve: version (the task generation)', () => {
  it('increments by exactly 1 for every event after TaskSubmitted, ignored ones included', () => {
    const events: TaskEvent[] = [
      submitted(),
      leaseGranted(1),
      status('TASK_STATE_WORKING', agentMessage('s1')),
      { type: 'AgentMessageAppended', data: { message: agentMessage('a1') } },
      chunk({ artifactId: 'art', parts: [{ text: 'x' }] }, false),
      chunk({ artifactId: 'art', parts: [{ text: 'y' }] }, true, true),
      cancelRequested(),
      leaseExpired(7), // stale epoch: ignored except for the version
      leaseExpired(1),
      leaseGranted(2, 2),
      status('TASK_STATE_INPUT_REQUIRED', agentMessage('q1')),
      { type: 'UserMessageAppended', data: { message: userMessage('m2') } },
      status('TASK_STATE_WORKING'),
      status('TASK_STATE_COMPLETED'),
    ];

    let state: TaskAggregate = initialTaskState();
    events.forEach((event, index) => {
      const before = state.version;
      state = evolve(state, event);
      expect(state.version, `after ${event.type} #${index + 1}`).toBe(before + 1);
      expect(state.version).toBe(index + 1);
    });
    expect(foldTask(events).version).toBe(events.length);
  });
});

describe('evolve: TaskStatusUpdated', () => {
  it('replaces the status and moves the previous status message into history', () => {
    const s1 = agentMessage('s1');
    const s2 = agentMessage('s2');

    const afterFirst = presentAfter(submitted(), leaseGranted(1), status('TASK_STATE_WORKING', s1));
    expect(afterFirst.task.status.message).toEqual(s1);
    expect(afterFirst.task.history).toEqual([userMessage('m1')]);

    const afterSecond = evolve(afterFirst, status('TASK_STATE_INPUT_REQUIRED', s2)) as PresentTask;
    expect(afterSecond.task.status).toEqual(status('TASK_STATE_INPUT_REQUIRED', s2).data.status);
    expect(afterSecond.task.history).toEqual([userMessage('m1'), s1]);
  });

  it('adds nothing to history when the previous status had no message', () => {
    const state = presentAfter(
      submitted(),
      leaseGranted(1),
      status('TASK_STATE_WORKING'),
      status('TASK_STATE_WORKING', agentMessage('s1')),
    );
    expect(state.task.history).toEqual([userMessage('m1')]);
  });

  it('merges the event metadata into the task metadata', () => {
    const state = presentAfter(submitted({ metadata: { a: 1, b: 1 } }), {
      type: 'TaskStatusUpdated',
      data: { status: { state: 'TASK_STATE_WORKING' }, metadata: { b: 2, c: 3 } },
    });
    expect(state.task.metadata).toEqual({ a: 1, b: 2, c: 3 });
  });

  it.each<TaskStateName>([
    'TASK_STATE_COMPLETED',
    'TASK_STATE_FAILED',
    'TASK_STATE_CANCELED',
    'TASK_STATE_REJECTED',
    'TASK_STATE_INPUT_REQUIRED',
    'TASK_STATE_AUTH_REQUIRED',
  ])('%s ends the current work: lease and pending cancel cleared, work idle (§10.3)', (state) => {
    const leased = presentAfter(submitted(), leaseGranted(3), cancelRequested());
    expect(leased.lease?.epoch).toBe(3);

    const next = evolve(leased, status(state)) as PresentTask;

    expect(next.task.status.state).toBe(state);
    expect(next.lease).toBeNull();
    expect(next.work).toBe('idle');
    expect(next.cancel).toBeNull();
    expect(next.lastLeaseEpoch).toBe(3);
  });

  it('WORKING keeps the lease, the pending cancel and the work status', () => {
    const leased = presentAfter(submitted(), leaseGranted(1), cancelRequested());
    const next = evolve(leased, status('TASK_STATE_WORKING')) as PresentTask;
    expect(next.work).toBe('leased');
    expect(next.lease).toEqual(leased.lease);
    expect(next.cancel).toEqual(leased.cancel);
  });
});

describe('evolve: ArtifactChunkAppended (chunked artifacts, §10.6)', () => {
  it('adds an artifact with a new id', () => {
    const artifact: Artifact = { artifactId: 'a', name: 'report', parts: [{ text: 'one' }] };
    const state = presentAfter(submitted(), chunk(artifact, false));
    expect(state.task.artifacts).toEqual([artifact]);
  });

  it('treats append to an id it has not seen as a new artifact', () => {
    const artifact: Artifact = { artifactId: 'a', parts: [{ text: 'one' }] };
    expect(presentAfter(submitted(), chunk(artifact, true)).task.artifacts).toEqual([artifact]);
  });

  it('replaces the artifact with the same id when append is false', () => {
    const first: Artifact = {
      artifactId: 'a',
      name: 'v1',
      parts: [{ text: 'one' }],
      metadata: { k: 1 },
    };
    const second: Artifact = { artifactId: 'a', name: 'v2', parts: [{ text: 'two' }] };
    const state = presentAfter(submitted(), chunk(first, false), chunk(second, false));
    expect(state.task.artifacts).toEqual([second]);
  });

  it('concatenates parts and merges metadata when append is true', () => {
    const first: Artifact = {
      artifactId: 'a',
      name: 'report',
      parts: [{ text: 'one' }],
      metadata: { k: 1, keep: true },
    };
    const second: Artifact = {
      artifactId: 'a',
      parts: [{ text: 'two' }, { data: { n: 2 } }],
      metadata: { k: 2, added: 'x' },
    };
    const state = presentAfter(submitted(), chunk(first, false), chunk(second, true, true));
    expect(state.task.artifacts).toEqual([
      {
        artifactId: 'a',
        name: 'report',
        parts: [{ text: 'one' }, { text: 'two' }, { data: { n: 2 } }],
        metadata: { k: 2, keep: true, added: 'x' },
      },
    ]);
  });

  it('keeps the first-seen order of several artifacts across appends and replacements', () => {
    const state = presentAfter(
      submitted(),
      chunk({ artifactId: 'a', parts: [{ text: 'a1' }] }, false),
      chunk({ artifactId: 'b', parts: [{ text: 'b1' }] }, false),
      chunk({ artifactId: 'c', parts: [{ text: 'c1' }] }, false),
      chunk({ artifactId: 'a', parts: [{ text: 'a2' }] }, true),
      chunk({ artifactId: 'b', parts: [{ text: 'B' }] }, false),
      chunk({ artifactId: 'c', parts: [{ text: 'c2' }] }, true, true),
    );
    expect(state.task.artifacts).toEqual([
      { artifactId: 'a', parts: [{ text: 'a1' }, { text: 'a2' }] },
      { artifactId: 'b', parts: [{ text: 'B' }] },
      { artifactId: 'c', parts: [{ text: 'c1' }, { text: 'c2' }] },
    ]);
  });
});

describe('evolve: leases', () => {
  it('TaskLeaseGranted leases the work to the worker and records epoch and attempt', () => {
    const state = presentAfter(submitted(), leaseGranted(4, 2, 'wrk_a'));
    expect(state.work).toBe('leased');
    expect(state.lease).toEqual({
      epoch: 4,
      workerId: 'wrk_a',
      expiresAt: '2026-01-01T00:05:00.000Z',
    });
    expect(state.lastLeaseEpoch).toBe(4);
    expect(state.attempt).toBe(2);
  });

  it('lastLeaseEpoch never goes down, even if an older grant is folded later', () => {
    const state = presentAfter(submitted(), leaseGranted(5), leaseExpired(5), leaseGranted(2));
    expect(state.lastLeaseEpoch).toBe(5);
  });

  it('TaskLeaseExpired for the current epoch re-queues the work with the next attempt', () => {
    const state = presentAfter(submitted(), leaseGranted(1), leaseExpired(1));
    expect(state.lease).toBeNull();
    expect(state.work).toBe('queued');
    expect(state.attempt).toBe(2);
    expect(state.lastLeaseEpoch).toBe(1);
  });

  it('TaskLeaseExpired with a stale epoch changes nothing but the version', () => {
    const before = presentAfter(submitted(), leaseGranted(1), leaseExpired(1), leaseGranted(2, 2));
    const after = evolve(before, leaseExpired(1));
    expect(after).toEqual({ ...before, version: before.version + 1 });
  });
});

describe('evolve: messages and cancel requests', () => {
  it('UserMessageAppended adds the message to history and re-queues the work with attempt 1', () => {
    const interrupted = presentAfter(
      submitted(),
      leaseGranted(1),
      leaseExpired(1),
      leaseGranted(2, 2),
      status('TASK_STATE_INPUT_REQUIRED'),
    );
    expect(interrupted.attempt).toBe(2);
    expect(interrupted.work).toBe('idle');

    const next = evolve(interrupted, {
      type: 'UserMessageAppended',
      data: { message: userMessage('m2') },
    }) as PresentTask;

    expect(next.work).toBe('queued');
    expect(next.attempt).toBe(1);
    expect(next.task.history).toEqual([userMessage('m1'), userMessage('m2')]);
    expect(next.lastLeaseEpoch).toBe(2);
  });

  it("keeps the agent's question before the user's answer when an interrupted task resumes", () => {
    const question = agentMessage('q1', 'Which city?');
    const answer = userMessage('m2', 'Paris');
    const state = presentAfter(
      submitted(),
      leaseGranted(1),
      status('TASK_STATE_INPUT_REQUIRED', question),
      { type: 'UserMessageAppended', data: { message: answer } },
      status('TASK_STATE_WORKING'),
    );
    expect(state.task.history).toEqual([userMessage('m1'), question, answer]);
    expect(state.task.status).toEqual(status('TASK_STATE_WORKING').data.status);
  });

  it('AgentMessageAppended adds the message to history without touching the work', () => {
    const leased = presentAfter(submitted(), leaseGranted(1));
    const next = evolve(leased, {
      type: 'AgentMessageAppended',
      data: { message: agentMessage('a1') },
    }) as PresentTask;
    expect(next.task.history).toEqual([userMessage('m1'), agentMessage('a1')]);
    expect(next.work).toBe('leased');
    expect(next.lease).toEqual(leased.lease);
  });

  it('TaskCancelRequested records who asked and the deadline', () => {
    const state = presentAfter(
      submitted(),
      leaseGranted(1),
      cancelRequested('2026-01-01T00:09:00Z'),
    );
    expect(state.cancel).toEqual({ requestedBy: 'usr_1', deadline: '2026-01-01T00:09:00Z' });
    expect(state.work).toBe('leased');
  });
});

describe('evolve: events it cannot apply', () => {
  it.each<TaskEvent>([
    status('TASK_STATE_WORKING'),
    leaseGranted(1),
    leaseExpired(1),
    cancelRequested(),
    chunk({ artifactId: 'a', parts: [] }, false),
    { type: 'UserMessageAppended', data: { message: userMessage('m') } },
    { type: 'AgentMessageAppended', data: { message: agentMessage('m') } },
  ])('ignores $type on an absent task', (event) => {
    const absent = initialTaskState();
    expect(evolve(absent, event)).toEqual({ status: 'absent', version: 0 });
  });

  it('ignores a second TaskSubmitted: the task is kept, only the version counts the event', () => {
    const state = presentAfter(submitted(), leaseGranted(1), status('TASK_STATE_WORKING'));
    const next = evolve(
      state,
      submitted({ taskId: 'other', contextId: 'other', message: userMessage('x') }),
    );
    expect(next).toEqual({ ...state, version: state.version + 1 });
  });

  it('ignores an event type it does not know (written by newer code) without throwing', () => {
    const state = presentAfter(submitted(), status('TASK_STATE_WORKING'));
    const unknown = { type: 'SomethingNew', data: {} } as unknown as Parameters<typeof evolve>[1];
    expect(evolve(state, unknown)).toEqual({ ...state, version: state.version + 1 });
  });

  it('does not mutate the state it is given', () => {
    const state = presentAfter(
      submitted(),
      leaseGranted(1),
      status('TASK_STATE_WORKING', agentMessage('s1')),
      chunk({ artifactId: 'a', parts: [{ text: '1' }] }, false),
    );
    const snapshot = structuredClone(state);
    evolve(state, chunk({ artifactId: 'a', parts: [{ text: '2' }] }, true));
    evolve(state, status('TASK_STATE_COMPLETED', agentMessage('done')));
    evolve(state, { type: 'AgentMessageAppended', data: { message: agentMessage('a1') } });
    expect(state).toEqual(snapshot);
  });
});

describe('foldTask', () => {
  it('equals evolving event by event, and can continue from an earlier state', () => {
    const head: TaskEvent[] = [submitted(), leaseGranted(1)];
    const tail: TaskEvent[] = [status('TASK_STATE_WORKING'), status('TASK_STATE_COMPLETED')];
    const stepwise = [...head, ...tail].reduce<TaskAggregate>(
      (s, e) => evolve(s, e),
      initialTaskState(),
    );
    expect(foldTask([...head, ...tail])).toEqual(stepwise);
    expect(foldTask(tail, foldTask(head))).toEqual(stepwise);
  });

  it('returns the absent state for an empty stream', () => {
    expect(foldTask([])).toEqual(initialTaskState());
  });
});

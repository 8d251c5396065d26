import {
  A2aError,
  isTerminalState,
  type Artifact,
  type ErrorReason,
  type JsonObject,
  type Message,
  type TaskStateName,
} from '@lib/a2a-protocol';
import { describe, expect, it } from 'vitest';
import type { LeasePolicy, TaskCommand, WorkerUpdate } from './task.commands';
import { decide, decideAll } from './task.decide';
import { WorkerUpdateRejected, type WorkerErrorReason } from './task.errors';
import type { TaskEvent } from './task.events';
import { evolve, foldTask, initialTaskState, type TaskAggregate } from './task.state';
import { toStreamResponse } from './task.stream-response';

// ---------------------------------------------------------------------------------------------
// Fixtures

const TASK_ID = 'tsk_1';
const CONTEXT_ID = 'ctx_1';
const T0 = new Date('2026-01-01T00:00:00.000Z');
const NOW = new Date('2026-01-01T00:10:00.000Z');
const at = (ms: number): Date => new Date(NOW.getTime() + ms);

const TERMINAL: readonly TaskStateName[] = [
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_REJECTED',
];
const INTERRUPTED: readonly TaskStateName[] = [
  'TASK_STATE_INPUT_REQUIRED',
  'TASK_STATE_AUTH_REQUIRED',
];

function message(role: Message['role'], messageId: string, extra: Partial<Message> = {}): Message {
  return { messageId, role, parts: [{ text: messageId }], ...extra };
}

/** The task's first event; `mayReply` makes it an exchange the agent may answer with a bare Message. */
const submittedEvent = (extra: { mayReply?: true } = {}): TaskEvent => ({
  type: 'TaskSubmitted',
  data: {
    taskId: TASK_ID,
    contextId: CONTEXT_ID,
    agentId: 'agt_1',
    ownerId: 'usr_1',
    message: message('ROLE_USER', 'm1', { taskId: TASK_ID, contextId: CONTEXT_ID }),
    submittedAt: T0.toISOString(),
    ...extra,
  },
});

const submitted = submittedEvent();

const statusUpdated = (state: TaskStateName, msg?: Message, when: Date = NOW): TaskEvent => ({
  type: 'TaskStatusUpdated',
  data: {
    status: { state, ...(msg ? { message: msg } : {}), timestamp: when.toISOString() },
  },
});

const leaseGranted = (leaseEpoch: number, attempt = 1, workerId = 'wrk_1'): TaskEvent => ({
  type: 'TaskLeaseGranted',
  data: { leaseEpoch, workerId, expiresAt: at(60_000).toISOString(), attempt },
});

const leaseExpired = (leaseEpoch: number, workerId = 'wrk_1'): TaskEvent => ({
  type: 'TaskLeaseExpired',
  data: { leaseEpoch, workerId },
});

const cancelRequested = (deadline: Date): TaskEvent => ({
  type: 'TaskCancelRequested',
  data: { requestedBy: 'usr_1', deadline: deadline.toISOString() },
});

const artifactChunk = (artifact: Artifact, append = false): TaskEvent => ({
  type: 'ArtifactChunkAppended',
  data: { artifact, append, lastChunk: false },
});

/** The stream of a task that reached `state` through a worker holding lease 1. */
function reached(state: TaskStateName): TaskEvent[] {
  if (state === 'TASK_STATE_SUBMITTED') {
    return [submitted];
  }
  return [submitted, leaseGranted(1), statusUpdated(state)];
}

const REDISPATCH: LeasePolicy = { onLeaseLost: 'redispatch', maxAttempts: 3 };
const FAIL: LeasePolicy = { onLeaseLost: 'fail', maxAttempts: 3 };

const workerUpdate = (leaseEpoch: number, update: WorkerUpdate): TaskCommand => ({
  type: 'ApplyWorkerUpdate',
  leaseEpoch,
  update,
  now: NOW,
});

const requestCancel = (now: Date = NOW, metadata?: JsonObject): TaskCommand => ({
  type: 'RequestCancel',
  requestedBy: 'usr_2',
  cancelGraceMs: 30_000,
  ...(metadata ? { metadata } : {}),
  now,
});

const expireLease = (leaseEpoch: number, policy: LeasePolicy = REDISPATCH): TaskCommand => ({
  type: 'ExpireLease',
  leaseEpoch,
  policy,
  messageId: 'msg_lost',
  now: NOW,
});

// ---------------------------------------------------------------------------------------------
// given / when / then

type AnyReason = ErrorReason | WorkerErrorReason;

function given(...events: TaskEvent[]) {
  const state = foldTask(events);
  return {
    state,
    when(command: TaskCommand) {
      return {
        then(expected: TaskEvent[]): TaskAggregate {
          const produced = decide(command, state);
          expect(produced).toEqual(expected);
          return foldTask(produced, state);
        },
        thenError(reason: AnyReason): A2aError | WorkerUpdateRejected {
          let caught: unknown;
          try {
            decide(command, state);
          } catch (error) {
            caught = error;
          }
          expect(caught, `expected ${command.type} to fail with ${reason}`).toBeDefined();
          if (!(caught instanceof A2aError || caught instanceof WorkerUpdateRejected)) {
            throw caught;
          }
          expect(caught.reason).toBe(reason);
          return caught;
        },
      };
    },
  };
}

// ---------------------------------------------------------------------------------------------

describe('decide SubmitTask', () => {
  it('submits the task and fills taskId and contextId into the first message', () => {
    given()
      .when({
        type: 'SubmitTask',
        taskId: TASK_ID,
        contextId: CONTEXT_ID,
        agentId: 'agt_1',
        ownerId: 'usr_1',
        message: message('ROLE_USER', 'm1'),
        metadata: { trace: 'x' },
        now: T0,
      })
      .then([
        {
          type: 'TaskSubmitted',
          data: {
            taskId: TASK_ID,
            contextId: CONTEXT_ID,
            agentId: 'agt_1',
            ownerId: 'usr_1',
            message: message('ROLE_USER', 'm1', { taskId: TASK_ID, contextId: CONTEXT_ID }),
            metadata: { trace: 'x' },
            submittedAt: T0.toISOString(),
          },
        },
      ]);
  });

  it('records the output modes the request accepts, and none for an empty list', () => {
    const submit = (acceptedOutputModes: string[]): TaskCommand => ({
      type: 'SubmitTask',
      taskId: TASK_ID,
      contextId: CONTEXT_ID,
      agentId: 'agt_1',
      ownerId: 'usr_1',
      message: message('ROLE_USER', 'm1'),
      acceptedOutputModes,
      now: T0,
    });
    const [named] = decide(submit(['text/plain']), initialTaskState());
    expect(named?.type === 'TaskSubmitted' && named.data.acceptedOutputModes).toEqual([
      'text/plain',
    ]);
    const [none] = decide(submit([]), initialTaskState());
    expect(none?.type === 'TaskSubmitted' && 'acceptedOutputModes' in none.data).toBe(false);
  });

  it('refuses to submit a task id that already has a stream', () => {
    given(submitted)
      .when({
        type: 'SubmitTask',
        taskId: TASK_ID,
        contextId: CONTEXT_ID,
        agentId: 'agt_1',
        ownerId: 'usr_1',
        message: message('ROLE_USER', 'm9'),
        now: NOW,
      })
      .thenError('INTERNAL');
  });
});

describe('decide AppendUserMessage', () => {
  const append = (extra: Partial<Message> = {}): TaskCommand => ({
    type: 'AppendUserMessage',
    message: message('ROLE_USER', 'm2', { taskId: TASK_ID, contextId: CONTEXT_ID, ...extra }),
    now: NOW,
  });

  it('fails with TASK_NOT_FOUND for an unknown task (§10.3)', () => {
    const error = given().when(append()).thenError('TASK_NOT_FOUND');
    expect((error as A2aError).metadata).toEqual({ taskId: TASK_ID });
  });

  it.each(TERMINAL)('fails with UNSUPPORTED_OPERATION on a %s task (§10.3)', (state) => {
    given(...reached(state))
      .when(append())
      .thenError('UNSUPPORTED_OPERATION');
  });

  it("fails with INVALID_PARAMS on message.contextId when it is not the task's context (§10.3)", () => {
    const error = given(...reached('TASK_STATE_INPUT_REQUIRED'))
      .when(append({ contextId: 'ctx_other' }))
      .thenError('INVALID_PARAMS') as A2aError;
    expect(error.fieldViolations).toHaveLength(1);
    expect(error.fieldViolations[0]?.field).toBe('message.contextId');
  });

  it.each<TaskStateName>(['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING'])(
    'fails with UNSUPPORTED_OPERATION while the task is %s: it is not waiting for input',
    (state) => {
      given(...reached(state))
        .when(append())
        .thenError('UNSUPPORTED_OPERATION');
    },
  );

  it.each(INTERRUPTED)(
    'on a %s task appends the message and sets WORKING (§10.3 continuing)',
    (state) => {
      given(...reached(state))
        .when(append())
        .then([
          {
            type: 'UserMessageAppended',
            data: {
              message: message('ROLE_USER', 'm2', { taskId: TASK_ID, contextId: CONTEXT_ID }),
            },
          },
          statusUpdated('TASK_STATE_WORKING'),
        ]);
    },
  );

  it('records the output modes the continuing request accepts', () => {
    given(...reached('TASK_STATE_INPUT_REQUIRED'))
      .when({ ...append(), acceptedOutputModes: ['application/json'] } as TaskCommand)
      .then([
        {
          type: 'UserMessageAppended',
          data: {
            message: message('ROLE_USER', 'm2', { taskId: TASK_ID, contextId: CONTEXT_ID }),
            acceptedOutputModes: ['application/json'],
          },
        },
        statusUpdated('TASK_STATE_WORKING'),
      ]);
  });

  it('infers the contextId from the task when the message has only the taskId (§10.3)', () => {
    const after = given(...reached('TASK_STATE_INPUT_REQUIRED'))
      .when({
        type: 'AppendUserMessage',
        message: message('ROLE_USER', 'm2', { taskId: TASK_ID }),
        now: NOW,
      })
      .then([
        {
          type: 'UserMessageAppended',
          data: {
            message: message('ROLE_USER', 'm2', { taskId: TASK_ID, contextId: CONTEXT_ID }),
          },
        },
        statusUpdated('TASK_STATE_WORKING'),
      ]);
    expect(after.status === 'present' && after.work).toBe('queued');
  });
});

describe('decide GrantLease', () => {
  const grant = (now: Date = NOW, workerId = 'wrk_9'): TaskCommand => ({
    type: 'GrantLease',
    workerId,
    leaseTtlMs: 45_000,
    now,
  });

  it('leases queued work with epoch last+1, expiresAt now+ttl and the current attempt', () => {
    given(submitted, leaseGranted(1), leaseExpired(1), leaseGranted(2, 2), leaseExpired(2))
      .when(grant())
      .then([
        {
          type: 'TaskLeaseGranted',
          data: {
            leaseEpoch: 3,
            workerId: 'wrk_9',
            expiresAt: at(45_000).toISOString(),
            attempt: 3,
          },
        },
      ]);
  });

  it('grants epoch 1 to a freshly submitted task', () => {
    given(submitted)
      .when(grant())
      .then([
        {
          type: 'TaskLeaseGranted',
          data: {
            leaseEpoch: 1,
            workerId: 'wrk_9',
            expiresAt: at(45_000).toISOString(),
            attempt: 1,
          },
        },
      ]);
  });

  it.each<[string, TaskEvent[]]>([
    ['already leased', [submitted, leaseGranted(1)]],
    ['waiting for input', reached('TASK_STATE_INPUT_REQUIRED')],
    ['completed', reached('TASK_STATE_COMPLETED')],
    ['canceled before dispatch', [submitted, statusUpdated('TASK_STATE_CANCELED')]],
  ])('grants nothing when the work is not queued (%s)', (_label, events) => {
    given(...events)
      .when(grant())
      .then([]);
  });

  it('fails with TASK_NOT_FOUND for an unknown task', () => {
    given().when(grant()).thenError('TASK_NOT_FOUND');
  });

  it('only ever grows the epoch across expiry and regrant', () => {
    let state = foldTask([submitted]);
    const epochs: number[] = [];
    for (let i = 0; i < 5; i++) {
      const granted = decide(grant(at(i * 1000), `wrk_${i}`), state);
      expect(granted).toHaveLength(1);
      state = foldTask(granted, state);
      const epoch = state.status === 'present' ? state.lease?.epoch : undefined;
      expect(epoch).toBeDefined();
      epochs.push(epoch as number);
      state = foldTask(
        decide(expireLease(epoch as number, { ...REDISPATCH, maxAttempts: 99 }), state),
        state,
      );
    }
    expect(epochs).toEqual([1, 2, 3, 4, 5]);
  });
});

describe('decide ApplyWorkerUpdate', () => {
  const leased = [submitted, leaseGranted(1)];
  const working = [...leased, statusUpdated('TASK_STATE_WORKING')];

  it.each<[string, TaskEvent[], number]>([
    ['the task does not exist', [], 1],
    ['the work is queued and nobody holds a lease', [submitted], 1],
    ['the lease epoch was superseded', [...leased, leaseExpired(1), leaseGranted(2, 2)], 1],
    ['the epoch was never granted', leased, 2],
    ['the task ended and its lease with it', [...leased, statusUpdated('TASK_STATE_COMPLETED')], 1],
  ])('rejects the update with LEASE_LOST when %s', (_label, events, epoch) => {
    const error = given(...events)
      .when(workerUpdate(epoch, { kind: 'status', status: { state: 'TASK_STATE_WORKING' } }))
      .thenError('LEASE_LOST');
    expect(error).toBeInstanceOf(WorkerUpdateRejected);
  });

  it.each<TaskStateName>(['TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_AUTH_REQUIRED'])(
    'ends the task CANCELED when the worker reports %s while a cancel is pending (§10.8)',
    (state) => {
      const after = given(...working, cancelRequested(at(30_000)))
        .when(workerUpdate(1, { kind: 'status', status: { state } }))
        .then([statusUpdated(state), statusUpdated('TASK_STATE_CANCELED')]);
      expect(after.status === 'present' && after.task.status.state).toBe('TASK_STATE_CANCELED');
    },
  );

  it.each<[TaskStateName, TaskStateName]>([
    ['TASK_STATE_WORKING', 'TASK_STATE_SUBMITTED'],
    ['TASK_STATE_WORKING', 'TASK_STATE_UNSPECIFIED'],
    ['TASK_STATE_SUBMITTED', 'TASK_STATE_UNSPECIFIED'],
  ])('rejects the illegal change %s → %s with INVALID_TRANSITION (§10.3)', (from, to) => {
    const events = from === 'TASK_STATE_SUBMITTED' ? leased : working;
    given(...events)
      .when(workerUpdate(1, { kind: 'status', status: { state: to } }))
      .thenError('INVALID_TRANSITION');
  });

  it('rejects a status message with ROLE_USER as INVALID_UPDATE', () => {
    given(...working)
      .when(
        workerUpdate(1, {
          kind: 'status',
          status: { state: 'TASK_STATE_INPUT_REQUIRED', message: message('ROLE_USER', 'q') },
        }),
      )
      .thenError('INVALID_UPDATE');
  });

  it("records a legal status with the platform's timestamp and the task's ids on its message", () => {
    given(...working)
      .when(
        workerUpdate(1, {
          kind: 'status',
          status: {
            state: 'TASK_STATE_INPUT_REQUIRED',
            message: message('ROLE_AGENT', 'q', { taskId: 'spoofed', contextId: 'spoofed' }),
            timestamp: '1999-12-31T23:59:59.000Z',
          },
        }),
      )
      .then([
        statusUpdated(
          'TASK_STATE_INPUT_REQUIRED',
          message('ROLE_AGENT', 'q', { taskId: TASK_ID, contextId: CONTEXT_ID }),
        ),
      ]);
  });

  it('records a status without a message without inventing one', () => {
    given(...leased)
      .when(workerUpdate(1, { kind: 'status', status: { state: 'TASK_STATE_COMPLETED' } }))
      .then([statusUpdated('TASK_STATE_COMPLETED')]);
  });

  it('appends an agent message with the task ids filled in', () => {
    given(...working)
      .when(workerUpdate(1, { kind: 'message', message: message('ROLE_AGENT', 'a1') }))
      .then([
        {
          type: 'AgentMessageAppended',
          data: {
            message: message('ROLE_AGENT', 'a1', { taskId: TASK_ID, contextId: CONTEXT_ID }),
          },
        },
      ]);
  });

  it.each<Message['role']>(['ROLE_USER', 'ROLE_UNSPECIFIED'])(
    'rejects an agent message with %s as INVALID_UPDATE',
    (role) => {
      given(...working)
        .when(workerUpdate(1, { kind: 'message', message: message(role, 'a1') }))
        .thenError('INVALID_UPDATE');
    },
  );

  it('rejects an append to an artifact the task does not have as INVALID_UPDATE (§10.6)', () => {
    given(...working, artifactChunk({ artifactId: 'known', parts: [{ text: '1' }] }))
      .when(
        workerUpdate(1, {
          kind: 'artifact',
          artifact: { artifactId: 'unknown', parts: [{ text: '2' }] },
          append: true,
          lastChunk: false,
        }),
      )
      .thenError('INVALID_UPDATE');
  });

  it('records a new artifact and an append to a known one as chunks (§10.6)', () => {
    const first: Artifact = { artifactId: 'a', parts: [{ text: '1' }] };
    const after = given(...working)
      .when(workerUpdate(1, { kind: 'artifact', artifact: first, append: false, lastChunk: false }))
      .then([artifactChunk(first)]);

    const second: Artifact = { artifactId: 'a', parts: [{ text: '2' }] };
    expect(
      decide(
        workerUpdate(1, { kind: 'artifact', artifact: second, append: true, lastChunk: true }),
        after,
      ),
    ).toEqual([
      { type: 'ArtifactChunkAppended', data: { artifact: second, append: true, lastChunk: true } },
    ]);
  });
});

describe('decide RequestCancel (§10.8)', () => {
  it('fails with TASK_NOT_FOUND for an unknown task', () => {
    given().when(requestCancel()).thenError('TASK_NOT_FOUND');
  });

  it.each(TERMINAL)('fails with TASK_NOT_CANCELABLE on a %s task (§10.8)', (state) => {
    const error = given(...reached(state))
      .when(requestCancel())
      .thenError('TASK_NOT_CANCELABLE') as A2aError;
    expect(error.metadata).toEqual({ taskId: TASK_ID, state });
  });

  it('asks the worker holding the lease to stop, with a deadline of now + grace', () => {
    given(submitted, leaseGranted(1), statusUpdated('TASK_STATE_WORKING'))
      .when(requestCancel(NOW, { reason: 'user' }))
      .then([
        {
          type: 'TaskCancelRequested',
          data: {
            requestedBy: 'usr_2',
            deadline: at(30_000).toISOString(),
            metadata: { reason: 'user' },
          },
        },
      ]);
  });

  it('adds nothing for a second request while one is pending', () => {
    given(submitted, leaseGranted(1), cancelRequested(at(30_000)))
      .when(requestCancel(at(5_000)))
      .then([]);
  });

  it.each<[string, TaskEvent[]]>([
    ['submitted and queued', [submitted]],
    ['re-queued after its lease expired', [submitted, leaseGranted(1), leaseExpired(1)]],
    ['waiting for input', reached('TASK_STATE_INPUT_REQUIRED')],
    ['waiting for auth', reached('TASK_STATE_AUTH_REQUIRED')],
  ])('cancels at once a task no worker holds (%s)', (_label, events) => {
    const after = given(...events)
      .when(requestCancel())
      .then([statusUpdated('TASK_STATE_CANCELED')]);
    expect(after.status === 'present' && after.work).toBe('idle');
  });
});

describe('decide ExpireLease', () => {
  const leased = [submitted, leaseGranted(1), statusUpdated('TASK_STATE_WORKING')];

  it.each<[string, TaskEvent[], number]>([
    ['the epoch is stale', [...leased, leaseExpired(1), leaseGranted(2, 2)], 1],
    ['no lease is held', [submitted], 1],
    ['the task does not exist', [], 1],
    ['the task already ended', [...leased, statusUpdated('TASK_STATE_COMPLETED')], 1],
  ])('does nothing when %s', (_label, events, epoch) => {
    given(...events)
      .when(expireLease(epoch))
      .then([]);
  });

  it('cancels the task when a cancel was pending', () => {
    const after = given(...leased, cancelRequested(at(30_000)))
      .when(expireLease(1))
      .then([leaseExpired(1), statusUpdated('TASK_STATE_CANCELED')]);
    expect(after.status === 'present' && after.task.status.state).toBe('TASK_STATE_CANCELED');
  });

  it('re-queues the work with the next attempt when the policy redispatches and attempts remain', () => {
    const after = given(...leased)
      .when(expireLease(1, REDISPATCH))
      .then([leaseExpired(1)]);
    expect(after).toMatchObject({
      work: 'queued',
      attempt: 2,
      lease: null,
      task: { status: { state: 'TASK_STATE_WORKING' } },
    });
  });

  const failedBecauseLost = statusUpdated(
    'TASK_STATE_FAILED',
    {
      messageId: 'msg_lost',
      taskId: TASK_ID,
      contextId: CONTEXT_ID,
      role: 'ROLE_AGENT',
      parts: [{ text: 'The agent worker stopped responding before the task finished.' }],
    },
    NOW,
  );

  it('fails the task with an agent message when the attempts are used up', () => {
    given(
      submitted,
      leaseGranted(1),
      leaseExpired(1),
      leaseGranted(2, 2),
      leaseExpired(2),
      leaseGranted(3, 3),
    )
      .when(expireLease(3, REDISPATCH))
      .then([leaseExpired(3), failedBecauseLost]);
  });

  it("fails the task on the first expiry under the 'fail' policy", () => {
    const after = given(...leased)
      .when(expireLease(1, FAIL))
      .then([leaseExpired(1), failedBecauseLost]);
    expect(after).toMatchObject({ work: 'idle', lease: null });
  });
});

describe('decide EnforceCancelDeadline', () => {
  const pending = [submitted, leaseGranted(1), cancelRequested(at(30_000))];
  const enforce = (now: Date): TaskCommand => ({ type: 'EnforceCancelDeadline', now });

  it('does nothing before the deadline', () => {
    given(...pending)
      .when(enforce(at(29_999)))
      .then([]);
  });

  it.each([0, 1, 60_000])('cancels the task once the deadline has passed (+%i ms)', (late) => {
    given(...pending)
      .when(enforce(at(30_000 + late)))
      .then([statusUpdated('TASK_STATE_CANCELED', undefined, at(30_000 + late))]);
  });

  it.each<[string, TaskEvent[]]>([
    ['no cancel was requested', [submitted, leaseGranted(1)]],
    ['the worker already confirmed', [...pending, statusUpdated('TASK_STATE_CANCELED')]],
    ['the worker finished first', [...pending, statusUpdated('TASK_STATE_COMPLETED')]],
    ['the task does not exist', []],
  ])('does nothing when %s', (_label, events) => {
    given(...events)
      .when(enforce(at(120_000)))
      .then([]);
  });
});

// ---------------------------------------------------------------------------------------------
// Property-style: random command sequences keep the invariants

/** mulberry32: small, seeded, good enough to shuffle commands. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randomCommand(random: () => number, state: TaskAggregate, now: Date): TaskCommand {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const present = state.status === 'present' ? state : undefined;
  const current = present?.lease?.epoch ?? present?.lastLeaseEpoch ?? 1;
  const epoch = pick([current, current, current, current - 1, current + 1, 0]);
  const id = `r${Math.floor(random() * 1e9)}`;
  const states = [
    'TASK_STATE_WORKING',
    'TASK_STATE_WORKING',
    'TASK_STATE_INPUT_REQUIRED',
    'TASK_STATE_AUTH_REQUIRED',
    'TASK_STATE_COMPLETED',
    'TASK_STATE_FAILED',
    'TASK_STATE_CANCELED',
    'TASK_STATE_REJECTED',
    'TASK_STATE_SUBMITTED',
    'TASK_STATE_UNSPECIFIED',
  ] as const satisfies readonly TaskStateName[];
  const roles = ['ROLE_AGENT', 'ROLE_AGENT', 'ROLE_AGENT', 'ROLE_USER'] as const;
  const artifactIds = ['a', 'b', 'c'];

  switch (
    pick([
      'submit',
      'append',
      'grant',
      'update',
      'update',
      'update',
      'cancel',
      'expire',
      'deadline',
    ] as const)
  ) {
    case 'submit':
      return {
        type: 'SubmitTask',
        taskId: TASK_ID,
        contextId: CONTEXT_ID,
        agentId: 'agt_1',
        ownerId: 'usr_1',
        message: message('ROLE_USER', id),
        now,
      };
    case 'append':
      return {
        type: 'AppendUserMessage',
        message: message('ROLE_USER', id, {
          taskId: TASK_ID,
          contextId: pick([CONTEXT_ID, CONTEXT_ID, CONTEXT_ID, 'ctx_other']),
        }),
        now,
      };
    case 'grant':
      return { type: 'GrantLease', workerId: `wrk_${id}`, leaseTtlMs: 30_000, now };
    case 'update': {
      const kind = pick(['status', 'message', 'artifact'] as const);
      const update: WorkerUpdate =
        kind === 'status'
          ? {
              kind,
              status: {
                state: pick(states),
                ...(random() < 0.5 ? { message: message(pick(roles), id) } : {}),
              },
            }
          : kind === 'message'
            ? { kind, message: message(pick(roles), id) }
            : {
                kind,
                artifact: { artifactId: pick(artifactIds), parts: [{ text: id }] },
                append: random() < 0.5,
                lastChunk: random() < 0.3,
              };
      return { type: 'ApplyWorkerUpdate', leaseEpoch: epoch, update, now };
    }
    case 'cancel':
      return { type: 'RequestCancel', requestedBy: 'usr_1', cancelGraceMs: 20_000, now };
    case 'expire':
      return {
        type: 'ExpireLease',
        leaseEpoch: epoch,
        policy: {
          onLeaseLost: pick(['redispatch', 'redispatch', 'fail'] as const),
          maxAttempts: 3,
        },
        messageId: id,
        now,
      };
    case 'deadline':
      return { type: 'EnforceCancelDeadline', now };
  }
}

describe('decide + evolve on random command sequences (property)', () => {
  it('keep version = event count, terminal tasks frozen, lease epochs strictly increasing, only domain errors', () => {
    const runs = 400;
    let totalEvents = 0;
    let terminalRuns = 0;
    let rejections = 0;

    for (let seed = 1; seed <= runs; seed++) {
      const random = prng(seed);
      let state: TaskAggregate = initialTaskState();
      let eventCount = 0;
      let lastEpoch = 0;
      let clock = T0.getTime();

      // Most runs start with a submit; some start on an absent task.
      if (random() < 0.9) {
        const events = decide(
          {
            type: 'SubmitTask',
            taskId: TASK_ID,
            contextId: CONTEXT_ID,
            agentId: 'agt_1',
            ownerId: 'usr_1',
            message: message('ROLE_USER', 'm1'),
            now: new Date(clock),
          },
          state,
        );
        state = events.reduce(evolve, state);
        eventCount += events.length;
      }

      const steps = 5 + Math.floor(random() * 40);
      for (let step = 0; step < steps; step++) {
        clock += Math.floor(random() * 15_000);
        const command = randomCommand(random, state, new Date(clock));
        const context = `seed ${seed} step ${step} ${command.type}`;
        const before = state;

        let events: TaskEvent[] = [];
        try {
          events = decide(command, state);
        } catch (error) {
          if (!(error instanceof A2aError || error instanceof WorkerUpdateRejected)) {
            throw new Error(`${context}: unexpected ${String(error)}`);
          }
          rejections++;
          continue;
        }

        for (const event of events) {
          if (event.type === 'TaskLeaseGranted') {
            expect(event.data.leaseEpoch, context).toBeGreaterThan(lastEpoch);
            lastEpoch = event.data.leaseEpoch;
          }
          state = evolve(state, event);
        }
        eventCount += events.length;

        expect(state.version, context).toBe(eventCount);
        if (before.status === 'present' && isTerminalState(before.task.status.state)) {
          expect(events, context).toEqual([]);
          expect(state.status === 'present' && state.task, context).toEqual(before.task);
        }
      }

      totalEvents += eventCount;
      if (state.status === 'present' && isTerminalState(state.task.status.state)) {
        terminalRuns++;
      }
    }

    // The generator must actually exercise the decider, not just bounce off errors.
    expect(totalEvents).toBeGreaterThan(runs * 3);
    expect(terminalRuns).toBeGreaterThan(runs / 4);
    expect(rejections).toBeGreaterThan(0);
  });
});

describe('decideAll', () => {
  const leased = foldTask([submitted, leaseGranted(1)]);

  it('decides each command on the state the earlier ones left', () => {
    const events = decideAll(
      [
        workerUpdate(1, { kind: 'status', status: { state: 'TASK_STATE_WORKING' } }),
        workerUpdate(1, { kind: 'status', status: { state: 'TASK_STATE_COMPLETED' } }),
      ],
      leased,
    );
    expect(events).toEqual([
      statusUpdated('TASK_STATE_WORKING'),
      statusUpdated('TASK_STATE_COMPLETED'),
    ]);
  });

  it('refuses the whole change when a later command is refused', () => {
    expect(() =>
      decideAll(
        [
          workerUpdate(1, { kind: 'status', status: { state: 'TASK_STATE_COMPLETED' } }),
          workerUpdate(1, { kind: 'status', status: { state: 'TASK_STATE_WORKING' } }),
        ],
        leased,
      ),
    ).toThrow(WorkerUpdateRejected);
  });

  it('accepts and leases a new task in one change', () => {
    const events = decideAll(
      [
        {
          type: 'SubmitTask',
          taskId: TASK_ID,
          contextId: CONTEXT_ID,
          agentId: 'agt_1',
          ownerId: 'usr_1',
          message: message('ROLE_USER', 'hi'),
          now: NOW,
        },
        { type: 'GrantLease', workerId: 'wrk_9', leaseTtlMs: 30_000, now: NOW },
      ],
      initialTaskState(),
    );
    expect(events.map((e) => e.type)).toEqual(['TaskSubmitted', 'TaskLeaseGranted']);
    const after = foldTask(events);
    expect(after.status === 'present' && after.work).toBe('leased');
  });
});

describe('decide ReleaseLease', () => {
  const release = (leaseEpoch: number): TaskCommand => ({
    type: 'ReleaseLease',
    leaseEpoch,
    reason: 'worker shutting down',
    now: NOW,
  });
  const released = (leaseEpoch: number): TaskEvent => ({
    type: 'TaskLeaseReleased',
    data: { leaseEpoch, workerId: 'wrk_1', reason: 'worker shutting down' },
  });

  it('queues the work again as the same attempt', () => {
    const after = given(submitted, leaseGranted(1), statusUpdated('TASK_STATE_WORKING'))
      .when(release(1))
      .then([released(1)]);
    expect(after.status === 'present' && [after.work, after.attempt, after.lease]).toEqual([
      'queued',
      1,
      null,
    ]);
  });

  it('changes nothing for a lease that is no longer current', () => {
    given(submitted, leaseGranted(1), leaseExpired(1), leaseGranted(2, 2))
      .when(release(1))
      .then([]);
    given().when(release(1)).then([]);
  });

  it('ends the task CANCELED when a cancel was pending', () => {
    given(submitted, leaseGranted(1), cancelRequested(at(30_000)))
      .when(release(1))
      .then([released(1), statusUpdated('TASK_STATE_CANCELED')]);
  });
});

describe('message replies (docs/adr/0009-message-replies.md)', () => {
  const exchange = submittedEvent({ mayReply: true });
  const leased = [exchange, leaseGranted(1)];
  const reply = message('ROLE_AGENT', 'r1', { taskId: 'ignored', contextId: 'ignored' });
  const replied: TaskEvent = {
    type: 'AgentReplied',
    data: { message: { ...message('ROLE_AGENT', 'r1'), contextId: CONTEXT_ID } },
  };

  it('SubmitTask records that the agent may reply; the stream is a pending exchange, not a task', () => {
    const after = given()
      .when({
        type: 'SubmitTask',
        taskId: TASK_ID,
        contextId: CONTEXT_ID,
        agentId: 'agt_1',
        ownerId: 'usr_1',
        message: message('ROLE_USER', 'm1'),
        mayReply: true,
        now: T0,
      })
      .then([exchange]);
    expect(after.status === 'present' && after.answer).toEqual({ kind: 'pending' });
    expect(foldTask([submitted]).status === 'present' && foldTask([submitted])).toMatchObject({
      answer: { kind: 'task' },
    });
  });

  it("a reply ends the exchange: the message in the stream's context and no task, no lease, no work", () => {
    const after = given(...leased)
      .when(workerUpdate(1, { kind: 'reply', message: reply }))
      .then([replied]);
    expect(after).toMatchObject({
      answer: { kind: 'reply', ...replied.data },
      work: 'idle',
      lease: null,
      version: 3,
    });
    expect(
      after.status === 'present' && after.answer.kind === 'reply' && after.answer.message.taskId,
    ).toBeUndefined();
  });

  it.each<[string, TaskEvent[]]>([
    ['the agent does not declare message replies', [submitted, leaseGranted(1)]],
    ['the worker reported on the task already', [...leased, statusUpdated('TASK_STATE_WORKING')]],
    [
      'the worker added an artifact already',
      [...leased, artifactChunk({ artifactId: 'a', parts: [{ text: 'x' }] })],
    ],
  ])('refuses a reply with INVALID_UPDATE when %s', (_label, events) => {
    given(...events)
      .when(workerUpdate(1, { kind: 'reply', message: reply }))
      .thenError('INVALID_UPDATE');
  });

  it('refuses a reply with ROLE_USER, and anything after a reply as LEASE_LOST', () => {
    given(...leased)
      .when(workerUpdate(1, { kind: 'reply', message: message('ROLE_USER', 'r2') }))
      .thenError('INVALID_UPDATE');
    given(...leased, replied)
      .when(workerUpdate(1, { kind: 'status', status: { state: 'TASK_STATE_COMPLETED' } }))
      .thenError('LEASE_LOST');
  });

  it('a status update makes the pending exchange a task, which clients see from then on', () => {
    const after = given(...leased)
      .when(workerUpdate(1, { kind: 'status', status: { state: 'TASK_STATE_WORKING' } }))
      .then([statusUpdated('TASK_STATE_WORKING')]);
    expect(after.status === 'present' && after.answer).toEqual({ kind: 'task' });
  });

  it('a lost lease re-dispatches the pending exchange; failing it for good makes it a FAILED task', () => {
    const redispatched = given(...leased)
      .when(expireLease(1, REDISPATCH))
      .then([leaseExpired(1)]);
    expect(redispatched).toMatchObject({ answer: { kind: 'pending' }, work: 'queued' });
    const failed = foldTask(decide(expireLease(1, FAIL), foldTask(leased)), foldTask(leased));
    expect(failed).toMatchObject({
      answer: { kind: 'task' },
      task: { status: { state: 'TASK_STATE_FAILED' } },
    });
  });

  it.each<[string, TaskEvent[]]>([
    ['pending', [exchange]],
    ['answered with a reply', [...leased, replied]],
  ])('clients cannot continue or cancel an exchange %s: TASK_NOT_FOUND', (_label, events) => {
    given(...events)
      .when({
        type: 'AppendUserMessage',
        message: message('ROLE_USER', 'm2', { taskId: TASK_ID }),
        now: NOW,
      })
      .thenError('TASK_NOT_FOUND');
    given(...events)
      .when(requestCancel())
      .thenError('TASK_NOT_FOUND');
  });
});

describe('push configs (docs/adr/0010-push-notifications.md)', () => {
  const register = (configId: string): TaskCommand => ({
    type: 'RegisterPushConfig',
    configId,
    origin: 'https://hooks.example',
  });
  const registered = (configId: string): TaskEvent => ({
    type: 'PushConfigRegistered',
    data: { configId, origin: 'https://hooks.example' },
  });
  const remove = (configId: string): TaskCommand => ({ type: 'RemovePushConfig', configId });

  it('registers webhooks in order; registering an id again replaces it and keeps its place', () => {
    const one = given(submitted)
      .when(register('a'))
      .then([registered('a')]);
    const two = foldTask([registered('b'), registered('a')], one);
    expect(two.status === 'present' && two.pushConfigIds).toEqual(['a', 'b']);
    expect(two.version).toBe(4);
  });

  it('registers on a task in any state, terminal included', () => {
    for (const state of [...TERMINAL, ...INTERRUPTED]) {
      given(submitted, ...reached(state))
        .when(register('a'))
        .then([registered('a')]);
    }
  });

  it('takes an inline registration on a pending exchange, and none once it ended with a reply', () => {
    const exchange = submittedEvent({ mayReply: true });
    given(exchange)
      .when(register('a'))
      .then([registered('a')]);
    const replied: TaskEvent = {
      type: 'AgentReplied',
      data: { message: { ...message('ROLE_AGENT', 'r1'), contextId: CONTEXT_ID } },
    };
    given(exchange, leaseGranted(1), replied).when(register('a')).thenError('TASK_NOT_FOUND');
  });

  it('removes a registered webhook; removing an unknown one changes nothing', () => {
    const after = given(submitted, registered('a'), registered('b'))
      .when(remove('a'))
      .then([{ type: 'PushConfigRemoved', data: { configId: 'a' } }]);
    expect(after.status === 'present' && after.pushConfigIds).toEqual(['b']);
    given(submitted, registered('a')).when(remove('zzz')).then([]);
    given(submitted, registered('a'), { type: 'PushConfigRemoved', data: { configId: 'a' } })
      .when(remove('a'))
      .then([]);
  });

  it('knows no webhook of a task that does not exist or is not shown as a task', () => {
    given().when(register('a')).thenError('TASK_NOT_FOUND');
    given().when(remove('a')).thenError('TASK_NOT_FOUND');
    given(submittedEvent({ mayReply: true }))
      .when(remove('a'))
      .thenError('TASK_NOT_FOUND');
  });

  it('shows streams nothing of a registration or a removal', () => {
    const ref = { taskId: TASK_ID, contextId: CONTEXT_ID };
    expect(toStreamResponse(registered('a'), ref)).toBeNull();
    expect(
      toStreamResponse({ type: 'PushConfigRemoved', data: { configId: 'a' } }, ref),
    ).toBeNull();
  });
});

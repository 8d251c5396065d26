import { status as GrpcStatus } from '@grpc/grpc-js';
import { a2aPb, type TaskStateName, type workerPb } from '@lib/a2a-protocol';
import { describe, expect, it } from 'vitest';
import type { AgentExecutor, ExecutionEventBus, RequestContext } from './agent-executor';
import { TaskExecution } from './task-execution';
import type { SendResult, UpdateSender } from './worker-channel';
import type { WorkerLogger } from './worker-logger';
import { WorkerError } from './worker.errors';

const silent: WorkerLogger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
const fast = { initialMs: 1, maxMs: 1, factor: 1, jitter: 0 };

const assignment: workerPb.Assignment = {
  taskId: 't',
  contextId: 'c',
  leaseEpoch: 4,
  leaseExpiresAt: undefined,
  task: a2aPb.Task.fromJSON({ id: 't', contextId: 'c', status: { state: 'TASK_STATE_SUBMITTED' } }),
  message: a2aPb.Message.fromJSON({ messageId: 'u', role: 'ROLE_USER', parts: [{ text: 'hi' }] }),
  attempt: 1,
  mayReply: false,
  traceparent: '',
};

const failure = (code: GrpcStatus, reason?: string): SendResult => ({
  ok: false,
  failure: { code, reason, message: `${GrpcStatus[code]} ${reason ?? ''}`.trim() },
});

/** Answers each PublishUpdate with the next scripted result, then with success. */
class FakeSender implements UpdateSender {
  readonly requests: workerPb.PublishUpdateRequest[] = [];
  constructor(private readonly script: SendResult[] = []) {}

  send(request: workerPb.PublishUpdateRequest): Promise<SendResult> {
    this.requests.push(request);
    return Promise.resolve(this.script.shift() ?? { ok: true });
  }

  /** Every update sent, in order, batched or not. */
  get updates(): workerPb.ExecutionUpdate[] {
    return this.requests.flatMap((r) =>
      r.updates.length > 0
        ? r.updates
        : [{ status: r.status, message: r.message, artifact: r.artifact, reply: r.reply }],
    );
  }

  get summary(): string[] {
    return this.updates.map((u) =>
      u.status
        ? `status ${u.status.state.replace('TASK_STATE_', '')}${u.status.message ? ` "${u.status.message.parts[0]?.text ?? ''}"` : ''}`
        : u.message
          ? 'message'
          : u.reply
            ? `reply "${u.reply.parts[0]?.text ?? ''}"`
            : `artifact ${u.artifact?.artifact?.artifactId ?? ''}`,
    );
  }
}

function executionOf(
  execute: (context: RequestContext, events: ExecutionEventBus) => Promise<void>,
  options: {
    sender?: FakeSender;
    cancelTask?: AgentExecutor['cancelTask'];
    now?: () => number;
    mayReply?: boolean;
  } = {},
): { execution: TaskExecution; sender: FakeSender } {
  const sender = options.sender ?? new FakeSender();
  const executor: AgentExecutor = options.cancelTask
    ? { execute, cancelTask: options.cancelTask }
    : { execute };
  const execution = new TaskExecution(
    { ...assignment, mayReply: options.mayReply ?? false },
    {
      executor,
      sender,
      logger: silent,
      leaseTtlMs: 10_000,
      agent: { tenantId: 'demo', agentId: 'echo' },
      backoff: fast,
      ...(options.now ? { now: options.now } : {}),
    },
  );
  return { execution, sender };
}

async function rejection(promise: Promise<unknown>): Promise<WorkerError> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WorkerError);
  return error as WorkerError;
}

describe('TaskExecution', () => {
  it('hands the agent the task, the user message and the attempt', async () => {
    let seen: RequestContext | undefined;
    const { execution } = executionOf(async (context) => {
      seen = context;
      await Promise.resolve();
    });
    await execution.run();
    expect(seen).toMatchObject({
      taskId: 't',
      contextId: 'c',
      attempt: 1,
      userMessage: { messageId: 'u', parts: [{ text: 'hi' }] },
      task: { id: 't', status: { state: 'TASK_STATE_SUBMITTED' } },
    });
    expect(seen?.signal.aborted).toBe(false);
  });

  it('completes a task whose execute returned, under the assignment lease epoch', async () => {
    const { execution, sender } = executionOf((_, events) => events.working('on it'));
    expect(execution.holdsLease).toBe(true);
    await execution.run();
    expect(sender.summary).toEqual(['status WORKING "on it"', 'status COMPLETED']);
    expect(sender.requests.every((r) => r.taskId === 't' && r.leaseEpoch === 4)).toBe(true);
    expect(sender.requests[0]?.status?.message?.role).toBe('ROLE_AGENT');
    expect(execution.holdsLease).toBe(false);
  });

  it('fails a task whose execute threw, with the error message', async () => {
    const { execution, sender } = executionOf(() => Promise.reject(new Error('no model')));
    await execution.run();
    expect(sender.summary).toEqual(['status FAILED "no model"']);
  });

  it('adds nothing after the agent ended the assignment, and rejects later updates', async () => {
    let late: WorkerError | undefined;
    const { execution, sender } = executionOf(async (_, events) => {
      await events.inputRequired('What is your name?');
      late = await rejection(events.working());
    });
    await execution.run();
    expect(sender.summary).toEqual(['status INPUT_REQUIRED "What is your name?"']);
    expect(late?.reason).toBe('TASK_ENDED');
  });

  it('answers with a bare reply when the assignment allows it, and publishes nothing after it', async () => {
    let seen: RequestContext | undefined;
    let late: WorkerError | undefined;
    const { execution, sender } = executionOf(
      async (context, events) => {
        seen = context;
        await events.reply('42 is the answer');
        late = await rejection(events.complete());
      },
      { mayReply: true },
    );
    await execution.run();
    expect(seen?.mayReply).toBe(true);
    expect(sender.summary).toEqual(['reply "42 is the answer"']);
    const reply = sender.requests[0]?.reply;
    expect(reply?.role).toBe('ROLE_AGENT');
    expect(reply?.contextId).toBe('c');
    expect(reply?.taskId ?? '').toBe('');
    expect(late?.reason).toBe('TASK_ENDED');
    expect(execution.holdsLease).toBe(false);
  });

  it('refuses a reply the assignment does not allow, or one that is not the first update', async () => {
    const refused: WorkerError[] = [];
    const notAllowed = executionOf(async (context, events) => {
      expect(context.mayReply).toBe(false);
      refused.push(await rejection(events.reply('hi')));
    });
    await notAllowed.execution.run();
    expect(notAllowed.sender.summary).toEqual(['status COMPLETED']);
    const late = executionOf(
      async (_, events) => {
        await events.working();
        refused.push(await rejection(events.reply('too late')));
      },
      { mayReply: true },
    );
    await late.execution.run();
    expect(late.sender.summary).toEqual(['status WORKING', 'status COMPLETED']);
    expect(refused.map((e) => e.reason)).toEqual(['UPDATE_REJECTED', 'UPDATE_REJECTED']);
  });

  it('publishes each update of an agent that awaits them one by one', async () => {
    const { execution, sender } = executionOf(async (_, events) => {
      await events.working();
      await events.artifact({ artifactId: 'a', parts: [{ text: '1' }] });
      await events.message([{ text: 'note' }]);
    });
    await execution.run();
    expect(sender.summary).toEqual(['status WORKING', 'artifact a', 'message', 'status COMPLETED']);
    expect(sender.requests).toHaveLength(4);
  });

  it('publishes updates in call order even when they are not awaited', async () => {
    const { execution, sender } = executionOf(async (_, events) => {
      const updates = [
        events.working(),
        events.artifact({ artifactId: 'a', parts: [{ text: '1' }] }),
        events.message([{ text: 'note' }]),
        events.artifact({ artifactId: 'a', parts: [{ text: '2' }], append: true, lastChunk: true }),
      ];
      await Promise.all(updates);
    });
    await execution.run();
    expect(sender.summary).toEqual([
      'status WORKING',
      'artifact a',
      'message',
      'artifact a',
      'status COMPLETED',
    ]);
    expect(sender.updates[3]?.artifact).toMatchObject({ append: true, lastChunk: true });
  });

  it('resolves artifact() with a fresh artifact id when none is given', async () => {
    let id = '';
    const { execution, sender } = executionOf(async (_, events) => {
      id = await events.artifact({ name: 'report', parts: [{ text: 'x' }] });
    });
    await execution.run();
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(sender.requests[0]?.artifact?.artifact?.artifactId).toBe(id);
  });

  it('retries the same update after transient failures', async () => {
    const sender = new FakeSender([
      failure(GrpcStatus.UNAVAILABLE),
      failure(GrpcStatus.DEADLINE_EXCEEDED),
      failure(GrpcStatus.INTERNAL, 'INTERNAL'),
    ]);
    const { execution } = executionOf((_, events) => events.working('step 1/3'), { sender });
    await execution.run();
    expect(sender.summary).toEqual([
      'status WORKING "step 1/3"',
      'status WORKING "step 1/3"',
      'status WORKING "step 1/3"',
      'status WORKING "step 1/3"',
      'status COMPLETED',
    ]);
    expect(new Set(sender.requests.slice(0, 4).map((r) => r.status?.message?.messageId)).size).toBe(
      1,
    );
  });

  it('stops at LEASE_LOST: no retry, the signal aborts, no final status', async () => {
    let error: WorkerError | undefined;
    let signal: AbortSignal | undefined;
    const sender = new FakeSender([failure(GrpcStatus.FAILED_PRECONDITION, 'LEASE_LOST')]);
    const { execution } = executionOf(
      async (context, events) => {
        signal = context.signal;
        error = await rejection(events.working());
        throw error;
      },
      { sender },
    );
    await execution.run();
    expect(error?.reason).toBe('LEASE_LOST');
    expect(signal?.reason).toBe(error);
    expect(sender.summary).toEqual(['status WORKING']);
    expect(execution.holdsLease).toBe(false);
  });

  it('does not retry an update the platform rejects, and fails the task when execute gives up', async () => {
    let error: WorkerError | undefined;
    const sender = new FakeSender([failure(GrpcStatus.INVALID_ARGUMENT, 'INVALID_UPDATE')]);
    const { execution } = executionOf(
      async (_, events) => {
        error = await rejection(events.artifact({ artifactId: 'a', parts: [], append: true }));
        throw error;
      },
      { sender },
    );
    await execution.run();
    expect(error?.reason).toBe('UPDATE_REJECTED');
    expect(error?.metadata).toEqual({ code: 'INVALID_ARGUMENT', serverReason: 'INVALID_UPDATE' });
    expect(sender.summary).toEqual([
      'artifact a',
      'status FAILED "INVALID_ARGUMENT INVALID_UPDATE"',
    ]);
  });

  it('gives up retrying once the lease would have expired', async () => {
    let now = 0;
    const sender = new FakeSender(
      Array.from({ length: 1_000 }, () => failure(GrpcStatus.UNAVAILABLE)),
    );
    const original = sender.send.bind(sender);
    sender.send = (request) => {
      now += 4_000;
      return original(request);
    };
    let error: WorkerError | undefined;
    const { execution } = executionOf(
      async (_, events) => {
        error = await rejection(events.working());
      },
      { sender, now: () => now },
    );
    await execution.run();
    expect(error?.reason).toBe('LEASE_LOST');
    expect(sender.requests).toHaveLength(3);
  });

  it('keeps retrying while heartbeats renew the lease', async () => {
    let now = 0;
    const sender = new FakeSender(Array.from({ length: 5 }, () => failure(GrpcStatus.UNAVAILABLE)));
    const original = sender.send.bind(sender);
    const { execution } = executionOf((_, events) => events.working(), { sender, now: () => now });
    sender.send = (request) => {
      now += 4_000;
      execution.renewed(now);
      return original(request);
    };
    await execution.run();
    expect(sender.summary.at(-1)).toBe('status COMPLETED');
    expect(sender.requests).toHaveLength(7);
  });

  it('on cancel aborts the signal, runs cancelTask, then publishes CANCELED', async () => {
    const order: string[] = [];
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const { execution, sender } = executionOf(
      async (context) => {
        started();
        await new Promise<void>((resolve) =>
          context.signal.addEventListener('abort', () => resolve()),
        );
        order.push(`execute saw ${(context.signal.reason as WorkerError).reason}`);
        throw new Error('aborted');
      },
      {
        cancelTask: (taskId) => {
          order.push(`cancelTask ${taskId}`);
          return Promise.resolve();
        },
      },
    );
    const done = execution.run();
    await running;
    execution.requestCancel();
    await done;
    expect(order).toEqual(['cancelTask t', 'execute saw TASK_CANCELED']);
    expect(sender.summary).toEqual(['status CANCELED']);
  });

  it('publishes nothing more when cancelTask already published a final status', async () => {
    const { execution, sender } = executionOf(
      (context) =>
        new Promise<void>((resolve) => context.signal.addEventListener('abort', () => resolve())),
      {
        cancelTask: (_, events) =>
          events.status('TASK_STATE_CANCELED' satisfies TaskStateName, 'stopped'),
      },
    );
    const done = execution.run();
    execution.requestCancel();
    await done;
    expect(sender.summary).toEqual(['status CANCELED "stopped"']);
  });

  it.each([
    ['a revoked lease', (e: TaskExecution) => e.loseLease('revoked'), 'LEASE_LOST'],
    ['a shutdown', (e: TaskExecution) => e.abandon(), 'WORKER_SHUTDOWN'],
    ['a stale lease', (e: TaskExecution) => e.expireIfStale(Date.now() + 60_000), 'LEASE_LOST'],
  ])('after %s aborts the signal and publishes nothing', async (_label, stop, reason) => {
    let late: WorkerError | undefined;
    const { execution, sender } = executionOf(async (context, events) => {
      await new Promise<void>((resolve) =>
        context.signal.addEventListener('abort', () => resolve()),
      );
      late = await rejection(events.working());
    });
    const done = execution.run();
    expect(execution.leaseRef()).toEqual({ taskId: 't', leaseEpoch: 4 });
    stop(execution);
    await done;
    expect(late?.reason).toBe(reason);
    expect(sender.requests).toEqual([]);
    expect(execution.holdsLease).toBe(false);
  });
});

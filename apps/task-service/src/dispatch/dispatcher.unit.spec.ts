import type { ServerDuplexStream } from '@grpc/grpc-js';
import type { SendMessageResponse, Task, workerPb } from '@lib/a2a-protocol';
import type { TaskServiceConfig } from '@lib/config';
import { tenantIdOf } from '@lib/ids';
import { taskStreamId } from '@lib/task-domain';
import { callContext } from '@lib/testing';
import type { WorkQueue } from '@lib/work-queue';
import type { Pool } from 'pg';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CountingIds } from '../../test/support/counting-ids';
import { InMemoryTaskStore } from '../../test/support/in-memory-task-store';
import { RecordedAudit } from '../../test/support/recorded-audit';
import type { AgentDirectory } from '../agent-directory';
import { SystemClock } from '../clock';
import { SendMessageHandler } from '../commands/send-message.handler';
import type { NoticeBus } from '../notice-bus';
import type { PushConfigs } from '../queries/push-configs';
import type { TaskViews } from '../queries/task-views';
import { TaskDecisions } from '../write/task-decisions';
import type { ChangeRefusal, StreamChange } from '../write/task-store';
import { recordOf, type TaskWatch } from '../write/task-watch';
import { TaskWriter } from '../write/task-writer';
import { Dispatcher } from './dispatcher';
import { WorkerSession } from './worker-session';

// The dispatcher waits between reads with `setTimeout` of `node:timers/promises`, which `vi.useFakeTimers()` does
// not reach: the same wait on the global timer, which it does fake.
vi.mock('node:timers/promises', async (importOriginal) => ({
  ...(await importOriginal<typeof import('node:timers/promises')>()),
  setTimeout: <T>(ms: number, value: T): Promise<T> =>
    new Promise<T>((resolve) => setTimeout(() => resolve(value), ms)),
}));

const ctx = callContext({ tenantId: 'acme', agentId: 'echo', principalId: 'alice' });

/**
 * A store whose next append commits, then loses its answer with the connection (an unknown outcome), and whose
 * next `failReads` reads find the database still away.
 */
class OutcomeLosingStore extends InMemoryTaskStore {
  loseNext = false;
  failReads = 0;

  override readStreams(
    ...args: Parameters<InMemoryTaskStore['readStreams']>
  ): ReturnType<InMemoryTaskStore['readStreams']> {
    if (this.failReads > 0) {
      this.failReads -= 1;
      return Promise.reject(new Error('Connection terminated unexpectedly'));
    }
    return super.readStreams(...args);
  }

  override async append(changes: readonly StreamChange[]): Promise<Map<number, ChangeRefusal>> {
    const refused = await super.append(changes);
    if (this.loseNext) {
      this.loseNext = false;
      throw new Error('Connection terminated unexpectedly');
    }
    return refused;
  }
}

function setUp() {
  const store = new OutcomeLosingStore();
  const writer = new TaskWriter(store, new CountingIds(), new RecordedAudit(), {
    WRITER_BATCHES_IN_FLIGHT: 1,
  });
  const agents = {
    capped: () => false,
    maxConcurrency: () => Promise.resolve(null),
    intake: () => Promise.resolve({ inputModes: ['text/plain'], messageReplies: false }),
    leaseTtlMs: () => 30_000,
  } as unknown as AgentDirectory;
  const config = { LEASE_TTL_MS: 30_000, BLOCKING_SEND_TIMEOUT_MS: 1_000 } as TaskServiceConfig;
  const dispatcher = new Dispatcher(
    writer,
    store,
    {} as TaskDecisions,
    { queued: () => Promise.resolve([]) } as unknown as WorkQueue,
    {} as NoticeBus,
    new SystemClock(),
    agents,
    config,
  );
  const sent: workerPb.PlatformMessage[] = [];
  const call = { write: (message: workerPb.PlatformMessage) => sent.push(message) };
  const session = new WorkerSession(
    'w-local',
    { tenantId: ctx.tenantId, agentId: ctx.agentId },
    4,
    call as unknown as ServerDuplexStream<workerPb.WorkerMessage, workerPb.PlatformMessage>,
  );
  dispatcher.attach(session);
  const handler = new SendMessageHandler(
    writer,
    // The stream reads go to the in-memory store; the pool is only the request trace's, unused here.
    new TaskDecisions({} as Pool, writer, store, new CountingIds()),
    store,
    {
      find: (_call: unknown, taskId: string) => {
        const state = store.views.get(taskStreamId(ctx.tenantId, taskId));
        return Promise.resolve(state ? recordOf(state) : null);
      },
    } as unknown as TaskViews,
    {} as PushConfigs,
    {} as TaskWatch,
    agents,
    dispatcher,
    new SystemClock(),
    new CountingIds(),
    new RecordedAudit(),
    config,
  );
  const send = (messageId: string) =>
    handler.execute(
      {
        message: { messageId, role: 'ROLE_USER', parts: [{ text: 'hello' }] },
        configuration: { returnImmediately: true },
      },
      ctx,
    );
  return { store, session, sent, send };
}

describe('Dispatcher: the assignment of a lease granted with the acceptance', () => {
  // Only the timers: the writer's batches and the session's flushes run on `setImmediate`, as in production.
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  it('goes out when the append committed', async () => {
    const { session, sent, send } = setUp();
    const { result } = await send('m1');
    const task = (result as Extract<SendMessageResponse, { task: Task }>).task;
    expect(sent.map((m) => m.assignment?.taskId)).toStrictEqual([task.id]);
    expect(session.inflight.get(task.id)).toBe(1);
  });

  it('goes out when the append committed but its answer was lost with the connection', async () => {
    const { store, session, sent, send } = setUp();
    store.loseNext = true;
    await expect(send('m1')).rejects.toThrow('Connection terminated');
    // The log holds the lease to this worker: it gets the task rather than the task waiting out the TTL.
    await vi.advanceTimersByTimeAsync(0);
    expect(sent).toHaveLength(1);
    const taskId = sent[0]?.assignment?.taskId ?? '';
    expect(store.views.get(taskStreamId(tenantIdOf('acme'), taskId))?.lease?.workerId).toBe(
      'w-local',
    );
    expect(session.inflight.get(taskId)).toBe(1);
    expect(session.free).toBe(3);
  });

  it('goes out when the log cannot be read at once either (the database is still restarting)', async () => {
    const { store, session, sent, send } = setUp();
    store.loseNext = true;
    store.failReads = 2;
    await expect(send('m1')).rejects.toThrow('Connection terminated');
    await vi.advanceTimersByTimeAsync(0);
    expect(sent).toHaveLength(0);
    // Two reads fail: the rereads wait out the first two backoff delays (at most 100 ms and 200 ms).
    await vi.advanceTimersByTimeAsync(300);
    expect(sent).toHaveLength(1);
    expect(store.failReads).toBe(0);
    expect(session.inflight.get(sent[0]?.assignment?.taskId ?? '')).toBe(1);
  });

  it('does not go out twice when the client retries the message', async () => {
    const { store, sent, send } = setUp();
    store.loseNext = true;
    await expect(send('m1')).rejects.toThrow('Connection terminated');
    await vi.advanceTimersByTimeAsync(0);
    expect(sent).toHaveLength(1);
    await send('m1');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(sent).toHaveLength(1);
  });
});

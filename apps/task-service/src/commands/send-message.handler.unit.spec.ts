import type { SendMessageResponse, Task } from '@lib/a2a-protocol';
import type { TaskServiceConfig } from '@lib/config';
import { tenantIdOf } from '@lib/ids';
import { taskStreamId } from '@lib/task-domain';
import { callContext } from '@lib/testing';
import type { Pool } from 'pg';
import { describe, expect, it } from 'vitest';
import { CountingIds } from '../../test/support/counting-ids';
import { InMemoryTaskStore } from '../../test/support/in-memory-task-store';
import { RecordedAudit } from '../../test/support/recorded-audit';
import type { AgentDirectory } from '../agent-directory';
import type { CallContext } from '../call-context';
import { Clock } from '../clock';
import type { Dispatcher } from '../dispatch/dispatcher';
import type { WorkerSession } from '../dispatch/worker-session';
import type { PushConfigs } from '../queries/push-configs';
import type { TaskViews } from '../queries/task-views';
import { TaskDecisions } from '../write/task-decisions';
import { recordOf, type TaskWatch } from '../write/task-watch';
import { TaskWriter, type WriteOutcome } from '../write/task-writer';
import { SendMessageHandler } from './send-message.handler';

const NOW = new Date('2026-01-01T00:00:00.000Z');
const ctx: CallContext = callContext({ tenantId: 'acme', agentId: 'echo', principalId: 'alice' });

class FixedClock extends Clock {
  now(): Date {
    return NOW;
  }
}

/** A dispatcher with one local worker of `room` free places, recording what its reservations became. */
class FakeDispatcher {
  readonly outcomes: (WriteOutcome | null)[] = [];
  constructor(private room: number) {}

  reserve(): WorkerSession | null {
    if (this.room === 0) {
      return null;
    }
    this.room -= 1;
    return { workerId: 'w-local' } as WorkerSession;
  }

  granted(_session: WorkerSession, outcome: WriteOutcome | null): void {
    this.outcomes.push(outcome);
  }
}

function setUp(room = 0) {
  const store = new InMemoryTaskStore();
  const writer = new TaskWriter(store, new CountingIds(), new RecordedAudit(), {
    WRITER_BATCHES_IN_FLIGHT: 1,
  });
  const dispatcher = new FakeDispatcher(room);
  const agents = {
    intake: () => Promise.resolve({ inputModes: ['text/plain'], messageReplies: false }),
    leaseTtlMs: () => 30_000,
  } as unknown as AgentDirectory;
  // The task view as the store's appends left it.
  const find = (call: CallContext, taskId: string) => {
    const state = store.views.get(taskStreamId(call.tenantId, taskId));
    return state ? recordOf(state) : null;
  };
  const views = {
    find: (call: CallContext, taskId: string) => Promise.resolve(find(call, taskId)),
    get: (call: CallContext, taskId: string) => {
      const record = find(call, taskId);
      return record ? Promise.resolve(record) : Promise.reject(new Error('not found'));
    },
  } as unknown as TaskViews;
  const watch = {} as TaskWatch;
  const config = { LEASE_TTL_MS: 30_000, BLOCKING_SEND_TIMEOUT_MS: 1_000 } as TaskServiceConfig;
  const handler = new SendMessageHandler(
    writer,
    // The stream reads go to the in-memory store; the pool is only the request trace's, unused here.
    new TaskDecisions({} as Pool, writer, store, new CountingIds()),
    store,
    views,
    {} as PushConfigs,
    watch,
    agents,
    dispatcher as unknown as Dispatcher,
    new FixedClock(),
    new CountingIds(),
    new RecordedAudit(),
    config,
  );
  const send = async (messageId: string, text: string): Promise<Task> => {
    const { result } = await handler.execute(
      {
        message: { messageId, role: 'ROLE_USER', parts: [{ text }] },
        configuration: { returnImmediately: true },
      },
      ctx,
    );
    return (result as Extract<SendMessageResponse, { task: Task }>).task;
  };
  return { store, dispatcher, send };
}

describe('SendMessageHandler', () => {
  it('accepts a new message as a SUBMITTED task, claiming its messageId in the same append', async () => {
    const { store, send } = setUp();
    const task = await send('m1', 'hello');
    expect(task.id).toBe('id-1');
    expect(task.status.state).toBe('TASK_STATE_SUBMITTED');
    expect(task.status.timestamp).toBe(NOW.toISOString());
    expect(store.batches).toHaveLength(1);
    expect(store.batches[0]?.[0]?.claim?.messageId).toBe('m1');
    expect(
      store.streams.get(taskStreamId(tenantIdOf('acme'), 'id-1'))?.events.map((e) => e.type),
    ).toEqual(['TaskSubmitted']);
  });

  it('leases the task to a local worker with room in the same append', async () => {
    const { store, dispatcher, send } = setUp(1);
    const task = await send('m1', 'hello');
    expect(store.batches).toHaveLength(1);
    expect(
      store.streams.get(taskStreamId(tenantIdOf('acme'), task.id))?.events.map((e) => e.type),
    ).toEqual(['TaskSubmitted', 'TaskLeaseGranted']);
    const outcome = dispatcher.outcomes[0];
    expect(outcome?.kind === 'written' && outcome.after.lease?.workerId).toBe('w-local');
  });

  it('answers a retry of the same message with the first task and writes nothing', async () => {
    const { store, send } = setUp();
    const first = await send('m1', 'hello');
    const again = await send('m1', 'hello');
    expect(again.id).toBe(first.id);
    expect(store.streams.size).toBe(1);
  });

  it('takes another message under a used messageId as a new message, and each retry to its own task', async () => {
    const { store, send } = setUp();
    const first = await send('m1', 'hello');
    const second = await send('m1', 'something else');
    expect(second.id).not.toBe(first.id);
    expect(store.streams.size).toBe(2);
    expect((await send('m1', 'something else')).id).toBe(second.id);
    expect((await send('m1', 'hello')).id).toBe(first.id);
    expect(store.streams.size).toBe(2);
  });

  it('gives the reserved room back when the append is refused', async () => {
    const { dispatcher, send } = setUp(2);
    await send('m1', 'hello');
    await send('m1', 'hello');
    expect(dispatcher.outcomes.map((o) => o?.kind)).toEqual(['written', 'duplicate']);
  });
});

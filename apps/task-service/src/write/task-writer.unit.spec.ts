import type { AuditEntry } from '@lib/audit';
import type { EventMetadata } from '@lib/event-store';
import { decide, decideAll, taskStreamId, type TaskCommand } from '@lib/task-domain';
import { agentIdOf, principalIdOf, taskIdOf, tenantIdOf, type TaskRef } from '@lib/tenancy';
import { describe, expect, it } from 'vitest';
import { CountingIds } from '../../test/support/counting-ids';
import { InMemoryTaskStore } from '../../test/support/in-memory-task-store';
import { RecordedAudit } from '../../test/support/recorded-audit';
import { TaskWriter, type WriteCommand } from './task-writer';

const NOW = new Date('2026-01-01T00:00:00.000Z');
const ACME = tenantIdOf('acme');
const task = (taskId: string): TaskRef => ({ tenantId: ACME, taskId: taskIdOf(taskId) });
const caller: EventMetadata = { actor: { kind: 'caller', id: 'alice' }, binding: 'JSONRPC' };
const worker = (key?: string): EventMetadata => ({
  actor: { kind: 'agent-worker', id: 'w1' },
  binding: 'worker',
  ...(key ? { idempotencyKey: key } : {}),
});

function submit(taskId: string, messageId = `m-${taskId}`): WriteCommand {
  const command: TaskCommand = {
    type: 'SubmitTask',
    taskId,
    contextId: 'ctx',
    agentId: 'echo',
    ownerId: 'alice',
    message: { messageId, role: 'ROLE_USER', parts: [{ text: 'hi' }] },
    now: NOW,
  };
  return {
    ...task(taskId),
    decide: (state) => decide(command, state),
    metadata: caller,
    fresh: true,
    claim: {
      agentId: agentIdOf('echo'),
      principalId: principalIdOf('alice'),
      messageId,
      digest: `d-${messageId}`,
    },
  };
}

const lease: TaskCommand = { type: 'GrantLease', workerId: 'w1', leaseTtlMs: 30_000, now: NOW };
const status = (state: 'TASK_STATE_WORKING' | 'TASK_STATE_COMPLETED'): TaskCommand => ({
  type: 'ApplyWorkerUpdate',
  leaseEpoch: 1,
  update: { kind: 'status', status: { state } },
  now: NOW,
});

function setUp(batches = 1): {
  store: InMemoryTaskStore;
  writer: TaskWriter;
  audit: RecordedAudit;
} {
  const store = new InMemoryTaskStore();
  const audit = new RecordedAudit();
  return {
    store,
    writer: new TaskWriter(store, new CountingIds(), audit, { WRITER_BATCHES_IN_FLIGHT: batches }),
    audit,
  };
}

const sendRecord = (taskId: string): AuditEntry => ({
  tenantId: ACME,
  principalId: 'alice',
  credentialId: 'key-1',
  sourceAddress: '203.0.113.9',
  operation: 'a2a.SendMessage',
  binding: 'JSONRPC',
  resource: `task/${taskId}`,
  outcome: 'ok',
  reason: null,
  traceId: null,
  occurredAt: NOW,
});

describe('TaskWriter', () => {
  it('appends the commands that arrive together in one batch', async () => {
    const { store, writer } = setUp();
    const outcomes = await Promise.all(['t1', 't2', 't3'].map((id) => writer.write(submit(id))));
    expect(outcomes.map((o) => o.kind)).toEqual(['written', 'written', 'written']);
    expect(store.batches).toHaveLength(1);
    expect(store.batches[0]?.map((c) => c.streamId)).toEqual([
      taskStreamId(ACME, 't1'),
      taskStreamId(ACME, 't2'),
      taskStreamId(ACME, 't3'),
    ]);
    expect(store.reads).toBe(0);
  });

  it('decides on the state it wrote, without reading the stream again', async () => {
    const { store, writer } = setUp();
    await writer.write({
      ...submit('t1'),
      decide: (s) => decideAll([submitCommand('t1'), lease], s),
    });
    const outcome = await writer.write({
      ...task('t1'),
      decide: (s) => decideAll([status('TASK_STATE_WORKING'), status('TASK_STATE_COMPLETED')], s),
      metadata: worker('1:u1'),
    });
    expect(outcome.kind).toBe('written');
    expect(outcome.kind === 'written' && outcome.after.task.status.state).toBe(
      'TASK_STATE_COMPLETED',
    );
    expect(store.reads).toBe(0);
    expect(store.streams.get(taskStreamId(ACME, 't1'))?.events).toHaveLength(4);
  });

  it('puts a second command on the same stream in the next batch, decided on the first one', async () => {
    const { store, writer } = setUp();
    await writer.write({
      ...submit('t1'),
      decide: (s) => decideAll([submitCommand('t1'), lease], s),
    });
    const [working, completed] = await Promise.all([
      writer.write(update('t1', 'TASK_STATE_WORKING', '1:a')),
      writer.write(update('t1', 'TASK_STATE_COMPLETED', '1:b')),
    ]);
    expect(working?.kind).toBe('written');
    expect(completed?.kind === 'written' && completed.before.version).toBe(3);
    expect(store.batches).toHaveLength(3);
  });

  it('re-reads and decides again when the stream moved on behind its back', async () => {
    const { store, writer } = setUp();
    await writer.write({
      ...submit('t1'),
      decide: (s) => decideAll([submitCommand('t1'), lease], s),
    });
    let moved = false;
    store.beforeAppend = () => {
      if (!moved) {
        moved = true;
        store.appendBehind(taskStreamId(ACME, 't1'), [
          { type: 'TaskStatusUpdated', data: { status: { state: 'TASK_STATE_WORKING' } } },
        ]);
      }
    };
    const outcome = await writer.write(update('t1', 'TASK_STATE_COMPLETED', '1:c'));
    expect(outcome.kind === 'written' && outcome.before.version).toBe(3);
    expect(store.reads).toBe(1);
  });

  it('leaves the other streams of a batch unharmed when one conflicts', async () => {
    const { store, writer } = setUp();
    await writer.write({
      ...submit('t1'),
      decide: (s) => decideAll([submitCommand('t1'), lease], s),
    });
    store.beforeAppend = (changes) => {
      if (changes.length === 2) {
        store.appendBehind(taskStreamId(ACME, 't1'), [
          { type: 'TaskStatusUpdated', data: { status: { state: 'TASK_STATE_WORKING' } } },
        ]);
      }
    };
    const [moved, fresh] = await Promise.all([
      writer.write(update('t1', 'TASK_STATE_COMPLETED', '1:d')),
      writer.write(submit('t2')),
    ]);
    expect(fresh?.kind).toBe('written');
    expect(moved?.kind).toBe('written');
    expect(store.batches.map((b) => b.length)).toEqual([1, 2, 1]);
  });

  it('decides a command that asks for it on the stream as stored, and forgets states a notice outdates', async () => {
    const { store, writer } = setUp();
    await writer.write(submit('t1'));
    // Another replica leased the task and its worker finished it: the cache knows nothing of it.
    store.appendBehind(taskStreamId(ACME, 't1'), [
      {
        type: 'TaskLeaseGranted',
        data: { leaseEpoch: 1, workerId: 'w9', expiresAt: NOW.toISOString(), attempt: 1 },
      },
    ]);
    const grant = await writer.write({
      ...task('t1'),
      decide: (s) => decide(lease, s),
      metadata: caller,
      reread: true,
    });
    expect(grant.kind === 'unchanged' && grant.state.version).toBe(2);
    expect(store.reads).toBe(1);

    await writer.write(submit('t2'));
    writer.moved(task('t2'), 1);
    expect(writer.peek(task('t2'))?.version).toBe(1);
    writer.moved(task('t2'), 2);
    expect(writer.peek(task('t2'))).toBeUndefined();
  });

  it('reports a messageId claimed before as a duplicate and writes nothing for it', async () => {
    const { store, writer } = setUp();
    await writer.write(submit('t1', 'same'));
    const again = await writer.write(submit('t2', 'same'));
    expect(again.kind).toBe('duplicate');
    expect(store.streams.has(taskStreamId(ACME, 't2'))).toBe(false);
  });

  it('hands the audit record of a written command to the store with its change, sealed once', async () => {
    const { store, writer, audit } = setUp();
    const outcome = await writer.write({ ...submit('t1'), audit: sendRecord('t1') });
    expect(outcome.kind).toBe('written');
    const sealed = store.batches[0]?.[0]?.audit;
    expect(sealed).toMatchObject({ operation: 'a2a.SendMessage', resource: 'task/t1' });
    expect(sealed?.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(sealed?.occurredAt).toBe(NOW.toISOString());
    expect(audit.entries).toEqual([]);
  });

  it('records the audit entry apart when the decision changes nothing; leaves a repeat to its caller', async () => {
    const { store, writer, audit } = setUp();
    await writer.write(submit('t1', 'same'));
    const repeat = await writer.write({ ...submit('t2', 'same'), audit: sendRecord('t2') });
    const nothing = await writer.write({
      ...task('t1'),
      decide: () => [],
      metadata: caller,
      audit: sendRecord('t1'),
    });
    expect([repeat.kind, nothing.kind]).toEqual(['duplicate', 'unchanged']);
    expect(audit.entries.map((e) => e.resource)).toEqual(['task/t1']);
    expect(store.streams.has(taskStreamId(ACME, 't2'))).toBe(false);
  });

  it('refuses a command whose audit entry cannot be stored, and writes nothing for it', async () => {
    const { store, writer } = setUp();
    await expect(
      writer.write({ ...submit('t1'), audit: { ...sendRecord('t1'), operation: 'no dots' } }),
    ).rejects.toThrow();
    expect(store.batches).toHaveLength(0);
  });

  it('applies a command with an idempotency key the stream holds only once', async () => {
    const { store, writer } = setUp();
    await writer.write({
      ...submit('t1'),
      decide: (s) => decideAll([submitCommand('t1'), lease], s),
    });
    const first = await writer.write(update('t1', 'TASK_STATE_WORKING', '1:same'));
    writer.forget(task('t1'));
    const repeat = await writer.write(update('t1', 'TASK_STATE_WORKING', '1:same'));
    expect(first.kind).toBe('written');
    expect(repeat.kind).toBe('unchanged');
    expect(store.streams.get(taskStreamId(ACME, 't1'))?.events).toHaveLength(3);
  });

  it('refuses only the command whose decision throws', async () => {
    const { writer } = setUp();
    const [bad, good] = await Promise.allSettled([
      writer.write({
        ...task('missing'),
        decide: (s) => decide(status('TASK_STATE_WORKING'), s),
        metadata: worker(),
      }),
      writer.write(submit('t2')),
    ]);
    expect(bad?.status).toBe('rejected');
    expect(good?.status === 'fulfilled' && good.value.kind).toBe('written');
  });

  it('tries a batch that deadlocked again, and reports other database failures', async () => {
    const { store, writer } = setUp();
    store.failNextAppends.push(Object.assign(new Error('deadlock'), { code: '40P01' }));
    expect((await writer.write(submit('t1'))).kind).toBe('written');
    store.failNextAppends.push(Object.assign(new Error('gone'), { code: '57P01' }));
    await expect(writer.write(submit('t2'))).rejects.toThrow('gone');
    expect(store.streams.has(taskStreamId(ACME, 't2'))).toBe(false);
  });

  it('with two batches in flight, sends a second while the first waits for its commit, never with a stream of the first', async () => {
    const { store, writer } = setUp(2);
    let commit: () => void = () => undefined;
    store.hold = new Promise<void>((resolve) => {
      commit = resolve;
    });
    const first = writer.write({
      ...submit('t1'),
      decide: (s) => decideAll([submitCommand('t1'), lease], s),
    });
    await until(() => store.appending === 1);
    const second = writer.write(submit('t2'));
    const sameStream = writer.write(update('t1', 'TASK_STATE_WORKING', '1:e'));
    await until(() => store.appending === 2);
    await new Promise((resolve) => setImmediate(resolve));
    expect(store.appending).toBe(2);
    commit();
    const outcomes = await Promise.all([first, second, sameStream]);
    expect(outcomes.map((o) => o.kind)).toEqual(['written', 'written', 'written']);
    expect(store.batches.map((b) => b.map((c) => c.streamId))).toEqual([
      [taskStreamId(ACME, 't1')],
      [taskStreamId(ACME, 't2')],
      [taskStreamId(ACME, 't1')],
    ]);
  });

  it('with one batch in flight (the default), gathers what arrives meanwhile into the next batch', async () => {
    const { store, writer } = setUp();
    let commit: () => void = () => undefined;
    store.hold = new Promise<void>((resolve) => {
      commit = resolve;
    });
    const first = writer.write(submit('t1'));
    await until(() => store.appending === 1);
    const rest = ['t2', 't3', 't4'].map((id) => writer.write(submit(id)));
    await new Promise((resolve) => setImmediate(resolve));
    expect(store.appending).toBe(1);
    commit();
    await Promise.all([first, ...rest]);
    expect(store.batches.map((b) => b.length)).toEqual([1, 3]);
  });

  it('tells commit listeners about every change it wrote', async () => {
    const { writer } = setUp();
    const seen: string[] = [];
    writer.onCommitted((ref, after) => seen.push(`${ref.tenantId}/${ref.taskId}@${after.version}`));
    await Promise.all([writer.write(submit('t1')), writer.write(submit('t2'))]);
    expect(seen).toEqual(['acme/t1@1', 'acme/t2@1']);
  });

  it('says when a batch holding a task is over, after its commit listeners heard of it', async () => {
    const { store, writer } = setUp();
    const told: string[] = [];
    writer.onCommitted((_task, after) => told.push(after.task.id));
    expect(writer.settling(task('t1'))).toBeUndefined();
    let commit: () => void = () => undefined;
    store.hold = new Promise<void>((resolve) => {
      commit = resolve;
    });
    const written = writer.write(submit('t1'));
    await until(() => store.appending === 1);
    const settling = writer.settling(task('t1'));
    expect(settling).toBeInstanceOf(Promise);
    expect(writer.settling(task('t2'))).toBeUndefined();
    commit();
    await settling;
    expect(told).toEqual(['t1']);
    expect((await written).kind).toBe('written');
    expect(writer.settling(task('t1'))).toBeUndefined();
  });
});

async function until(condition: () => boolean): Promise<void> {
  for (let turns = 0; !condition(); turns++) {
    if (turns > 100) {
      throw new Error('condition not reached');
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
}

function submitCommand(taskId: string): TaskCommand {
  return {
    type: 'SubmitTask',
    taskId,
    contextId: 'ctx',
    agentId: 'echo',
    ownerId: 'alice',
    message: { messageId: `m-${taskId}`, role: 'ROLE_USER', parts: [{ text: 'hi' }] },
    now: NOW,
  };
}

function update(
  taskId: string,
  state: 'TASK_STATE_WORKING' | 'TASK_STATE_COMPLETED',
  key: string,
): WriteCommand {
  return {
    ...task(taskId),
    decide: (s) => decide(status(state), s),
    metadata: worker(key),
  };
}

import type { ServerDuplexStream } from '@grpc/grpc-js';
import type { workerPb } from '@lib/a2a-protocol';
import { agentIdOf, tenantIdOf } from '@lib/tenancy';
import { describe, expect, it } from 'vitest';
import { WorkerSession } from './worker-session';

function session(takesAssignmentBatches: boolean): {
  session: WorkerSession;
  written: workerPb.PlatformMessage[];
} {
  const written: workerPb.PlatformMessage[] = [];
  const call = { write: (message: workerPb.PlatformMessage) => written.push(message) };
  return {
    session: new WorkerSession(
      'w-1',
      { tenantId: tenantIdOf('t'), agentId: agentIdOf('a') },
      8,
      call as unknown as ServerDuplexStream<workerPb.WorkerMessage, workerPb.PlatformMessage>,
      'test',
      new Date(),
      takesAssignmentBatches,
    ),
    written,
  };
}

function assignment(taskId: string): workerPb.Assignment {
  return {
    taskId,
    contextId: 'ctx',
    leaseEpoch: 1,
    leaseExpiresAt: undefined,
    task: undefined,
    message: undefined,
    attempt: 1,
    mayReply: false,
    traceparent: '',
  };
}

const endOfTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('WorkerSession.send', () => {
  it('sends the assignments of one turn as one message to a worker that takes batches', async () => {
    const { session: s, written } = session(true);
    s.send({ assignment: assignment('a') });
    s.send({ assignment: assignment('b') });
    s.send({ assignment: assignment('c') });
    expect(written).toEqual([]);
    await endOfTurn();
    expect(written).toEqual([
      { assignments: { assignments: [assignment('a'), assignment('b'), assignment('c')] } },
    ]);
    s.send({ assignment: assignment('d') });
    await endOfTurn();
    expect(written[1]).toEqual({ assignment: assignment('d') });
  });

  it('sends the held assignments before any other message, so the worker sees the order of sending', () => {
    const { session: s, written } = session(true);
    s.send({ assignment: assignment('a') });
    s.send({ assignment: assignment('b') });
    s.send({ cancel: { taskId: 'a', leaseEpoch: 1 } });
    expect(written).toEqual([
      { assignments: { assignments: [assignment('a'), assignment('b')] } },
      { cancel: { taskId: 'a', leaseEpoch: 1 } },
    ]);
  });

  it('sends each assignment alone, at once, to a worker that does not say it takes batches', () => {
    const { session: s, written } = session(false);
    s.send({ assignment: assignment('a') });
    s.send({ assignment: assignment('b') });
    expect(written).toEqual([{ assignment: assignment('a') }, { assignment: assignment('b') }]);
  });

  it('drops held assignments when the session closes before the end of the turn', async () => {
    const { session: s, written } = session(true);
    expect(s.send({ assignment: assignment('a') })).toBe(true);
    s.closed = true;
    expect(s.send({ assignment: assignment('b') })).toBe(false);
    await endOfTurn();
    expect(written).toEqual([]);
  });
});

import { taskEventOf, type StoredTaskEvent } from '@lib/event-store';
import { describe, expect, it } from 'vitest';
import { timelineEntry } from './task-timeline';

const TRACE = '0af7651916cd43dd8448eb211c80319c';

function stored(type: string, data: unknown, metadata: object): StoredTaskEvent {
  return {
    generation: 3,
    eventId: 'e-3',
    event: taskEventOf({ event_type: type, schema_version: 1, data }),
    schemaVersion: 1,
    metadata: metadata as StoredTaskEvent['metadata'],
    recordedAt: new Date('2026-12-07T10:00:00.123Z'),
  };
}

describe('a task timeline entry', () => {
  it('spells out who caused a caller’s change, through which binding, in which trace and request', () => {
    const entry = timelineEntry(
      stored(
        'TaskSubmitted',
        {
          taskId: 't',
          contextId: 'c',
          agentId: 'echo',
          ownerId: 'alice',
          submittedAt: '2026-12-07T10:00:00Z',
          message: { messageId: 'm-1', role: 'ROLE_USER', parts: [{ text: 'secret content' }] },
        },
        {
          actor: { kind: 'caller', id: 'alice' },
          binding: 'JSONRPC',
          traceparent: `00-${TRACE}-b7ad6b7169203331-01`,
          correlationId: 'req-1',
        },
      ),
    );
    expect(entry).toEqual({
      generation: 3,
      eventId: 'e-3',
      type: 'TaskSubmitted',
      schemaVersion: 1,
      recordedAt: '2026-12-07T10:00:00.123Z',
      actor: { kind: 'caller', id: 'alice' },
      principalId: 'alice',
      binding: 'JSONRPC',
      traceId: TRACE,
      requestId: 'req-1',
      summary: { messageId: 'm-1', role: 'ROLE_USER', parts: 1 },
    });
    expect(JSON.stringify(entry)).not.toContain('secret content');
  });

  it('names the lease and the worker of grants, expiries and releases, with no principal', () => {
    const system = { actor: { kind: 'system', id: 'replica-1' }, binding: 'dispatcher' };
    const granted = timelineEntry(
      stored(
        'TaskLeaseGranted',
        { leaseEpoch: 2, workerId: 'w-1', expiresAt: '2026-12-07T10:00:10Z', attempt: 2 },
        system,
      ),
    );
    expect(granted.summary).toEqual({
      leaseEpoch: 2,
      workerId: 'w-1',
      expiresAt: '2026-12-07T10:00:10Z',
      attempt: 2,
    });
    expect(granted.principalId).toBeNull();
    expect(granted.traceId).toBeNull();
    expect(granted.requestId).toBeNull();
    expect(
      timelineEntry(stored('TaskLeaseExpired', { leaseEpoch: 2, workerId: 'w-1' }, system)).summary,
    ).toEqual({ leaseEpoch: 2, workerId: 'w-1' });
    expect(
      timelineEntry(
        stored('TaskLeaseReleased', { leaseEpoch: 2, workerId: 'w-1', reason: 'draining' }, system),
      ).summary,
    ).toEqual({ leaseEpoch: 2, workerId: 'w-1', reason: 'draining' });
  });

  it('gives the new state of a status update and who asked for a cancel, until when', () => {
    const worker = { actor: { kind: 'agent-worker', id: 'w-1' }, binding: 'worker' };
    expect(
      timelineEntry(
        stored(
          'TaskStatusUpdated',
          {
            status: {
              state: 'TASK_STATE_COMPLETED',
              message: { messageId: 'm-2', role: 'ROLE_AGENT', parts: [] },
            },
          },
          worker,
        ),
      ).summary,
    ).toEqual({ state: 'TASK_STATE_COMPLETED', messageId: 'm-2', role: 'ROLE_AGENT' });
    expect(
      timelineEntry(
        stored(
          'TaskCancelRequested',
          { requestedBy: 'alice', deadline: '2026-12-07T10:00:05Z' },
          { actor: { kind: 'caller', id: 'alice' }, binding: 'HTTP+JSON' },
        ),
      ).summary,
    ).toEqual({ requestedBy: 'alice', deadline: '2026-12-07T10:00:05Z' });
  });

  it('summarises an artifact chunk without its parts’ content', () => {
    const entry = timelineEntry(
      stored(
        'ArtifactChunkAppended',
        {
          artifact: { artifactId: 'a-1', name: 'report', parts: [{ text: 'x' }, { text: 'y' }] },
          append: true,
          lastChunk: false,
        },
        { actor: { kind: 'agent-worker', id: 'w-1' }, binding: 'worker' },
      ),
    );
    expect(entry.summary).toEqual({
      artifactId: 'a-1',
      artifactName: 'report',
      parts: 2,
      append: true,
      lastChunk: false,
    });
  });

  it('shows an event type it does not know with an empty summary rather than failing', () => {
    const entry = timelineEntry(stored('TaskSomethingNew', { x: 1 }, { actor: undefined }));
    expect(entry.summary).toEqual({});
    expect(entry.actor).toBeNull();
    expect(entry.binding).toBeNull();
  });
});

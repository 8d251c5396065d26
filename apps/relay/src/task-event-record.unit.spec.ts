import type { CommittedTaskEvent } from '@lib/event-store';
import { tenantIdOf } from '@lib/ids';
import { describe, expect, it } from 'vitest';
import { toTaskEventRecord } from './task-event-record';

const status = { state: 'TASK_STATE_WORKING', timestamp: '2026-01-01T00:00:00.000Z' } as const;

const row: CommittedTaskEvent = {
  eventId: '0190-e1',
  tenantId: tenantIdOf('acme'),
  streamId: 'task:acme:t-1',
  streamVersion: 3,
  globalPosition: '42',
  transactionId: '900',
  event: { type: 'TaskStatusUpdated', data: { status } },
  schemaVersion: 1,
  metadata: {
    actor: { kind: 'agent-worker', id: 'w1' },
    traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
  },
  recordedAt: '2026-01-01T00:00:00.123Z',
  contextId: 'c-1',
  agentId: 'echo',
};

describe('task event records', () => {
  it('are keyed by task id and carry the CloudEvents attributes, tenant and traceparent', () => {
    const record = toTaskEventRecord(row);
    expect(record.key).toBe('t-1');
    expect(record.headers).toEqual({
      ce_specversion: '1.0',
      ce_id: '0190-e1',
      ce_type: 'dev.a2a-platform.task.TaskStatusUpdated.v1',
      ce_source: 'a2a-platform',
      ce_subject: 't-1',
      ce_time: '2026-01-01T00:00:00.123Z',
      ce_datacontenttype: 'application/json',
      tenant: 'acme',
      generation: '3',
      traceparent: row.metadata.traceparent,
    });
  });

  it('carry the versioned value with the dedupe key and the A2A stream response', () => {
    const value = JSON.parse(toTaskEventRecord(row).value);
    expect(value).toMatchObject({
      schema: 'a2a-platform.task-event',
      schemaVersion: 1,
      taskId: 't-1',
      generation: 3,
      tenantId: tenantIdOf('acme'),
      agentId: 'echo',
      type: 'TaskStatusUpdated',
      streamResponse: {
        statusUpdate: {
          taskId: 't-1',
          contextId: 'c-1',
          status,
        },
      },
    });
  });

  it('leave out traceparent when the event has none and streamResponse for internal events', () => {
    const record = toTaskEventRecord({
      ...row,
      event: {
        type: 'TaskLeaseGranted',
        data: { leaseEpoch: 1, workerId: 'w', expiresAt: 'x', attempt: 1 },
      },
      metadata: { actor: { kind: 'system', id: 'r' } },
    });
    expect(record.headers).not.toHaveProperty('traceparent');
    expect(JSON.parse(record.value).streamResponse).toBeNull();
  });

  it('take the task id whole from the stream id, colons included', () => {
    const record = toTaskEventRecord({ ...row, streamId: 'task:acme:a:b' });
    expect(record.key).toBe('a:b');
    expect(JSON.parse(record.value).taskId).toBe('a:b');
  });
});

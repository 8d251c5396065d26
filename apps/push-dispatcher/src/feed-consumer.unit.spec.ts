import { describe, expect, it } from 'vitest';
import { lanesOf, parseRecord } from './feed-consumer';

const record = (extra: Record<string, unknown> = {}): Buffer =>
  Buffer.from(
    JSON.stringify({
      schema: 'a2a-platform.task-event',
      schemaVersion: 1,
      eventId: '0190f3d6-7f00-7000-8000-000000000001',
      tenantId: 'demo',
      taskId: 't1',
      generation: 3,
      streamResponse: { statusUpdate: { taskId: 't1', status: { state: 'TASK_STATE_WORKING' } } },
      ...extra,
    }),
  );

describe('parseRecord', () => {
  it('takes the deliverable event of a task-event record, its body the streamResponse as JSON', () => {
    expect(parseRecord(record())).toStrictEqual([
      {
        tenantId: 'demo',
        taskId: 't1',
        generation: 3,
        eventId: '0190f3d6-7f00-7000-8000-000000000001',
        body: '{"statusUpdate":{"taskId":"t1","status":{"state":"TASK_STATE_WORKING"}}}',
        traceparent: null,
      },
    ]);
  });

  it('keeps the trace context of the record (its traceparent header) for the delivery', () => {
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    expect(parseRecord(record(), traceparent)).toMatchObject([{ traceparent }]);
  });

  it('has nothing to deliver for an event no stream shows', () => {
    expect(parseRecord(record({ streamResponse: null }))).toStrictEqual([]);
  });

  it('refuses what is not a task-event record of schema version 1 (or names no tenant id)', () => {
    for (const value of [
      null,
      Buffer.from('not json'),
      Buffer.from('42'),
      record({ schema: 'other' }),
      record({ schemaVersion: 2 }),
      record({ generation: 0 }),
      record({ generation: 1.5 }),
      record({ tenantId: 7 }),
      record({ tenantId: 'no/tenant' }),
      record({ streamResponse: 'text' }),
    ]) {
      expect(parseRecord(value), String(value)).toBeUndefined();
    }
  });
});

describe('lanesOf', () => {
  it('schedules one run per lane, named after one of its new deliveries, none behind an open one', () => {
    const lane = (taskId: string, configId = 'c') => ({ tenantId: 'demo', taskId, configId });
    expect(
      lanesOf([
        { deliveryId: 'd1', lane: lane('t1'), behind: false },
        { deliveryId: 'd2', lane: lane('t1'), behind: false },
        { deliveryId: 'd3', lane: lane('t2'), behind: false },
        { deliveryId: 'd4', lane: lane('t1', 'other'), behind: false },
        { deliveryId: 'd5', lane: lane('t3'), behind: true },
      ]),
    ).toStrictEqual([
      { lane: lane('t1'), jobId: 'a-d1-0' },
      { lane: lane('t2'), jobId: 'a-d3-0' },
      { lane: lane('t1', 'other'), jobId: 'a-d4-0' },
    ]);
  });
});

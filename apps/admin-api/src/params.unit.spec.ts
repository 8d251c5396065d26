import { InvalidInput } from '@lib/tenancy';
import { describe, expect, it } from 'vitest';
import { auditQuery } from './audit.controller';
import { parseQuery } from './params';
import { deliveryQuery } from './push-deliveries.controller';
import { taskEventsQuery, taskListQuery } from './tasks.controller';

/** The fields a refused query names. */
function refused(parse: () => unknown): string[] {
  try {
    parse();
  } catch (err) {
    if (err instanceof InvalidInput) {
      return err.fields.map((f) => f.field);
    }
    throw err;
  }
  throw new Error('the query was accepted');
}

describe('query parameters', () => {
  it('are read by the route’s schema, with its defaults, ignoring parameters it does not name', () => {
    expect(
      parseQuery(taskListQuery, { state: 'TASK_STATE_WORKING', limit: '5', other: 'x' }),
    ).toEqual({ state: 'TASK_STATE_WORKING', limit: 5 });
    expect(parseQuery(taskListQuery, {})).toEqual({ limit: 50 });
    expect(parseQuery(taskEventsQuery, {})).toEqual({ after: 0, limit: 200 });
    expect(parseQuery(deliveryQuery, { task: 't1', state: 'dead' })).toEqual({
      task: 't1',
      state: 'dead',
    });
  });

  it('are refused with 400 naming each bad one: repeated, empty, out of range, not a value', () => {
    expect(refused(() => parseQuery(taskListQuery, { state: 'DONE', limit: '0' }))).toEqual([
      'state',
      'limit',
    ]);
    expect(refused(() => parseQuery(taskListQuery, { agentId: ['a', 'b'] }))).toEqual(['agentId']);
    expect(refused(() => parseQuery(taskListQuery, { contextId: '' }))).toEqual(['contextId']);
    expect(refused(() => parseQuery(taskEventsQuery, { after: 'x' }))).toEqual(['after']);
    expect(refused(() => parseQuery(taskEventsQuery, { limit: '1.5' }))).toEqual(['limit']);
    expect(refused(() => parseQuery(deliveryQuery, { limit: '501' }))).toEqual(['limit']);
    expect(refused(() => parseQuery(auditQuery, { outcome: 'meh', from: 'soon' }))).toEqual([
      'from',
      'outcome',
    ]);
  });

  it('read times as Date.parse does', () => {
    expect(parseQuery(auditQuery, { from: '2025-01-02T03:04:05Z', to: '2025-02-01' })).toEqual({
      from: new Date('2025-01-02T03:04:05Z'),
      to: new Date('2025-02-01'),
    });
  });
});

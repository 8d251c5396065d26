import { TASK_STATES, type TaskStateName } from '@lib/a2a-protocol';
import { describe, expect, it } from 'vitest';
import { endsAssignment, finalActionFor, type ExecuteOutcome } from './execution-outcome';

const returned: ExecuteOutcome = { kind: 'returned' };
const threw = (error: unknown): ExecuteOutcome => ({ kind: 'threw', error });
const ENDING: TaskStateName[] = [
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_REJECTED',
  'TASK_STATE_INPUT_REQUIRED',
  'TASK_STATE_AUTH_REQUIRED',
];

describe('endsAssignment', () => {
  it('is true for terminal and interrupted states only', () => {
    expect(TASK_STATES.filter(endsAssignment)).toEqual(expect.arrayContaining(ENDING));
    expect(TASK_STATES.filter(endsAssignment)).toHaveLength(ENDING.length);
  });
});

describe('finalActionFor (the completion rule)', () => {
  it('completes a task whose execute returned without ending it', () => {
    expect(finalActionFor(returned, undefined, undefined)).toEqual({ kind: 'complete' });
    expect(finalActionFor(returned, 'TASK_STATE_WORKING', undefined)).toEqual({ kind: 'complete' });
  });

  it('fails a task whose execute threw, with the error message', () => {
    expect(finalActionFor(threw(new Error('boom')), 'TASK_STATE_WORKING', undefined)).toEqual({
      kind: 'fail',
      text: 'boom',
    });
    expect(finalActionFor(threw('plain'), undefined, undefined)).toEqual({
      kind: 'fail',
      text: 'plain',
    });
    expect(finalActionFor(threw(new Error('')), undefined, undefined)).toEqual({
      kind: 'fail',
      text: 'the agent failed',
    });
  });

  it.each(ENDING)('publishes nothing after the agent published %s', (state) => {
    expect(finalActionFor(returned, state, undefined)).toEqual({ kind: 'none' });
    expect(finalActionFor(threw(new Error('late')), state, undefined)).toEqual({ kind: 'none' });
    expect(finalActionFor(returned, state, 'cancel')).toEqual({ kind: 'none' });
  });

  it('cancels a cancelled task however execute ended', () => {
    expect(finalActionFor(returned, 'TASK_STATE_WORKING', 'cancel')).toEqual({ kind: 'cancel' });
    expect(finalActionFor(threw(new Error('aborted')), undefined, 'cancel')).toEqual({
      kind: 'cancel',
    });
  });

  it.each(['lease-lost', 'shutdown'] as const)(
    'publishes nothing once the cause is %s',
    (cause) => {
      expect(finalActionFor(returned, 'TASK_STATE_WORKING', cause)).toEqual({ kind: 'none' });
      expect(finalActionFor(threw(new Error('x')), undefined, cause)).toEqual({ kind: 'none' });
    },
  );
});

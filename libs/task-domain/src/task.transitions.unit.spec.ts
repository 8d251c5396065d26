import { TASK_STATES, type TaskStateName } from '@lib/a2a-protocol';
import { describe, expect, it } from 'vitest';
import { canTransition, TASK_TRANSITIONS } from './task.transitions';

const LIVE_STATES = TASK_STATES.filter((s) => s !== 'TASK_STATE_UNSPECIFIED');
const TERMINAL: readonly TaskStateName[] = [
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_REJECTED',
];
const ACTIVE: readonly TaskStateName[] = ['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING'];
const INTERRUPTED: readonly TaskStateName[] = [
  'TASK_STATE_INPUT_REQUIRED',
  'TASK_STATE_AUTH_REQUIRED',
];

const table = TASK_TRANSITIONS as Readonly<Record<string, readonly TaskStateName[]>>;
const allPairs = TASK_STATES.flatMap((from) => TASK_STATES.map((to) => [from, to] as const));
const legalPairs = allPairs.filter(([from, to]) => table[from]?.includes(to) === true);
const unlistedPairs = allPairs.filter(([from, to]) => table[from]?.includes(to) !== true);

describe('TASK_TRANSITIONS table (§10.3)', () => {
  it('has one row for every A2A state except UNSPECIFIED', () => {
    expect(Object.keys(TASK_TRANSITIONS).sort()).toEqual([...LIVE_STATES].sort());
  });

  it('lists no target twice and never lists UNSPECIFIED as a target', () => {
    for (const [from, targets] of Object.entries(table)) {
      expect(new Set(targets).size, from).toBe(targets.length);
      expect(targets, from).not.toContain('TASK_STATE_UNSPECIFIED');
    }
  });

  it('splits the 81 ordered state pairs into listed and unlisted ones', () => {
    expect(allPairs).toHaveLength(TASK_STATES.length ** 2);
    expect(legalPairs.length + unlistedPairs.length).toBe(allPairs.length);
    expect(legalPairs.length).toBeGreaterThan(0);
  });
});

describe('canTransition', () => {
  it.each(legalPairs)('accepts the listed change %s → %s (§10.3)', (from, to) => {
    expect(canTransition(from, to)).toBe(true);
  });

  it.each(unlistedPairs)('refuses the unlisted change %s → %s (§10.3)', (from, to) => {
    expect(canTransition(from, to)).toBe(false);
  });

  it.each(TERMINAL)(
    'allows nothing out of the terminal state %s: it is immutable (§10.3)',
    (from) => {
      expect(TASK_TRANSITIONS[from as keyof typeof TASK_TRANSITIONS]).toEqual([]);
      for (const to of TASK_STATES) {
        expect(canTransition(from, to), `${from} → ${to}`).toBe(false);
      }
    },
  );

  it('never allows TASK_STATE_UNSPECIFIED, neither as source nor as target', () => {
    for (const other of TASK_STATES) {
      expect(canTransition('TASK_STATE_UNSPECIFIED', other), `UNSPECIFIED → ${other}`).toBe(false);
      expect(canTransition(other, 'TASK_STATE_UNSPECIFIED'), `${other} → UNSPECIFIED`).toBe(false);
    }
  });

  it.each([...ACTIVE, ...INTERRUPTED])(
    'lets the non-terminal state %s end in every terminal state (§10.3)',
    (from) => {
      for (const to of TERMINAL) {
        expect(canTransition(from, to), `${from} → ${to}`).toBe(true);
      }
    },
  );

  it.each(ACTIVE)('lets the active state %s stop for input or auth (§10.3)', (from) => {
    for (const to of INTERRUPTED) {
      expect(canTransition(from, to), `${from} → ${to}`).toBe(true);
    }
  });

  it.each(INTERRUPTED)('lets the interrupted state %s resume to WORKING (§10.3)', (from) => {
    expect(canTransition(from, 'TASK_STATE_WORKING')).toBe(true);
  });

  it.each([...ACTIVE, ...INTERRUPTED])(
    'lets the non-terminal state %s repeat itself (progress updates)',
    (state) => {
      expect(canTransition(state, state)).toBe(true);
    },
  );

  it('never returns to SUBMITTED from any other state', () => {
    for (const from of LIVE_STATES.filter((s) => s !== 'TASK_STATE_SUBMITTED')) {
      expect(canTransition(from, 'TASK_STATE_SUBMITTED'), from).toBe(false);
    }
  });

  it('does not switch directly between INPUT_REQUIRED and AUTH_REQUIRED', () => {
    expect(canTransition('TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_AUTH_REQUIRED')).toBe(false);
    expect(canTransition('TASK_STATE_AUTH_REQUIRED', 'TASK_STATE_INPUT_REQUIRED')).toBe(false);
  });
});

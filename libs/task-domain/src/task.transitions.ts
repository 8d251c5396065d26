import type { TaskStateName } from '@lib/a2a-protocol';

type LiveState = Exclude<TaskStateName, 'TASK_STATE_UNSPECIFIED'>;

const TERMINALS: readonly LiveState[] = [
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_REJECTED',
];

/**
 * The legal A2A state changes (spec digest §10.3), as data. A state may repeat itself while active
 * (progress updates while WORKING); terminal states allow nothing.
 */
export const TASK_TRANSITIONS: Readonly<Record<LiveState, readonly LiveState[]>> = {
  TASK_STATE_SUBMITTED: [
    'TASK_STATE_SUBMITTED',
    'TASK_STATE_WORKING',
    'TASK_STATE_INPUT_REQUIRED',
    'TASK_STATE_AUTH_REQUIRED',
    ...TERMINALS,
  ],
  TASK_STATE_WORKING: [
    'TASK_STATE_WORKING',
    'TASK_STATE_INPUT_REQUIRED',
    'TASK_STATE_AUTH_REQUIRED',
    ...TERMINALS,
  ],
  TASK_STATE_INPUT_REQUIRED: ['TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_WORKING', ...TERMINALS],
  TASK_STATE_AUTH_REQUIRED: ['TASK_STATE_AUTH_REQUIRED', 'TASK_STATE_WORKING', ...TERMINALS],
  TASK_STATE_COMPLETED: [],
  TASK_STATE_FAILED: [],
  TASK_STATE_CANCELED: [],
  TASK_STATE_REJECTED: [],
};

export function canTransition(from: TaskStateName, to: TaskStateName): boolean {
  if (from === 'TASK_STATE_UNSPECIFIED' || to === 'TASK_STATE_UNSPECIFIED') {
    return false;
  }
  return TASK_TRANSITIONS[from].includes(to);
}

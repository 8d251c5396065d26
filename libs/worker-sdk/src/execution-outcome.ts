import { isInterruptedState, isTerminalState, type TaskStateName } from '@lib/a2a-protocol';

/** How `execute` settled. */
export type ExecuteOutcome =
  | { readonly kind: 'returned' }
  | { readonly kind: 'threw'; readonly error: unknown };

/** Why the SDK aborted the execution's signal, if it did. */
export type StopCause = 'cancel' | 'lease-lost' | 'shutdown';

/** The status the SDK publishes on the agent's behalf once `execute` has settled. */
export type FinalAction =
  | { readonly kind: 'none' }
  | { readonly kind: 'complete' }
  | { readonly kind: 'cancel' }
  | { readonly kind: 'fail'; readonly text: string };

/** Whether a status ends the assignment (and with it the lease). */
export function endsAssignment(state: TaskStateName): boolean {
  return isTerminalState(state) || isInterruptedState(state);
}

/**
 * The completion rule. Nothing is published when the agent already ended the assignment, or when the
 * worker lost the lease or is shutting down (the platform owns the task again). Otherwise a cancel request
 * wins over how `execute` ended; an error fails the task; a plain return completes it.
 */
export function finalActionFor(
  outcome: ExecuteOutcome,
  lastPublishedState: TaskStateName | undefined,
  stopCause: StopCause | undefined,
): FinalAction {
  if (lastPublishedState !== undefined && endsAssignment(lastPublishedState)) {
    return { kind: 'none' };
  }
  switch (stopCause) {
    case 'lease-lost':
    case 'shutdown':
      return { kind: 'none' };
    case 'cancel':
      return { kind: 'cancel' };
    case undefined:
      return outcome.kind === 'returned'
        ? { kind: 'complete' }
        : { kind: 'fail', text: failureText(outcome.error) };
  }
}

function failureText(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.trim() === '' ? 'the agent failed' : text;
}

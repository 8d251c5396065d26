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

/**
 * What the agent published that may end the assignment: a status's state, or `reply` (it answered the
 * message with a bare Message instead of a task).
 */
export type Published = TaskStateName | 'reply';

/** Whether a status (or the reply) ends the assignment (and with it the lease). */
export function endsAssignment(published: Published): boolean {
  return published === 'reply' || isTerminalState(published) || isInterruptedState(published);
}

/**
 * The completion rule. Nothing is published when the agent already ended the assignment (a terminal or
 * interrupted status, or a reply), or when the worker lost the lease or is shutting down (the platform owns
 * the task again). Otherwise a cancel request wins over how `execute` ended; an error fails the task; a
 * plain return completes it.
 */
export function finalActionFor(
  outcome: ExecuteOutcome,
  lastPublishedState: Published | undefined,
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

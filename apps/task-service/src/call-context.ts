import type { EventMetadata } from '@lib/event-store';
import type { CallContext } from '@lib/tenancy';

export type { CallContext };

/** Event metadata for a change a caller made through a binding. */
export function callerMetadata(ctx: CallContext): EventMetadata {
  return {
    actor: { kind: 'caller', id: ctx.principalId },
    binding: ctx.binding,
    ...(ctx.traceparent ? { traceparent: ctx.traceparent } : {}),
    ...(ctx.requestId ? { correlationId: ctx.requestId, causationId: ctx.requestId } : {}),
  };
}

/** An operation's result and, when it shows a task, that task's generation. */
export interface Versioned<T> {
  result: T;
  version?: number;
}

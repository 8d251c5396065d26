import type { EventMetadata } from '@lib/event-store';
import { taskIdOf, type CallContext, type TaskRef } from '@lib/tenancy';

export type { CallContext };

/** The task a request names by its id (as decoded), in the caller's tenant. */
export function callerTask(ctx: CallContext, taskId: string): TaskRef {
  return { tenantId: ctx.tenantId, taskId: taskIdOf(taskId) };
}

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

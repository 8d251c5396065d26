import { trace } from '@opentelemetry/api';
import { addToLogContext } from './log-context';
import { ATTRIBUTES } from './span-names';

/**
 * What a call is about, noted as soon as it is known: on the call's log context (every later line of the
 * call names it) and on the span recording the call, if one is.
 */
export function noteAgent(tenant: string, agent: string): void {
  addToLogContext({ tenant, agent });
  trace.getActiveSpan()?.setAttributes({ [ATTRIBUTES.tenant]: tenant, [ATTRIBUTES.agent]: agent });
}

/** The task the call is about (chosen, or named by the request or the result). */
export function noteTask(taskId: string): void {
  addToLogContext({ taskId });
  trace.getActiveSpan()?.setAttribute(ATTRIBUTES.taskId, taskId);
}

import { addToLogContext } from './log-context';

/**
 * What a call is about, noted as soon as it is known: on the call's log context (every later line of the
 * call names it).
 */
export function noteAgent(tenant: string, agent: string): void {
  addToLogContext({ tenant, agent });
}

/** The task the call is about (chosen, or named by the request or the result). */
export function noteTask(taskId: string): void {
  addToLogContext({ taskId });
}

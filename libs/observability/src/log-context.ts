import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * What every log line written while a call is handled says about that call. Set where the call enters a
 * process (the ingress bindings, the task-service's command and worker APIs) and completed as it becomes
 * known (tenant once authenticated, task id once chosen).
 */
export interface LogContext {
  requestId?: string;
  tenant?: string;
  agent?: string;
  taskId?: string;
  /**
   * The caller's trace id when no span of this process records the call (tracing off): log lines still
   * name the trace the caller started. A recording span's ids win.
   */
  traceId?: string;
}

const storage = new AsyncLocalStorage<LogContext>();

/** Runs `work` with `fields` added to the current log context (a copy: the caller's context is unchanged). */
export function withLogContext<T>(fields: LogContext, work: () => T): T {
  return storage.run({ ...storage.getStore(), ...fields }, work);
}

/** Adds fields learnt during the call (its tenant, its task) to the current log context, if there is one. */
export function addToLogContext(fields: LogContext): void {
  const store = storage.getStore();
  if (store) {
    Object.assign(store, fields);
  }
}

/** The current call's log context, if a call is being handled. */
export function currentLogContext(): Readonly<LogContext> | undefined {
  return storage.getStore();
}

/** Runs `work` outside of any call's log context: for work done for many calls at once. */
export function outsideLogContext<T>(work: () => T): T {
  return storage.exit(work);
}

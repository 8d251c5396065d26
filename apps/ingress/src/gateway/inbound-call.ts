import { traceIdOf } from '@lib/audit';
import {
  currentLogContext,
  fieldLogger,
  noteAgent,
  noteTask,
  rootLogger,
  withLogContext,
} from '@lib/observability';
import type { AgentRef } from '@lib/tenancy';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';

/** The request id's header (HTTP) and metadata key (gRPC), on the request and on the response. */
export const REQUEST_ID_HEADER = 'x-request-id';

/** A client's request id is kept when it is a short token (RFC 9110 `tchar`s only). */
const SANE_REQUEST_ID = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}$/;

/** The request id of a call: the client's `X-Request-Id` when it is sane, else a new UUID. */
export function requestIdOf(header: string | undefined): string {
  return header !== undefined && SANE_REQUEST_ID.test(header) ? header : randomUUID();
}

/** What a binding knows about a call before it reads its body. */
export interface InboundCall {
  requestId: string;
  /** The caller's W3C trace context, as sent. */
  traceparent: string | undefined;
}

/** Tells that the call was answered (its HTTP status, when it has one). */
export type Answered = (status?: number) => void;

const accessLog = fieldLogger('A2aCall');

/**
 * Runs a binding's handling of one A2A call in its context: every log line written meanwhile names the
 * request (and the caller's trace), also in the task-service when it runs in this process. At LOG_LEVEL
 * debug, the call's answer is logged with its duration ({@link Answered}).
 */
export function handleInbound<T>(call: InboundCall, work: (answered: Answered) => T): T {
  const traceId = traceIdOf(call.traceparent);
  const startedAt = performance.now();
  return withLogContext({ requestId: call.requestId, ...(traceId ? { traceId } : {}) }, () => {
    if (!rootLogger().isLevelEnabled('debug')) {
      return work(() => undefined);
    }
    // The call's own fields, as they stand when it is answered (tenant and task are noted on the way).
    const fields = currentLogContext();
    return work((status) =>
      accessLog.debug('A2A call answered', {
        ...fields,
        ...(status !== undefined ? { status } : {}),
        durationMs: Math.round(performance.now() - startedAt),
      }),
    );
  });
}

/** The call was routed to a hosted agent: its tenant and agent name the rest of the call. */
export function noteRoute(ref: AgentRef): void {
  noteAgent(ref.tenantId, ref.agentId);
}

/** The call's result named a task (a task, a push config of one, a message answering in one). */
export function noteTaskOf(result: unknown): void {
  const taskId = taskIdIn(result);
  if (taskId) {
    noteTask(taskId);
  }
}

function taskIdIn(result: unknown): string | undefined {
  if (typeof result !== 'object' || result === null) {
    return undefined;
  }
  const fields = result as { id?: unknown; status?: unknown; taskId?: unknown; task?: unknown };
  const id =
    fields.task !== undefined ? taskIdIn(fields.task) : fields.status ? fields.id : fields.taskId;
  return typeof id === 'string' && id !== '' ? id : undefined;
}

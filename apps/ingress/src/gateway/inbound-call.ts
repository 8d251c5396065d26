import type { A2aError, A2aJsonRpcMethod } from '@lib/a2a-protocol';
import { traceIdOf } from '@lib/audit';
import {
  ATTRIBUTES,
  contextOf,
  currentLogContext,
  fieldLogger,
  markFailed,
  noteAgent,
  noteTask,
  platformTracer,
  rootLogger,
  SPANS,
  tracingEnabled,
  withLogContext,
} from '@lib/observability';
import type { AgentRef } from '@lib/tenancy';
import { context, SpanKind, SpanStatusCode, trace, type Attributes } from '@opentelemetry/api';
import {
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_RPC_METHOD,
  ATTR_RPC_SYSTEM_NAME,
} from '@opentelemetry/semantic-conventions';
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

/** The gRPC service every binding serves (`rpc.method` of the gRPC binding is `<service>/<method>`). */
const A2A_SERVICE = 'lf.a2a.v1.A2AService';

/** What a binding knows about a call before it reads its body. */
export interface InboundCall {
  /** JSONRPC, HTTP+JSON or GRPC. */
  binding: string;
  requestId: string;
  /** The caller's W3C trace context, as sent: the call's span continues that trace. */
  traceparent: string | undefined;
  /** The A2A method, when the binding knows it before reading the request (gRPC). */
  method?: A2aJsonRpcMethod;
  /** Protocol attributes of the call's span (HTTP method, …). */
  attributes?: Attributes;
}

/** Tells that the call was answered (its HTTP status, when it has one). */
export type Answered = (status?: number) => void;

const accessLog = fieldLogger('A2aCall');

/**
 * Runs a binding's handling of one A2A call in its context: every log line written meanwhile names the
 * request (and the caller's trace), also in the task-service when it runs in this process. With tracing
 * on, the call is a server span `A2A <Method>` (a child of the caller's `traceparent`), active for
 * everything the call does and ended when it is answered. At LOG_LEVEL debug, the answer is logged with its
 * duration ({@link Answered}).
 */
export function handleInbound<T>(call: InboundCall, work: (answered: Answered) => T): T {
  const traceId = traceIdOf(call.traceparent);
  const startedAt = performance.now();
  return withLogContext({ requestId: call.requestId, ...(traceId ? { traceId } : {}) }, () => {
    const logged = rootLogger().isLevelEnabled('debug');
    // The call's own fields, as they stand when it is answered (tenant and task are noted on the way).
    const fields = currentLogContext();
    const log: Answered = (status) =>
      accessLog.debug('A2A call answered', {
        ...fields,
        ...(status !== undefined ? { status } : {}),
        durationMs: Math.round(performance.now() - startedAt),
      });
    if (!tracingEnabled()) {
      return work(logged ? log : () => undefined);
    }
    const parent = contextOf(call.traceparent);
    const span = platformTracer().startSpan(
      SPANS.a2aCall(call.method ?? call.binding),
      {
        kind: SpanKind.SERVER,
        attributes: {
          ...call.attributes,
          [ATTRIBUTES.binding]: call.binding,
          [ATTRIBUTES.requestId]: call.requestId,
          ...(call.binding === 'GRPC' ? { [ATTR_RPC_SYSTEM_NAME]: 'grpc' } : {}),
          ...(call.binding === 'JSONRPC' ? { [ATTR_RPC_SYSTEM_NAME]: 'jsonrpc' } : {}),
        },
      },
      parent,
    );
    const answered: Answered = (status) => {
      if (status !== undefined) {
        span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
        if (status >= 500) {
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
      }
      span.end();
      if (logged) {
        log(status);
      }
    };
    return context.with(trace.setSpan(parent, span), () => {
      if (call.method) {
        noteMethod(call.method, call.binding);
      }
      return work(answered);
    });
  });
}

/** The A2A method of the call, once the binding read it: the span is named after it. */
export function noteMethod(method: A2aJsonRpcMethod, binding: string): void {
  const span = trace.getActiveSpan();
  if (span) {
    span.updateName(SPANS.a2aCall(method));
    span.setAttributes({
      [ATTRIBUTES.method]: method,
      ...(binding === 'HTTP+JSON'
        ? {}
        : { [ATTR_RPC_METHOD]: binding === 'GRPC' ? `${A2A_SERVICE}/${method}` : method }),
    });
  }
}

/**
 * The call failed with `error` (as the client is told): its reason on the span, which is failed when the
 * platform, not the request, was at fault.
 */
export function noteFailure(error: A2aError): void {
  const span = trace.getActiveSpan();
  if (!span) {
    return;
  }
  if (error.reason === 'INTERNAL' || error.reason === 'UNAVAILABLE') {
    markFailed(span, error);
  } else {
    span.setAttribute('error.type', error.reason);
  }
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

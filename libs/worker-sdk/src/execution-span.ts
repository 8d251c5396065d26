import type { workerPb } from '@lib/a2a-protocol';
import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Span,
} from '@opentelemetry/api';

/**
 * The SDK's spans go through the OpenTelemetry API only: a worker process that registers an SDK (the
 * platform's example workers do, with OTEL_* set) records them; any other costs nothing.
 */
const tracer = trace.getTracer('a2a-worker-sdk');

/** The agent a worker serves, as the platform's welcome named it. */
export interface WorkerAgent {
  readonly tenantId: string;
  readonly agentId: string;
}

/**
 * Runs an assignment in the span `agent <agentId> execute`, a child of the platform's dispatch (the
 * assignment's `traceparent`) and active while the executor runs (the agent's own spans nest under it).
 * `work` gets the span and the `traceparent` the assignment's updates carry: the span's, or, when this
 * process records no spans, the assignment's own (the platform's spans of the updates then still join the
 * request's trace).
 */
export function inExecutionSpan(
  assignment: workerPb.Assignment,
  agent: WorkerAgent,
  work: (span: Span, traceparent: string) => Promise<void>,
): Promise<void> {
  const parent = assignment.traceparent
    ? propagation.extract(ROOT_CONTEXT, { traceparent: assignment.traceparent })
    : ROOT_CONTEXT;
  const attributes = {
    'a2a.tenant': agent.tenantId,
    'a2a.agent': agent.agentId,
    'a2a.task_id': assignment.taskId,
    'a2a.lease_epoch': assignment.leaseEpoch,
    'a2a.attempt': assignment.attempt,
  };
  const options = { kind: SpanKind.CONSUMER, attributes };
  return tracer.startActiveSpan(`agent ${agent.agentId} execute`, options, parent, (span) => {
    const carrier: Record<string, string> = {};
    propagation.inject(context.active(), carrier);
    return work(span, carrier['traceparent'] ?? assignment.traceparent).finally(() => span.end());
  });
}

/** The executor failed: the span says so, with the error's class (its message may quote the task). */
export function executionFailed(span: Span, error: unknown): void {
  const type = error instanceof Error ? error.name : typeof error;
  span.setAttribute('error.type', type);
  span.setStatus({ code: SpanStatusCode.ERROR, message: type });
}

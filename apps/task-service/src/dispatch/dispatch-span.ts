import { ATTRIBUTES, inSpanSync, SPANS, traceparentOf, tracingEnabled } from '@lib/observability';
import type { PresentTask } from '@lib/task-domain';
import { SpanKind } from '@opentelemetry/api';
import type { WorkerSession } from './worker-session';

/**
 * Sends a task's assignment in the span `task-service dispatch`, a child of the active context: the
 * operation that granted the lease with the task's message, or the trace of the task's latest message
 * (queued work). `send` gets the span's `traceparent` for the assignment, under which the worker runs the
 * task; none with tracing off.
 */
export function dispatchInSpan(
  session: WorkerSession,
  after: PresentTask,
  send: (traceparent: string | undefined) => void,
): void {
  if (!tracingEnabled()) {
    send(undefined);
    return;
  }
  const attributes = {
    [ATTRIBUTES.tenant]: session.agent.tenantId,
    [ATTRIBUTES.agent]: session.agent.agentId,
    [ATTRIBUTES.taskId]: after.task.id,
    [ATTRIBUTES.workerId]: session.workerId,
    [ATTRIBUTES.leaseEpoch]: after.lease?.epoch ?? 0,
    [ATTRIBUTES.attempt]: after.attempt,
  };
  inSpanSync(SPANS.dispatch, { kind: SpanKind.PRODUCER, attributes }, () => send(traceparentOf()));
}

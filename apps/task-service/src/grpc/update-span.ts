import type { workerPb } from '@lib/a2a-protocol';
import { traceIdOf } from '@lib/audit';
import {
  ATTRIBUTES,
  contextOf,
  inSpan,
  SPANS,
  tracingEnabled,
  withLogContext,
} from '@lib/observability';
import type { AgentRef } from '@lib/tenancy';
import { SpanKind } from '@opentelemetry/api';
import { ATTR_RPC_METHOD, ATTR_RPC_SYSTEM_NAME } from '@opentelemetry/semantic-conventions';

/**
 * Applies one `PublishUpdate` request (on its own, in a `PublishUpdates` call or on a session) in its
 * span `task-service PublishUpdate`, a child of the worker's span (the request's `traceparent`): the
 * events it appends name that trace. Its log lines name the tenant, agent and task.
 */
export function inUpdateSpan<T>(
  request: workerPb.PublishUpdateRequest,
  agent: AgentRef,
  workerId: string,
  work: () => Promise<T>,
): Promise<T> {
  const traceId = traceIdOf(request.traceparent);
  const call = {
    tenant: agent.tenantId,
    agent: agent.agentId,
    taskId: request.taskId,
    ...(traceId ? { traceId } : {}),
  };
  if (!tracingEnabled()) {
    return withLogContext(call, work);
  }
  const attributes = {
    [ATTRIBUTES.tenant]: agent.tenantId,
    [ATTRIBUTES.agent]: agent.agentId,
    [ATTRIBUTES.taskId]: request.taskId,
    [ATTRIBUTES.leaseEpoch]: request.leaseEpoch,
    [ATTRIBUTES.workerId]: workerId,
    [ATTRIBUTES.updates]: Math.max(1, request.updates.length),
    [ATTR_RPC_SYSTEM_NAME]: 'grpc',
    [ATTR_RPC_METHOD]: 'platform.worker.v1.WorkerService/PublishUpdate',
  };
  const options = { kind: SpanKind.SERVER, attributes };
  return withLogContext(call, () =>
    inSpan(SPANS.taskService('PublishUpdate'), options, work, contextOf(request.traceparent)),
  );
}

import type { A2aJsonRpcMethod, Versioned } from '@lib/a2a-protocol';
import { callEntry, type AuditEntry } from '@lib/audit';
import type { EventMetadata } from '@lib/event-store';
import { activeTraceparent, ATTRIBUTES, inSpan, SPANS } from '@lib/observability';
import { taskIdOf, type CallContext, type TaskRef } from '@lib/tenancy';
import { SpanKind, type Context } from '@opentelemetry/api';
import { ATTR_RPC_METHOD, ATTR_RPC_SYSTEM_NAME } from '@opentelemetry/semantic-conventions';

export type { CallContext, Versioned };

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

/**
 * The audit record of a call that changes `task`, written by the writer in the change's transaction (the
 * ingress records only the calls that fail). SendMessage and SendStreamingMessage are one operation here:
 * the record names the one the client called, as the ingress says.
 */
export function callAudit(ctx: CallContext, method: A2aJsonRpcMethod, task: TaskRef): AuditEntry {
  const named =
    method === 'SendMessage' && ctx.method === 'SendStreamingMessage' ? ctx.method : method;
  return callEntry(ctx, {
    operation: `a2a.${named}`,
    resource: `task/${task.taskId.slice(0, 256)}`,
    outcome: 'ok',
    reason: null,
  });
}

/**
 * Runs a caller's operation in its span, `task-service <Method>`: a child of the ingress's call span, across
 * the gRPC hop (`remote`, from the call's metadata) or in this process (the active span). `work` gets the
 * call context with the span's `traceparent`, so the events the operation appends name it.
 */
export function inCommandSpan<T>(
  method: A2aJsonRpcMethod,
  ctx: CallContext,
  remote: Context | undefined,
  work: (ctx: CallContext) => Promise<T>,
): Promise<T> {
  const attributes = {
    [ATTRIBUTES.method]: method,
    [ATTRIBUTES.tenant]: ctx.tenantId,
    [ATTRIBUTES.agent]: ctx.agentId,
    [ATTRIBUTES.requestId]: ctx.requestId,
    ...(remote
      ? {
          [ATTR_RPC_SYSTEM_NAME]: 'grpc',
          [ATTR_RPC_METHOD]: `platform.task.v1.TaskCommandService/${method}`,
        }
      : {}),
  };
  const kind = remote ? SpanKind.SERVER : SpanKind.INTERNAL;
  return inSpan(
    SPANS.taskService(method),
    { kind, attributes },
    () => {
      const traceparent = activeTraceparent();
      return work(traceparent ? { ...ctx, traceparent } : ctx);
    },
    remote,
  );
}

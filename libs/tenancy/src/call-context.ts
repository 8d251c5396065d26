import type { taskPb } from '@lib/a2a-protocol';
import { agentIdOf, credentialIdOf, principalIdOf, tenantIdOf, type CallContext } from '@lib/ids';

/** The call context as the internal TaskCommandService carries it (optional values as empty strings). */
export function callContextToWire(ctx: CallContext): taskPb.CallContext {
  return {
    tenantId: ctx.tenantId,
    agentId: ctx.agentId,
    principalId: ctx.principalId,
    binding: ctx.binding,
    traceparent: ctx.traceparent ?? '',
    requestId: ctx.requestId,
    scopes: [...ctx.scopes],
    credentialId: ctx.credentialId ?? '',
    protocolVersion: ctx.protocolVersion,
    sourceAddress: ctx.sourceAddress ?? '',
    method: ctx.method ?? '',
  };
}

/** The call context an internal call carries; null when it does not name a tenant, an agent and a principal. */
export function callContextFromWire(wire: taskPb.CallContext | undefined): CallContext | null {
  if (!wire?.tenantId || !wire.agentId || !wire.principalId) {
    return null;
  }
  return {
    tenantId: tenantIdOf(wire.tenantId),
    agentId: agentIdOf(wire.agentId),
    principalId: principalIdOf(wire.principalId),
    credentialId: wire.credentialId ? credentialIdOf(wire.credentialId) : null,
    scopes: wire.scopes,
    binding: wire.binding,
    protocolVersion: wire.protocolVersion,
    requestId: wire.requestId,
    ...(wire.traceparent ? { traceparent: wire.traceparent } : {}),
    ...(wire.sourceAddress ? { sourceAddress: wire.sourceAddress } : {}),
    ...(wire.method ? { method: wire.method } : {}),
  };
}

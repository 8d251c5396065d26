import type { taskPb } from '@lib/a2a-protocol';
import {
  agentIdOf,
  credentialIdOf,
  principalIdOf,
  tenantIdOf,
  type AgentId,
  type CredentialId,
  type PrincipalId,
  type TenantId,
} from './ids';

/**
 * Who calls which hosted agent, as authentication established it: made once per request by the ingress
 * (from an API key, an OIDC token or an anonymous agent's rule), carried to the task-service on every
 * internal call, and given to every port. Nothing after authentication derives identity from the request.
 */
export interface CallContext {
  readonly tenantId: TenantId;
  readonly agentId: AgentId;
  readonly principalId: PrincipalId;
  /** The credential that authenticated the call; null for the anonymous principal. */
  readonly credentialId: CredentialId | null;
  /** The scopes the credential grants (libs/authz names them). */
  readonly scopes: readonly string[];
  /** JSONRPC, HTTP+JSON or GRPC. */
  readonly binding: string;
  /** Negotiated A2A protocol version (Major.Minor). */
  readonly protocolVersion: string;
  readonly traceparent?: string;
  readonly requestId: string;
  /** The caller's network address as the ingress saw it (for the audit record). */
  readonly sourceAddress?: string;
  /**
   * The A2A method the client called (`SendMessage`, `SendStreamingMessage`, …), set by the ingress for the
   * operation it forwards: the task-service names it in the audit record it writes with the change.
   */
  readonly method?: string;
}

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

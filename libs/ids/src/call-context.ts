import type { AgentId, CredentialId, PrincipalId, TenantId } from './ids';

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

/** What a binding learned about a request before handing it to the operations port. */
export interface CallContext {
  tenantId: string;
  agentId: string;
  principalId: string;
  /** JSONRPC, HTTP+JSON or GRPC. */
  binding: string;
  /** Negotiated A2A protocol version (Major.Minor). */
  protocolVersion: string;
  traceparent?: string;
  requestId: string;
}

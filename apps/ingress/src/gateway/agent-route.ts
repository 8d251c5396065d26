/** The hosted agent a request is for. */
export interface AgentRoute {
  tenantId: string;
  agentId: string;
}

/**
 * The `tenant` value (spec digest §10.9) that routes to a hosted agent on interfaces without a per-agent
 * path (the gRPC binding, `/a2a/jsonrpc`, `/a2a/rest/{tenant}/…`): `<tenant>/<agent>`. Agent cards advertise
 * it in `AgentInterface.tenant`; clients copy it verbatim.
 */
export function routingTenant(route: AgentRoute): string {
  return `${route.tenantId}/${route.agentId}`;
}

/** The route a `tenant` value names, or null when it is not `<tenant>/<agent>`. */
export function parseRoutingTenant(value: string): AgentRoute | null {
  const match = /^([^/\s]+)\/([^/\s]+)$/.exec(value);
  return match ? { tenantId: match[1] ?? '', agentId: match[2] ?? '' } : null;
}

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

/** A tenant or agent id: no `/`, no white space or control characters, at most 128 characters. */
const ID = '[^/\\s\\u0000-\\u001f\\u007f]{1,128}';
const ID_PATTERN = new RegExp(`^${ID}$`);
const ROUTING_TENANT_PATTERN = new RegExp(`^(${ID})/(${ID})$`);

/** The route a `tenant` value names, or null when it is not `<tenant>/<agent>`. */
export function parseRoutingTenant(value: string): AgentRoute | null {
  const match = ROUTING_TENANT_PATTERN.exec(value);
  return match ? { tenantId: match[1] ?? '', agentId: match[2] ?? '' } : null;
}

/** Whether both ids of a route taken from a URL could name a hosted agent at all. */
export function isRoute(route: AgentRoute): boolean {
  return ID_PATTERN.test(route.tenantId) && ID_PATTERN.test(route.agentId);
}

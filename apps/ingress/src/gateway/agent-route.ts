import { agentIdOf, isId, tenantIdOf, type AgentRef } from '@lib/tenancy';

/** The hosted agent a request is for, as the request names it (not yet checked). */
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

/** A tenant or agent id (the form of `ID_PATTERN` in @lib/tenancy). */
const ID = '[^/\\s\\u0000-\\u001f\\u007f]{1,128}';
const ROUTING_TENANT_PATTERN = new RegExp(`^(${ID})/(${ID})$`);

/** The route a `tenant` value names, or null when it is not `<tenant>/<agent>`. */
export function parseRoutingTenant(value: string): AgentRoute | null {
  const match = ROUTING_TENANT_PATTERN.exec(value);
  return match ? { tenantId: match[1] ?? '', agentId: match[2] ?? '' } : null;
}

/** The agent a route names, or null when one of its ids (taken from a URL) could name none at all. */
export function agentRefOf(route: AgentRoute): AgentRef | null {
  return isId(route.tenantId) && isId(route.agentId)
    ? { tenantId: tenantIdOf(route.tenantId), agentId: agentIdOf(route.agentId) }
    : null;
}

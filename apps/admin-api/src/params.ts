import { agentIdOf, isId, NotFound, tenantIdOf, type AgentRef, type TenantId } from '@lib/tenancy';

/** The tenant a path names; an id no tenant can have is simply not found. */
export function tenantParam(raw: string): TenantId {
  if (!isId(raw)) {
    throw new NotFound(`no tenant ${raw.slice(0, 140)}`);
  }
  return tenantIdOf(raw);
}

/** The agent a path names (see {@link tenantParam}). */
export function agentParam(tenant: string, agent: string): AgentRef {
  if (!isId(agent)) {
    throw new NotFound(`no agent ${agent.slice(0, 140)}`);
  }
  return { tenantId: tenantParam(tenant), agentId: agentIdOf(agent) };
}

import {
  agentIdOf,
  InvalidInput,
  isId,
  NotFound,
  tenantIdOf,
  type AgentRef,
  type TenantId,
} from '@lib/tenancy';

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

/** A query parameter given at most once and not empty, or undefined when absent; else 400 naming it. */
export function queryText(query: Record<string, unknown>, name: string): string | undefined {
  const value = query[name];
  if (value === undefined) {
    return undefined;
  }
  if (typeof value !== 'string' || value === '') {
    throw new InvalidInput(`query parameter ${name} must be given once, not empty`, [
      { field: name, description: 'must be given once, not empty' },
    ]);
  }
  return value;
}

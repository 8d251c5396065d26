import {
  agentIdOf,
  isId,
  NotFound,
  parseInput,
  tenantIdOf,
  type AgentRef,
  type TenantId,
} from '@lib/tenancy';
import { z } from 'zod';

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

/** A query parameter's text: given at most once, not empty. */
export const queryText = z
  .string({ invalid_type_error: 'must be given once' })
  .min(1, 'must not be empty');

/** A query parameter that is an integer from `min` to `max`, written in decimal digits. */
export function queryInteger(min: number, max: number) {
  const range = `must be an integer from ${min} to ${max}`;
  return z.preprocess(
    (text) => (typeof text === 'string' && /^\d+$/.test(text) ? Number(text) : text),
    z.number({ invalid_type_error: range }).int(range).min(min, range).max(max, range),
  );
}

/** A query parameter that is a time (RFC 3339, as `Date.parse` reads it). */
export const queryTime = queryText
  .refine((text) => !Number.isNaN(Date.parse(text)), 'must be an RFC 3339 time')
  .transform((text) => new Date(text))
  .describe('an RFC 3339 time');

/**
 * The query parameters of a route as its schema reads them (parameters it does not name are ignored), or
 * InvalidInput (400) naming each bad one. The schema is the route's documentation too (`openapi.ts`).
 */
export function parseQuery<T>(
  schema: z.ZodType<T, z.ZodTypeDef, unknown>,
  query: Record<string, unknown>,
): T {
  return parseInput(schema, query, 'query');
}

import { agentIdOf, isId, tenantIdOf, type AgentId, type TenantId } from '@lib/ids';
import { NotFound, parseInput } from '@lib/tenancy';
import { Injectable, type PipeTransform } from '@nestjs/common';
import { z } from 'zod';

/**
 * The tenant a path names (`@Param('tenantId', TenantIdPipe)`); an id no tenant can have is simply not found
 * (404, like an unknown one).
 */
@Injectable()
export class TenantIdPipe implements PipeTransform<string, TenantId> {
  transform(raw: string): TenantId {
    if (!isId(raw)) {
      throw new NotFound(`no tenant ${raw.slice(0, 140)}`);
    }
    return tenantIdOf(raw);
  }
}

/** The agent a path names (see {@link TenantIdPipe}). */
@Injectable()
export class AgentIdPipe implements PipeTransform<string, AgentId> {
  transform(raw: string): AgentId {
    if (!isId(raw)) {
      throw new NotFound(`no agent ${raw.slice(0, 140)}`);
    }
    return agentIdOf(raw);
  }
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

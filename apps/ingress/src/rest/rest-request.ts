import {
  A2aError,
  invalidParams,
  jsonNestingExceeds,
  MAX_REQUEST_JSON_NESTING,
  type FieldViolation,
} from '@lib/a2a-protocol';
import type { PathField, QueryKind } from './rest-routes';

/** Request media types of the HTTP+JSON binding (spec digest §8.1: `application/a2a+json` preferred). */
export const REST_MEDIA_TYPES = ['application/a2a+json', 'application/json'] as const;

/** A query string by parameter name; a value is null when its percent-escape is invalid. */
export type QueryValues = ReadonlyMap<string, readonly (string | null)[]>;

/**
 * Splits a raw query string into decoded names and values. Values are decoded as HTML forms and HTTP
 * transcoders do (`+` is a space; send `%2B` for a plus sign). A name that does not decode cannot be one
 * this binding reads, so it is dropped with the other unknown parameters.
 */
export function parseQuery(rawQuery: string): QueryValues {
  const query = new Map<string, (string | null)[]>();
  for (const pair of rawQuery.split('&')) {
    if (pair === '') {
      continue;
    }
    const eq = pair.indexOf('=');
    const name = decodeFormComponent(eq < 0 ? pair : pair.slice(0, eq));
    if (name === null) {
      continue;
    }
    const value = decodeFormComponent(eq < 0 ? '' : pair.slice(eq + 1));
    query.set(name, [...(query.get(name) ?? []), value]);
  }
  return query;
}

function decodeFormComponent(raw: string): string | null {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return null;
  }
}

/** The non-empty `tenant` query values (spec digest §8.2: `tenant` when it is not in the path). */
export function queryTenants(query: QueryValues): string[] {
  const values = query.get('tenant') ?? [];
  if (values.includes(null)) {
    throw invalidParams([{ field: 'tenant', description: 'has an invalid percent-escape' }]);
  }
  return values.filter((v): v is string => v !== null && v !== '');
}

/**
 * The query parameters a route reads, as ProtoJSON values (spec digest §8.2 "Query-parameter rules"): numbers
 * in decimal, booleans `true`/`false`, enums by name or number, strings and timestamps as sent. Ranges,
 * enum names and timestamp syntax are left to the request decoder, so REST and JSON-RPC reject alike.
 * Each parameter (and `tenant`) may be given once; unknown parameters are ignored.
 */
export function queryFields(
  query: QueryValues,
  kinds: Readonly<Record<string, QueryKind>>,
): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  const violations: FieldViolation[] = [];
  for (const name of ['tenant', ...Object.keys(kinds)]) {
    const values = query.get(name) ?? [];
    if (values.length > 1) {
      violations.push({
        field: name,
        description: `is given ${values.length} times; give it once`,
      });
      continue;
    }
    const [text] = values;
    const kind = kinds[name];
    if (text === undefined || kind === undefined) {
      continue;
    }
    if (text === null) {
      violations.push({ field: name, description: 'has an invalid percent-escape' });
      continue;
    }
    const converted = queryValue(kind, text);
    if ('problem' in converted) {
      violations.push({ field: name, description: converted.problem });
    } else {
      fields[name] = converted.value;
    }
  }
  if (violations.length > 0) {
    throw invalidParams(violations);
  }
  return fields;
}

type Converted = { value: string | number | boolean } | { problem: string };

function queryValue(kind: QueryKind, text: string): Converted {
  switch (kind) {
    case 'string':
      return { value: text };
    case 'int32':
      // ProtoJSON's int32 string forms, checked by the same decoder as a JSON body (`"1e2"` is 100).
      return text.trim() === ''
        ? { problem: 'must be an integer, got an empty value' }
        : { value: text };
    case 'bool':
      return text === 'true' || text === 'false'
        ? { value: text === 'true' }
        : { problem: `must be true or false, got ${JSON.stringify(text)}` };
    case 'enum':
      return { value: /^\d+$/.test(text) ? Number(text) : text };
  }
}

/**
 * The JSON object a POST carries: the ProtoJSON of the request message. An empty body is `{}` whatever its
 * Content-Type; a non-empty one must be `application/a2a+json` or `application/json` (else
 * UNSUPPORTED_MEDIA_TYPE, 415), no deeper than any request can be (INVALID_PARAMS, refused before parsing),
 * valid JSON (PARSE_ERROR) and an object.
 */
export function parseJsonBody(
  text: string,
  contentType: string | undefined,
): Record<string, unknown> {
  if (text.trim() === '') {
    return {};
  }
  const media = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (!(REST_MEDIA_TYPES as readonly string[]).includes(media)) {
    throw new A2aError(
      'UNSUPPORTED_MEDIA_TYPE',
      `a request body must be sent as ${REST_MEDIA_TYPES.join(' or ')}, not ${contentType === undefined ? 'without a Content-Type' : JSON.stringify(contentType)}`,
      { contentType: contentType ?? '' },
    );
  }
  if (jsonNestingExceeds(text, MAX_REQUEST_JSON_NESTING)) {
    throw invalidParams([
      { field: 'body', description: `nests deeper than ${MAX_REQUEST_JSON_NESTING} levels` },
    ]);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new A2aError(
      'PARSE_ERROR',
      `the request body is not valid JSON: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new A2aError(
      'INVALID_REQUEST',
      'the request body must be a JSON object: the ProtoJSON of the request message',
    );
  }
  return parsed as Record<string, unknown>;
}

/** The body's `tenant`, when it carries a non-empty string. */
export function bodyTenants(body: Record<string, unknown>): string[] {
  const tenant = body['tenant'];
  return typeof tenant === 'string' && tenant !== '' ? [tenant] : [];
}

/** The JSON names (camelCase and proto snake_case, spec digest §3) a path field may also have in a body. */
const BODY_NAMES: Readonly<Record<PathField, readonly string[]>> = {
  id: ['id'],
  taskId: ['taskId', 'task_id'],
};

/**
 * The body with the path variables filled in. A body that names a path-bound field with another value is
 * INVALID_PARAMS on that field; the same value, or an empty one, is accepted.
 */
export function withPathFields(
  body: Record<string, unknown>,
  fields: Partial<Record<PathField, string>>,
): Record<string, unknown> {
  const bound = { ...body };
  const violations: FieldViolation[] = [];
  for (const [field, value] of Object.entries(fields) as [PathField, string][]) {
    for (const name of BODY_NAMES[field]) {
      const given = bound[name];
      if (given !== undefined && given !== null && given !== '' && given !== value) {
        violations.push({
          field,
          description: `is ${JSON.stringify(given)} in the body but ${JSON.stringify(value)} in the path; omit it or send the same value`,
        });
      }
      delete bound[name];
    }
    bound[field] = value;
  }
  if (violations.length > 0) {
    throw invalidParams(violations);
  }
  return bound;
}

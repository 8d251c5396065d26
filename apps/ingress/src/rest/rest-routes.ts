import { A2aError, type A2aJsonRpcMethod } from '@lib/a2a-protocol';

export type HttpMethod = 'GET' | 'POST' | 'DELETE';

/** How a query parameter's text becomes its ProtoJSON value (spec digest §8.2 "Query-parameter rules"). */
export type QueryKind = 'string' | 'int32' | 'bool' | 'enum';

/** The request fields a path variable fills: `{id}` → `id`, `{task_id}` → `taskId`. */
export type PathField = 'id' | 'taskId';

/** One HTTP rule of the A2A service (spec digest §2, §8.2), relative to the HTTP+JSON base URL. */
export interface RestRoute {
  rpc: A2aJsonRpcMethod;
  method: HttpMethod;
  /** Literal segments and `{field}` variables; the custom verb (`:send`) is kept apart, as in google.api.http. */
  path: readonly string[];
  verb?: string;
  /** Query parameters read into the request message, by camelCase JSON name. */
  query?: Readonly<Record<string, QueryKind>>;
}

const LIST_TASKS_QUERY = {
  contextId: 'string',
  status: 'enum',
  pageSize: 'int32',
  pageToken: 'string',
  historyLength: 'int32',
  statusTimestampAfter: 'string',
  includeArtifacts: 'bool',
} as const satisfies Record<string, QueryKind>;

/**
 * Every route, each also under the `/{tenant}` prefix. SubscribeToTask is served on GET (the proto) and POST
 * (the prose), spec digest §12 #1. POST routes read a JSON body; GET and DELETE routes ignore any body.
 */
export const REST_ROUTES: readonly RestRoute[] = [
  { rpc: 'SendMessage', method: 'POST', path: ['message'], verb: 'send' },
  { rpc: 'SendStreamingMessage', method: 'POST', path: ['message'], verb: 'stream' },
  { rpc: 'GetTask', method: 'GET', path: ['tasks', '{id}'], query: { historyLength: 'int32' } },
  { rpc: 'ListTasks', method: 'GET', path: ['tasks'], query: LIST_TASKS_QUERY },
  { rpc: 'CancelTask', method: 'POST', path: ['tasks', '{id}'], verb: 'cancel' },
  { rpc: 'SubscribeToTask', method: 'GET', path: ['tasks', '{id}'], verb: 'subscribe' },
  { rpc: 'SubscribeToTask', method: 'POST', path: ['tasks', '{id}'], verb: 'subscribe' },
  {
    rpc: 'CreateTaskPushNotificationConfig',
    method: 'POST',
    path: ['tasks', '{taskId}', 'pushNotificationConfigs'],
  },
  {
    rpc: 'GetTaskPushNotificationConfig',
    method: 'GET',
    path: ['tasks', '{taskId}', 'pushNotificationConfigs', '{id}'],
  },
  {
    rpc: 'ListTaskPushNotificationConfigs',
    method: 'GET',
    path: ['tasks', '{taskId}', 'pushNotificationConfigs'],
    query: { pageSize: 'int32', pageToken: 'string' },
  },
  {
    rpc: 'DeleteTaskPushNotificationConfig',
    method: 'DELETE',
    path: ['tasks', '{taskId}', 'pushNotificationConfigs', '{id}'],
  },
  { rpc: 'GetExtendedAgentCard', method: 'GET', path: ['extendedAgentCard'] },
];

/** Whether the HTTP+JSON base URL may, or must, be followed by a `/{tenant}` segment. */
export type TenantPrefix = 'optional' | 'required';

export type RouteMatch =
  | {
      kind: 'route';
      route: RestRoute;
      /** Decoded path variables. */
      fields: Partial<Record<PathField, string>>;
      /** The decoded `/{tenant}` prefix, when the path had one. */
      tenant: string | undefined;
    }
  /** The path names a route, but not for this HTTP method. */
  | { kind: 'method-not-allowed'; allow: HttpMethod[] }
  | { kind: 'not-found' };

/**
 * Matches the raw (still percent-encoded) path segments after the base URL, the way HTTP transcoding does:
 * the custom verb is what follows the last `:` of the last segment, literals compare undecoded, variables
 * and the tenant are decoded. So a task id containing `:` must be sent as `%3A`, and a tenant `<t>/<a>` as
 * one segment with `%2F`. Without a prefix is tried first, so `/tasks/{id}` never reads `tasks` as a tenant.
 * A bad percent-escape anywhere in the path is INVALID_REQUEST.
 */
export function matchRestRoute(
  method: string,
  rawSegments: readonly string[],
  tenantPrefix: TenantPrefix,
): RouteMatch {
  for (const raw of rawSegments) {
    decodeSegment(raw); // validates every escape, also in segments that end up unmatched
  }
  const last = rawSegments[rawSegments.length - 1] ?? '';
  const colon = last.lastIndexOf(':');
  const segments = colon < 0 ? rawSegments : [...rawSegments.slice(0, -1), last.slice(0, colon)];
  const verb = colon < 0 ? undefined : last.slice(colon + 1);
  for (const offset of tenantPrefix === 'optional' ? [0, 1] : [1]) {
    const tenant = offset === 1 ? decodeSegment(segments[0] ?? '') : undefined;
    if (tenant === '') {
      continue;
    }
    const matches = REST_ROUTES.flatMap((route) => {
      const fields = bind(route, segments.slice(offset), verb);
      return fields ? [{ route, fields }] : [];
    });
    const chosen = matches.find((m) => m.route.method === method);
    if (chosen) {
      return { kind: 'route', route: chosen.route, fields: chosen.fields, tenant };
    }
    if (matches.length > 0) {
      return {
        kind: 'method-not-allowed',
        allow: [...new Set(matches.map((m) => m.route.method))],
      };
    }
  }
  return { kind: 'not-found' };
}

function bind(
  route: RestRoute,
  segments: readonly string[],
  verb: string | undefined,
): Partial<Record<PathField, string>> | null {
  if (route.verb !== verb || route.path.length !== segments.length) {
    return null;
  }
  const fields: Partial<Record<PathField, string>> = {};
  for (const [i, template] of route.path.entries()) {
    const raw = segments[i] ?? '';
    const variable = /^\{(id|taskId)\}$/.exec(template)?.[1] as PathField | undefined;
    if (variable === undefined) {
      if (raw !== template) {
        return null;
      }
    } else if (raw === '') {
      return null;
    } else {
      fields[variable] = decodeSegment(raw);
    }
  }
  return fields;
}

/** One path segment, percent-decoded (RFC 3986: `+` stays `+` in a path). */
export function decodeSegment(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new A2aError(
      'INVALID_REQUEST',
      `the path segment "${raw}" has an invalid percent-escape`,
    );
  }
}

/**
 * The HTTP+JSON binding on the wire (spec digest §8): its base URLs, the HTTP rule of each RPC, raw requests
 * (any method, body and Content-Type), SSE streams and the exact check of its `google.rpc.Status` errors.
 */
import type { StreamResponse } from '@lib/a2a-protocol';
import { expect } from 'vitest';
import { exchange, type HttpReply, type HttpRequest } from './http';
import { openEventStream, type SseConnection, type SseFrame } from './sse';
import {
  detailsFromProtoJson,
  expectDetails,
  serviceHeaders,
  type ErrorDetails,
  type ExpectedDetails,
  type Routing,
  type ServiceParams,
  type StreamingRpc,
  type UnaryRpc,
} from './wire';

export interface RestOptions extends ServiceParams {
  /** JSON-encoded unless a string, which is sent as is. No body when absent. */
  body?: unknown;
  /** Content-Type of the body; `null` sends none. Default: `application/a2a+json` when there is a body. */
  contentType?: string | null;
  /** Bound on the whole exchange; none when absent. */
  timeoutMs?: number;
}

export type RestReply = HttpReply;

/**
 * The HTTP+JSON base URL of an agent (spec digest §8.2, §10.9): its own, or the one that routes by tenant;
 * with `tenant`, followed by the `/{tenant}` segment.
 */
export function restBaseUrl(
  baseUrl: string,
  tenantId: string,
  agent: string,
  routing: Routing = 'agent-url',
  tenant?: string,
): string {
  const base =
    routing === 'tenant' ? `${baseUrl}/a2a/rest` : `${baseUrl}/agents/${tenantId}/${agent}/rest`;
  return tenant === undefined ? base : `${base}/${encodeURIComponent(tenant)}`;
}

function restRequest(method: string, url: string, options: RestOptions): HttpRequest {
  const headers = serviceHeaders(options);
  if (options.body === undefined) {
    return { method, url, headers };
  }
  const text = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  const contentType =
    options.contentType === undefined ? 'application/a2a+json' : options.contentType;
  return {
    method,
    url,
    headers: contentType === null ? headers : { 'Content-Type': contentType, ...headers },
    // fetch gives a string body text/plain; bytes go out without a Content-Type.
    body: contentType === null ? new TextEncoder().encode(text) : text,
  };
}

/** One HTTP+JSON request. */
export function rest(method: string, url: string, options: RestOptions = {}): Promise<RestReply> {
  return exchange(restRequest(method, url, options), options.timeoutMs);
}

/** Opens an HTTP+JSON stream (`message:stream`, `tasks/{id}:subscribe`) and reads it as SSE. */
export function openRestSse(
  method: 'GET' | 'POST',
  url: string,
  options: RestOptions = {},
): Promise<SseConnection> {
  return openEventStream(restRequest(method, url, options), options.timeoutMs);
}

/** The bare StreamResponse an HTTP+JSON frame carries (spec digest §8.4: no JSON-RPC envelope). */
export function streamResponseOf(frame: SseFrame): StreamResponse {
  const parsed = JSON.parse(frame.data) as StreamResponse & { jsonrpc?: unknown };
  expect(parsed).not.toHaveProperty('jsonrpc');
  return parsed;
}

/** Asserts the media type of every HTTP+JSON body (spec digest §8.1), success or error. */
export function expectA2aJson(reply: RestReply): void {
  expect(reply.headers.get('content-type'), `response was ${reply.status} ${reply.text}`).toMatch(
    /^application\/a2a\+json/,
  );
}

/** Asserts a 200 `application/a2a+json` reply and returns its body. */
export function restResult<T>(reply: RestReply): T {
  const context = `response was ${reply.status} ${reply.text}`;
  expect(reply.status, context).toBe(200);
  expectA2aJson(reply);
  expect(reply.json, context).toBeTypeOf('object');
  return reply.json as T;
}

interface RestErrorJson {
  error?: { code?: unknown; status?: unknown; message?: unknown; details?: unknown };
}

/** The `google.rpc.Status` of an HTTP+JSON error reply (spec digest §8.3), its details decoded. */
export function restErrorOf(reply: RestReply): {
  /** `error.code` of the body (must equal the HTTP status). */
  code: number | undefined;
  /** `error.status`, the google.rpc canonical code name. */
  status: string | undefined;
  message: string;
  details: ErrorDetails;
} {
  const error = (reply.json as RestErrorJson | undefined)?.error;
  return {
    code: typeof error?.code === 'number' ? error.code : undefined,
    status: typeof error?.status === 'string' ? error.status : undefined,
    message: typeof error?.message === 'string' ? error.message : '',
    details: detailsFromProtoJson(error?.details),
  };
}

export interface ExpectedRestError extends ExpectedDetails {
  /** HTTP status, also `error.code`. */
  http: number;
  /** `error.status`, the google.rpc canonical code name. */
  status: string;
}

/** Asserts a google.rpc.Status error reply (spec digest §8.3): status, body code, ErrorInfo, BadRequest. */
export function expectRestError(reply: RestReply, expected: ExpectedRestError): void {
  const context = `response was ${reply.status} ${reply.text}`;
  expect(reply.status, context).toBe(expected.http);
  expectA2aJson(reply);
  const error = restErrorOf(reply);
  expect(error.code, context).toBe(expected.http);
  expect(error.status, context).toBe(expected.status);
  expect(error.message, context).not.toBe('');
  expectDetails(error.details, expected, context);
}

/** An HTTP+JSON request of one RPC: method, path below the base URL (encoded), query and body. */
export interface RestRoute {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  query: URLSearchParams;
  body?: Record<string, unknown>;
}

const seg = (value: unknown): string => encodeURIComponent(String(value));

function without(params: Record<string, unknown>, ...keys: string[]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(params).filter(([k]) => !keys.includes(k)));
}

/** Query parameters by camelCase JSON name, scalars only (spec digest §8.2 "Query-parameter rules"). */
function queryOf(params: Record<string, unknown>): URLSearchParams {
  return new URLSearchParams(
    Object.entries(params).map(([k, v]): [string, string] => [k, String(v)]),
  );
}

/** The HTTP rule of each RPC of `lf.a2a.v1.A2AService` (spec digest §2, §8.2); `tenant` is not mapped. */
export function restRoute(
  rpc: UnaryRpc | StreamingRpc,
  params: Record<string, unknown>,
): RestRoute {
  const p = without(params, 'tenant');
  const none = new URLSearchParams();
  switch (rpc) {
    case 'SendMessage':
      return { method: 'POST', path: '/message:send', query: none, body: p };
    case 'SendStreamingMessage':
      return { method: 'POST', path: '/message:stream', query: none, body: p };
    case 'GetTask':
      return { method: 'GET', path: `/tasks/${seg(p['id'])}`, query: queryOf(without(p, 'id')) };
    case 'ListTasks':
      return { method: 'GET', path: '/tasks', query: queryOf(p) };
    case 'CancelTask':
      return {
        method: 'POST',
        path: `/tasks/${seg(p['id'])}:cancel`,
        query: none,
        body: without(p, 'id'),
      };
    case 'SubscribeToTask':
      return { method: 'GET', path: `/tasks/${seg(p['id'])}:subscribe`, query: none };
    case 'CreateTaskPushNotificationConfig':
      return {
        method: 'POST',
        path: `/tasks/${seg(p['taskId'])}/pushNotificationConfigs`,
        query: none,
        body: without(p, 'taskId'),
      };
    case 'GetTaskPushNotificationConfig':
      return {
        method: 'GET',
        path: `/tasks/${seg(p['taskId'])}/pushNotificationConfigs/${seg(p['id'])}`,
        query: none,
      };
    case 'ListTaskPushNotificationConfigs':
      return {
        method: 'GET',
        path: `/tasks/${seg(p['taskId'])}/pushNotificationConfigs`,
        query: queryOf(without(p, 'taskId')),
      };
    case 'DeleteTaskPushNotificationConfig':
      return {
        method: 'DELETE',
        path: `/tasks/${seg(p['taskId'])}/pushNotificationConfigs/${seg(p['id'])}`,
        query: none,
      };
    case 'GetExtendedAgentCard':
      return { method: 'GET', path: '/extendedAgentCard', query: none };
  }
}

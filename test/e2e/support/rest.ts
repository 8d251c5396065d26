import type { StreamResponse } from '@lib/a2a-protocol';
import { expect } from 'vitest';
import { BAD_REQUEST, ERROR_INFO } from './json-rpc';
import { DEFAULT_READ_TIMEOUT_MS, SseConnection, type SseFrame } from './sse';

export interface RestOptions {
  /** `X-API-Key`; `null` sends none. Default: the demo key. */
  apiKey?: string | null;
  /** `A2A-Version` header; `null` sends none. Default: `1.0`. */
  version?: string | null;
  /** JSON-encoded unless a string, which is sent as is. No body when absent. */
  body?: unknown;
  /** Content-Type of the body; `null` sends none. Default: `application/a2a+json` when there is a body. */
  contentType?: string | null;
  headers?: Record<string, string>;
}

export interface RestReply {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed body, or undefined when it was not JSON. */
  json: unknown;
}

function requestInit(method: string, options: RestOptions): RequestInit {
  const headers: Record<string, string> = {};
  const apiKey = options.apiKey === undefined ? 'demo-key' : options.apiKey;
  const version = options.version === undefined ? '1.0' : options.version;
  if (apiKey !== null) {
    headers['X-API-Key'] = apiKey;
  }
  if (version !== null) {
    headers['A2A-Version'] = version;
  }
  if (options.body === undefined) {
    return { method, headers: { ...headers, ...options.headers } };
  }
  const text = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  const contentType =
    options.contentType === undefined ? 'application/a2a+json' : options.contentType;
  if (contentType !== null) {
    headers['Content-Type'] = contentType;
  }
  return {
    method,
    headers: { ...headers, ...options.headers },
    // fetch gives a string body text/plain; bytes go out without a Content-Type.
    body: contentType === null ? new TextEncoder().encode(text) : text,
  };
}

/** One HTTP+JSON request with plain `fetch`. */
export async function rest(
  method: string,
  url: string,
  options: RestOptions = {},
): Promise<RestReply> {
  const response = await fetch(url, requestInit(method, options));
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text) as unknown;
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

/** Asserts a 200 `application/a2a+json` reply and returns its body. */
export function restResult<T>(reply: RestReply): T {
  const context = `response was ${reply.status} ${reply.text}`;
  expect(reply.status, context).toBe(200);
  expect(reply.headers.get('content-type'), context).toMatch(/^application\/a2a\+json/);
  expect(reply.json, context).toBeTypeOf('object');
  return reply.json as T;
}

export interface ExpectedRestError {
  /** HTTP status, also `error.code`. */
  http: number;
  /** `error.status`, the google.rpc canonical code name. */
  status: string;
  reason: string;
  domain: string;
  /** A field that must appear in a google.rpc.BadRequest detail. */
  field?: string;
  /** ErrorInfo metadata entries that must be present. */
  metadata?: Record<string, string>;
}

interface RestErrorJson {
  error?: {
    code?: number;
    status?: string;
    message?: string;
    details?: {
      '@type'?: string;
      reason?: string;
      domain?: string;
      metadata?: Record<string, string>;
      fieldViolations?: { field: string; description: string }[];
    }[];
  };
}

/** Asserts a google.rpc.Status error reply (spec digest §8.3): status, body code, ErrorInfo, BadRequest. */
export function expectRestError(reply: RestReply, expected: ExpectedRestError): void {
  const context = `response was ${reply.status} ${reply.text}`;
  expect(reply.status, context).toBe(expected.http);
  expect(reply.headers.get('content-type'), context).toMatch(/^application\/a2a\+json/);
  const error = (reply.json as RestErrorJson | undefined)?.error;
  expect(error, context).toBeDefined();
  expect(error?.code, context).toBe(expected.http);
  expect(error?.status, context).toBe(expected.status);
  expect(typeof error?.message, context).toBe('string');
  const infos = (error?.details ?? []).filter((d) => d['@type'] === ERROR_INFO);
  expect(infos, context).toHaveLength(1);
  expect(infos[0]?.reason, context).toBe(expected.reason);
  expect(infos[0]?.domain, context).toBe(expected.domain);
  if (expected.metadata) {
    expect(infos[0]?.metadata, context).toMatchObject(expected.metadata);
  }
  if (expected.field !== undefined) {
    const badRequest = (error?.details ?? []).find((d) => d['@type'] === BAD_REQUEST);
    expect(
      badRequest?.fieldViolations?.map((v) => v.field),
      context,
    ).toContain(expected.field);
  }
}

/** Opens an HTTP+JSON stream (`message:stream`, `tasks/{id}:subscribe`) and reads it as SSE. */
export async function openRestSse(
  method: 'GET' | 'POST',
  url: string,
  options: RestOptions = {},
): Promise<SseConnection> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), DEFAULT_READ_TIMEOUT_MS);
  try {
    const init = requestInit(method, options);
    const response = await fetch(url, {
      ...init,
      headers: { Accept: 'text/event-stream', ...(init.headers as Record<string, string>) },
      signal: controller.signal,
    });
    return new SseConnection(response, controller);
  } finally {
    clearTimeout(timer);
  }
}

/** The bare StreamResponse an HTTP+JSON frame carries (spec digest §8.4: no JSON-RPC envelope). */
export function streamResponseOf(frame: SseFrame): StreamResponse {
  const parsed = JSON.parse(frame.data) as StreamResponse & { jsonrpc?: unknown };
  expect(parsed).not.toHaveProperty('jsonrpc');
  return parsed;
}

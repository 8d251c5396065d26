import type { ListTasksResponse, SendMessageResponse, Task } from '@lib/a2a-protocol';
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';

export const ERROR_INFO = 'type.googleapis.com/google.rpc.ErrorInfo';
export const BAD_REQUEST = 'type.googleapis.com/google.rpc.BadRequest';
/** ErrorInfo domain of the A2A-specific errors (spec digest §9.1). */
export const A2A_DOMAIN = 'a2a-protocol.org';
/** ErrorInfo domain of the platform's generic errors (parse, envelope, params, auth). */
export const PLATFORM_DOMAIN = 'a2a-platform.dev';

export interface RpcErrorObject {
  code: number;
  message: string;
  data?: {
    '@type': string;
    reason?: string;
    domain?: string;
    metadata?: Record<string, string>;
    fieldViolations?: { field: string; description: string }[];
  }[];
}

export interface RpcEnvelope {
  jsonrpc: string;
  id: unknown;
  result?: unknown;
  error?: RpcErrorObject;
}

export interface RpcReply {
  status: number;
  headers: Headers;
  /** The parsed body (an empty envelope when the body was not JSON). */
  json: RpcEnvelope;
  text: string;
}

export interface RawOptions {
  /** `X-API-Key`; `null` sends none. Default: the demo key. */
  apiKey?: string | null;
  /** `A2A-Version`; `null` sends none. Default: `1.0`. */
  version?: string | null;
  headers?: Record<string, string>;
  /** Sends the body as a stream (chunked transfer encoding, no Content-Length). */
  chunked?: boolean;
}

/** A raw HTTP POST to a JSON-RPC endpoint; `body` is sent as is when it is a string, else as JSON. */
export async function rawRpc(
  url: string,
  body: unknown,
  options: RawOptions = {},
): Promise<RpcReply> {
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  const apiKey = options.apiKey === undefined ? 'demo-key' : options.apiKey;
  const version = options.version === undefined ? '1.0' : options.version;
  if (apiKey !== null) {
    headers['X-API-Key'] = apiKey;
  }
  if (version !== null) {
    headers['A2A-Version'] = version;
  }
  const payload = typeof body === 'string' ? body : JSON.stringify(body);
  const response = await fetch(url, {
    method: 'POST',
    headers: { ...headers, ...options.headers },
    ...(options.chunked
      ? {
          body: new ReadableStream<Uint8Array>({
            start(controller) {
              controller.enqueue(new TextEncoder().encode(payload));
              controller.close();
            },
          }),
          duplex: 'half' as const,
        }
      : { body: payload }),
  });
  const text = await response.text();
  let json: RpcEnvelope;
  try {
    json = JSON.parse(text) as RpcEnvelope;
  } catch {
    json = { jsonrpc: '', id: undefined };
  }
  return { status: response.status, headers: response.headers, json, text };
}

/** A JSON-RPC 2.0 request envelope. */
export function request(
  method: string,
  params?: unknown,
  id: string | number = randomUUID(),
): object {
  return params === undefined
    ? { jsonrpc: '2.0', id, method }
    : { jsonrpc: '2.0', id, method, params };
}

export interface ExpectedError {
  code: number;
  reason: string;
  domain: string;
  /** HTTP status of the envelope; 200 unless given. */
  http?: number;
  /** The id the response must echo. */
  id: unknown;
  /** A field that must appear in a google.rpc.BadRequest detail. */
  field?: string;
  /** ErrorInfo metadata entries that must be present. */
  metadata?: Record<string, string>;
}

/** Asserts a JSON-RPC error response exactly: HTTP status, envelope, code, echoed id, ErrorInfo, BadRequest. */
export function expectRpcError(reply: RpcReply, expected: ExpectedError): void {
  const context = `response was ${reply.status} ${reply.text}`;
  expect(reply.status, context).toBe(expected.http ?? 200);
  expect(reply.headers.get('content-type'), context).toMatch(/^application\/json/);
  expect(reply.json.jsonrpc, context).toBe('2.0');
  expect(reply.json, context).not.toHaveProperty('result');
  expect(reply.json.id, context).toStrictEqual(expected.id);
  const error = reply.json.error;
  expect(error, context).toBeDefined();
  expect(error?.code, context).toBe(expected.code);
  expect(typeof error?.message, context).toBe('string');
  expect(Array.isArray(error?.data), context).toBe(true);
  const infos = (error?.data ?? []).filter((d) => d['@type'] === ERROR_INFO);
  expect(infos, context).toHaveLength(1);
  expect(infos[0]?.reason, context).toBe(expected.reason);
  expect(infos[0]?.domain, context).toBe(expected.domain);
  if (expected.metadata) {
    expect(infos[0]?.metadata, context).toMatchObject(expected.metadata);
  }
  if (expected.field !== undefined) {
    const badRequest = (error?.data ?? []).find((d) => d['@type'] === BAD_REQUEST);
    expect(badRequest, context).toBeDefined();
    expect(
      badRequest?.fieldViolations?.map((v) => v.field),
      context,
    ).toContain(expected.field);
    for (const violation of badRequest?.fieldViolations ?? []) {
      expect(typeof violation.description, context).toBe('string');
      expect(violation.description.length, context).toBeGreaterThan(0);
    }
  }
}

/** Asserts a successful JSON-RPC response and returns its `result`. */
export function expectRpcResult<T>(reply: RpcReply, id?: unknown): T {
  const context = `response was ${reply.status} ${reply.text}`;
  expect(reply.status, context).toBe(200);
  expect(reply.json.jsonrpc, context).toBe('2.0');
  expect(reply.json, context).not.toHaveProperty('error');
  expect(reply.json, context).toHaveProperty('result');
  if (id !== undefined) {
    expect(reply.json.id, context).toStrictEqual(id);
  }
  return reply.json.result as T;
}

export const taskResult = (reply: RpcReply, id?: unknown): Task => expectRpcResult<Task>(reply, id);

export const sentTask = (reply: RpcReply, id?: unknown): Task => {
  const result = expectRpcResult<SendMessageResponse>(reply, id);
  if (!('task' in result)) {
    throw new Error(`expected {"task":…}, got ${reply.text}`);
  }
  return result.task;
};

export const listResult = (reply: RpcReply, id?: unknown): ListTasksResponse =>
  expectRpcResult<ListTasksResponse>(reply, id);

/** A ProtoJSON user message. */
export function rawUserMessage(
  text: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return { messageId: `raw-${randomUUID()}`, role: 'ROLE_USER', parts: [{ text }], ...extra };
}

/** Polls `probe` until it returns a value `done` accepts; fails with the last value after `timeoutMs`. */
export async function eventually<T>(
  probe: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 15_000,
  intervalMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T = await probe();
  while (!done(last)) {
    if (Date.now() > deadline) {
      throw new Error(
        `condition not reached in ${timeoutMs} ms; last value: ${JSON.stringify(last)}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
    last = await probe();
  }
  return last;
}

/**
 * An error reply with the task id replaced by a placeholder, so that the reply for a task id the caller may
 * not see can be compared with the reply for an id that never existed.
 */
export function withoutTaskId(reply: RpcReply, taskId: string): unknown {
  return {
    status: reply.status,
    body: JSON.parse(reply.text.split(taskId).join('<task-id>')) as unknown,
  };
}

/**
 * The JSON-RPC binding on the wire (spec digest §7): its URLs, request envelopes, raw POSTs (any body, also
 * malformed or chunked) and the exact checks of its response envelopes and errors. Its SSE streams are
 * opened by `openSse` in sse.ts, with the same POST.
 */
import type { ListTasksResponse, SendMessageResponse, Task } from '@lib/a2a-protocol';
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { exchange, type HttpReply, type HttpRequest } from './http';
import {
  detailsFromProtoJson,
  expectDetails,
  serviceHeaders,
  type ErrorDetails,
  type ExpectedDetails,
  type Routing,
  type ServiceParams,
} from './wire';

export interface RpcErrorObject {
  code: number;
  message: string;
  data?: unknown[];
}

export interface RpcEnvelope {
  jsonrpc: string;
  id: unknown;
  result?: unknown;
  error?: RpcErrorObject;
}

export interface RpcReply extends Omit<HttpReply, 'json'> {
  /** The parsed body (an empty envelope when the body was not JSON). */
  json: RpcEnvelope;
}

export interface RawOptions extends ServiceParams {
  /** Sends the body as a stream (chunked transfer encoding, no Content-Length). */
  chunked?: boolean;
  /** Bound on the whole exchange; none when absent. */
  timeoutMs?: number;
}

/** The JSON-RPC endpoint of an agent: its own URL, or the entry point that routes by `tenant`. */
export function jsonRpcUrl(
  baseUrl: string,
  tenantId: string,
  agent: string,
  routing: Routing = 'agent-url',
): string {
  return routing === 'tenant'
    ? `${baseUrl}/a2a/jsonrpc`
    : `${baseUrl}/agents/${tenantId}/${agent}/jsonrpc`;
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

/** The POST of a JSON-RPC request; `body` is sent as is when it is a string, else as JSON. */
export function rpcPost(url: string, body: unknown, options: ServiceParams = {}): HttpRequest {
  return {
    method: 'POST',
    url,
    headers: { 'Content-Type': 'application/json', ...serviceHeaders(options) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  };
}

/** A raw HTTP POST to a JSON-RPC endpoint; `body` is sent as is when it is a string, else as JSON. */
export async function rawRpc(
  url: string,
  body: unknown,
  options: RawOptions = {},
): Promise<RpcReply> {
  const reply = await exchange(
    { ...rpcPost(url, body, options), chunked: options.chunked },
    options.timeoutMs,
  );
  return asRpcReply(reply);
}

/** An HTTP reply read as a JSON-RPC one (an empty envelope when the body was not JSON). */
export function asRpcReply(reply: HttpReply): RpcReply {
  return { ...reply, json: (reply.json ?? { jsonrpc: '', id: undefined }) as RpcEnvelope };
}

/**
 * Asserts the envelope of a JSON-RPC response (spec digest §7.4): a JSON body, `jsonrpc` "2.0", exactly one
 * of `result` and `error` (the one given) and, unless `id` is undefined, that id echoed.
 */
export function expectRpcEnvelope(reply: RpcReply, member: 'result' | 'error', id?: unknown): void {
  const context = `response was ${reply.status} ${reply.text}`;
  expect(reply.headers.get('content-type'), context).toMatch(/^application\/json/);
  expect(reply.json.jsonrpc, context).toBe('2.0');
  expect(reply.json, context).toHaveProperty(member);
  expect(reply.json, context).not.toHaveProperty(member === 'result' ? 'error' : 'result');
  if (id !== undefined) {
    expect(reply.json.id, context).toStrictEqual(id);
  }
}

/** The error object of a JSON-RPC error response, its details decoded. */
export function rpcErrorOf(reply: RpcReply): {
  code: number | undefined;
  message: string;
  details: ErrorDetails;
} {
  const error = reply.json.error;
  return {
    code: typeof error?.code === 'number' ? error.code : undefined,
    message: typeof error?.message === 'string' ? error.message : '',
    details: detailsFromProtoJson(error?.data),
  };
}

/** The ErrorInfo reason of a JSON-RPC error response (undefined for a result). */
export function rpcReasonOf(reply: RpcReply): string | undefined {
  return rpcErrorOf(reply).details.infos[0]?.reason;
}

export interface ExpectedError extends ExpectedDetails {
  code: number;
  /** HTTP status of the envelope; 200 unless given. */
  http?: number;
  /** The id the response must echo. */
  id: unknown;
}

/** Asserts a JSON-RPC error response exactly: HTTP status, envelope, code, echoed id, ErrorInfo, BadRequest. */
export function expectRpcError(reply: RpcReply, expected: ExpectedError): void {
  const context = `response was ${reply.status} ${reply.text}`;
  expect(reply.status, context).toBe(expected.http ?? 200);
  expectRpcEnvelope(reply, 'error', expected.id);
  expect(Array.isArray(reply.json.error?.data), context).toBe(true);
  const error = rpcErrorOf(reply);
  expect(error.code, context).toBe(expected.code);
  expect(error.message, context).not.toBe('');
  expectDetails(error.details, expected, context);
}

/** Asserts a successful JSON-RPC response (echoing `id` when given) and returns its `result`. */
export function expectRpcResult<T>(reply: RpcReply, id?: unknown): T {
  expect(reply.status, `response was ${reply.status} ${reply.text}`).toBe(200);
  expectRpcEnvelope(reply, 'result', id);
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

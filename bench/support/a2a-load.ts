/**
 * The client side of the SendMessage bench: one request creates one task and is done when that task is
 * COMPLETED, sent the same way to any A2A v1.0 server (the platform or the reference), in closed loop.
 */
import { credentials, status as GrpcStatus, Metadata, type ServiceError } from '@grpc/grpc-js';
import { a2aPb } from '@lib/a2a-protocol';
import { randomUUID } from 'node:crypto';
import { Agent, request, type IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';

export const MODES = ['send', 'stream'] as const;
/** `send`: blocking SendMessage; `stream`: SendStreamingMessage, read until the server ends the stream. */
export type Mode = (typeof MODES)[number];

export const BINDINGS = ['jsonrpc', 'rest', 'grpc'] as const;
export type Binding = (typeof BINDINGS)[number];

/** Per request: a blocking SendMessage returns within BLOCKING_SEND_TIMEOUT_MS (60 s) at the latest. */
export const REQUEST_TIMEOUT_MS = 70_000;

/** Where one server serves the three bindings for the agent under test. */
export interface A2aEndpoints {
  /** JSON-RPC 2.0 endpoint (POST). */
  jsonrpcUrl: string;
  /** HTTP+JSON base: `…/message:send` and `…/message:stream` are under it. */
  restBaseUrl: string;
  /** host:port of `lf.a2a.v1.A2AService`. */
  grpcTarget: string;
  /** The gRPC request's `tenant` field (`<tenant>/<agent>` on the platform, empty on the reference). */
  grpcTenant: string;
}

/** One request; resolves to null when the task ended COMPLETED, else to a label of what went wrong. */
export type SendOnce = () => Promise<string | null>;

/** How one mode and binding send; `close` releases what it holds (the gRPC channel). */
export interface Sender {
  mode: Mode;
  binding: Binding;
  send: SendOnce;
  close: () => void;
}

/** What one closed-loop run measured. */
export interface LoadResult {
  concurrency: number;
  /** Requests that ended COMPLETED. */
  requests: number;
  errors: number;
  elapsedMs: number;
  /** One per successful request. */
  latenciesMs: number[];
  /** Error label → count. */
  errorSamples: Map<string, number>;
}

/** Requests a load sent: those that ended COMPLETED and those that did not. */
export function attempted(load: LoadResult): number {
  return load.requests + load.errors;
}

/** Requests that ended COMPLETED per second of the load's wall time. */
export function completedPerSecond(load: LoadResult): number {
  return load.requests / (load.elapsedMs / 1_000);
}

/** Several closed-loop runs of the same load as one: their requests, errors, time and latencies together. */
export function mergeLoads(a: LoadResult, b: LoadResult): LoadResult {
  const errorSamples = new Map(a.errorSamples);
  b.errorSamples.forEach((n, what) => errorSamples.set(what, (errorSamples.get(what) ?? 0) + n));
  return {
    concurrency: a.concurrency,
    requests: a.requests + b.requests,
    errors: a.errors + b.errors,
    elapsedMs: a.elapsedMs + b.elapsedMs,
    latenciesMs: a.latenciesMs.concat(b.latenciesMs),
    errorSamples,
  };
}

/** The same headers go to both servers (the reference ignores the API key: it runs without authentication). */
const API_KEY = 'demo-key';
const HTTP_HEADERS = { 'A2A-Version': '1.0', 'X-API-Key': API_KEY };

const userMessage = (): Record<string, unknown> => ({
  messageId: randomUUID(),
  role: 'ROLE_USER',
  parts: [{ text: 'hello' }],
});

interface StateHolder {
  task?: { status?: { state?: unknown } };
  statusUpdate?: { status?: { state?: unknown } };
  message?: unknown;
  artifactUpdate?: unknown;
}

function completedOrLabel(state: unknown): string | null {
  return state === 'TASK_STATE_COMPLETED' ? null : `task ended ${String(state)}`;
}

/** A stream is done when its last event is a statusUpdate or a task in TASK_STATE_COMPLETED. */
function lastEventLabel(last: StateHolder | undefined): string | null {
  if (last === undefined) {
    return 'stream ended without an event';
  }
  if (last.statusUpdate) {
    return completedOrLabel(last.statusUpdate.status?.state);
  }
  if (last.task) {
    return completedOrLabel(last.task.status?.state);
  }
  return last.message ? 'stream ended with a message' : 'stream ended with an artifactUpdate';
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/** Runs one request; an exception (a network error, a timeout) becomes its error label. */
async function labelled(send: SendOnce): Promise<string | null> {
  try {
    return await send();
  } catch (error) {
    return `exception: ${describe(error)}`;
  }
}

interface JsonRpcReply {
  result?: StateHolder;
  error?: { code?: number; message?: string };
}

function jsonRpcErrorLabel(error: { code?: number; message?: string }): string {
  return `JSON-RPC error ${String(error.code)}: ${String(error.message).slice(0, 80)}`;
}

/**
 * A `POST` over one of `agent`'s kept-alive connections; resolves when the answer's head is in. Node's own
 * HTTP client, not `fetch`: undici's `fetch` spent about 0.8 ms of CPU per blocking request in this process
 * (as much as the server under test spends on it, on the same two cores and in the latency of every request at
 * one in flight), and with its web streams most of a core at 64 streams in flight.
 */
function post(
  agent: Agent,
  url: string,
  contentType: string,
  body: unknown,
  accept?: string,
): Promise<IncomingMessage> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        agent,
        method: 'POST',
        headers: {
          'Content-Type': contentType,
          'Content-Length': Buffer.byteLength(payload),
          ...(accept ? { Accept: accept } : {}),
          ...HTTP_HEADERS,
        },
        timeout: REQUEST_TIMEOUT_MS,
      },
      resolve,
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/** An answer's body, read whole. */
async function textOf(res: IncomingMessage): Promise<string> {
  res.setEncoding('utf8');
  let text = '';
  for await (const chunk of res) {
    text += chunk as string;
  }
  return text;
}

const isOk = (res: IncomingMessage): boolean =>
  res.statusCode !== undefined && res.statusCode >= 200 && res.statusCode < 300;

/** JSON-RPC 2.0, method SendMessage. */
async function sendJsonRpc(agent: Agent, url: string): Promise<string | null> {
  const res = await post(agent, url, 'application/json', {
    jsonrpc: '2.0',
    id: 1,
    method: 'SendMessage',
    params: { message: userMessage() },
  });
  const text = await textOf(res);
  if (!isOk(res)) {
    return `HTTP ${res.statusCode}`;
  }
  const json = JSON.parse(text) as JsonRpcReply;
  if (json.error) {
    return jsonRpcErrorLabel(json.error);
  }
  return completedOrLabel(json.result?.task?.status?.state);
}

/** HTTP+JSON: `POST {base}/message:send`, the SendMessageRequest as ProtoJSON. */
async function sendRest(agent: Agent, url: string): Promise<string | null> {
  const res = await post(agent, url, 'application/a2a+json', { message: userMessage() });
  const text = await textOf(res);
  if (!isOk(res)) {
    return `HTTP ${res.statusCode}: ${text.slice(0, 80)}`;
  }
  const json = JSON.parse(text) as StateHolder;
  return completedOrLabel(json.task?.status?.state);
}

/**
 * Reads a `text/event-stream` body to its end and hands the parsed `data:` payload of each event to
 * `onEvent`, in order; `onEvent` returning a label stops reading (the connection is dropped) and becomes the
 * result.
 */
async function readSse(
  res: IncomingMessage,
  onEvent: (data: unknown) => string | undefined,
): Promise<string | undefined> {
  const dispatch = (block: string): string | undefined => {
    const data = block
      .split(/\r?\n/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5));
    return data.length === 0 ? undefined : onEvent(JSON.parse(data.join('\n')));
  };
  res.setEncoding('utf8');
  let buffer = '';
  for await (const chunk of res) {
    buffer += chunk as string;
    const blocks = buffer.split(/\r?\n\r?\n/);
    buffer = blocks.pop() ?? '';
    for (const block of blocks) {
      const label = dispatch(block);
      if (label !== undefined) {
        res.destroy();
        return label;
      }
    }
  }
  return buffer.trim() === '' ? undefined : dispatch(buffer);
}

/** An answer that is not an event stream: its status, or the JSON-RPC error in its body. */
async function notAStream(res: IncomingMessage): Promise<string> {
  const text = await textOf(res);
  try {
    const json = JSON.parse(text) as JsonRpcReply;
    if (json.error) {
      return jsonRpcErrorLabel(json.error);
    }
  } catch {
    // not JSON: the status says enough
  }
  return `HTTP ${res.statusCode} ${String(res.headers['content-type'])}: ${text.slice(0, 60)}`;
}

/** SendStreamingMessage over SSE; `unwrap` takes the StreamResponse out of one event's payload. */
async function stream(
  res: IncomingMessage,
  unwrap: (data: unknown) => { event?: StateHolder; error?: string },
): Promise<string | null> {
  if (!isOk(res) || !String(res.headers['content-type']).startsWith('text/event-stream')) {
    return notAStream(res);
  }
  let last: StateHolder | undefined;
  const label = await readSse(res, (data) => {
    const { event, error } = unwrap(data);
    last = event ?? last;
    return error;
  });
  return label ?? lastEventLabel(last);
}

/** JSON-RPC 2.0 `SendStreamingMessage`, `Accept: text/event-stream`: each event a JSON-RPC response. */
async function streamJsonRpc(agent: Agent, url: string): Promise<string | null> {
  const res = await post(
    agent,
    url,
    'application/json',
    { jsonrpc: '2.0', id: 1, method: 'SendStreamingMessage', params: { message: userMessage() } },
    'text/event-stream',
  );
  return stream(res, (data) => {
    const reply = data as JsonRpcReply;
    return reply.error ? { error: jsonRpcErrorLabel(reply.error) } : { event: reply.result };
  });
}

/** HTTP+JSON `POST {base}/message:stream`: each event a StreamResponse. */
async function streamRest(agent: Agent, url: string): Promise<string | null> {
  const res = await post(
    agent,
    url,
    'application/a2a+json',
    { message: userMessage() },
    'text/event-stream',
  );
  return stream(res, (data) => ({ event: data as StateHolder }));
}

function grpcRequest(tenant: string): a2aPb.SendMessageRequest {
  return a2aPb.SendMessageRequest.fromPartial({
    tenant,
    message: { messageId: randomUUID(), role: a2aPb.Role.ROLE_USER, parts: [{ text: 'hello' }] },
  });
}

function grpcMetadata(): Metadata {
  const metadata = new Metadata();
  metadata.set('x-api-key', API_KEY);
  metadata.set('a2a-version', '1.0');
  return metadata;
}

function grpcErrorLabel(error: ServiceError): string {
  return `gRPC ${GrpcStatus[error.code] ?? error.code}: ${error.details.slice(0, 80)}`;
}

/** gRPC `SendMessage`, over the sender's one channel. */
function sendGrpc(client: a2aPb.A2AServiceClient, tenant: string): Promise<string | null> {
  return new Promise((resolve) => {
    client.sendMessage(
      grpcRequest(tenant),
      grpcMetadata(),
      { deadline: Date.now() + REQUEST_TIMEOUT_MS },
      (error, response) => {
        resolve(error ? grpcErrorLabel(error) : completedOrLabel(response.task?.status?.state));
      },
    );
  });
}

/** gRPC `SendStreamingMessage`, read until the server ends the call. */
function streamGrpc(client: a2aPb.A2AServiceClient, tenant: string): Promise<string | null> {
  return new Promise((resolve) => {
    let last: StateHolder | undefined;
    const call = client.sendStreamingMessage(grpcRequest(tenant), grpcMetadata(), {
      deadline: Date.now() + REQUEST_TIMEOUT_MS,
    });
    call.on('data', (response: a2aPb.StreamResponse) => {
      last = response;
    });
    call.on('error', (error: ServiceError) => resolve(grpcErrorLabel(error)));
    call.on('end', () => resolve(lastEventLabel(last)));
  });
}

/** A sender for `mode` over `binding` to the server at `endpoints`. */
export function openSender(mode: Mode, binding: Binding, endpoints: A2aEndpoints): Sender {
  // An HTTP binding's sender keeps its connections open between requests.
  const overHttp = (send: (agent: Agent) => Promise<string | null>): Sender => {
    const agent = new Agent({ keepAlive: true });
    return { mode, binding, send: () => labelled(() => send(agent)), close: () => agent.destroy() };
  };
  switch (binding) {
    case 'jsonrpc': {
      const send = mode === 'send' ? sendJsonRpc : streamJsonRpc;
      return overHttp((agent) => send(agent, endpoints.jsonrpcUrl));
    }
    case 'rest': {
      const url = `${endpoints.restBaseUrl}/message:${mode === 'send' ? 'send' : 'stream'}`;
      const send = mode === 'send' ? sendRest : streamRest;
      return overHttp((agent) => send(agent, url));
    }
    case 'grpc': {
      const client = new a2aPb.A2AServiceClient(endpoints.grpcTarget, credentials.createInsecure());
      const tenant = endpoints.grpcTenant;
      return {
        mode,
        binding,
        send: () =>
          labelled(() => (mode === 'send' ? sendGrpc(client, tenant) : streamGrpc(client, tenant))),
        close: () => client.close(),
      };
    }
  }
}

/** Closed loop: `concurrency` clients each send one request after another until `durationMs` has passed. */
export async function runClosedLoop(
  send: SendOnce,
  concurrency: number,
  durationMs: number,
): Promise<LoadResult> {
  const latenciesMs: number[] = [];
  const errorSamples = new Map<string, number>();
  let errors = 0;
  const started = performance.now();
  const end = started + durationMs;
  const client = async (): Promise<void> => {
    while (performance.now() < end) {
      const sent = performance.now();
      const error = await send();
      if (error === null) {
        latenciesMs.push(performance.now() - sent);
      } else {
        errors++;
        errorSamples.set(error, (errorSamples.get(error) ?? 0) + 1);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, () => client()));
  return {
    concurrency,
    requests: latenciesMs.length,
    errors,
    elapsedMs: performance.now() - started,
    latenciesMs,
    errorSamples,
  };
}

/**
 * The client side of the SendMessage bench: one request creates one task and is done when that task is
 * COMPLETED, sent the same way to any A2A v1.0 server (the platform or the reference), in closed loop.
 */
import { credentials, status as GrpcStatus, Metadata, type ServiceError } from '@grpc/grpc-js';
import { a2aPb } from '@lib/a2a-protocol';
import { randomUUID } from 'node:crypto';
import { Agent, request } from 'node:http';
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
  if (!(error instanceof Error)) {
    return String(error);
  }
  // undici reports every network failure as "fetch failed"; the kind is in its cause.
  const cause = error.cause as { code?: unknown; message?: unknown } | undefined;
  const detail = cause ? ` (${String(cause.code ?? cause.message)})` : '';
  return `${error.name}: ${error.message}${detail}`;
}

/** Runs one request; an exception (a network error, a timeout) becomes its error label. */
async function labelled(send: SendOnce): Promise<string | null> {
  try {
    return await send();
  } catch (error) {
    return `exception: ${describe(error)}`;
  }
}

/** A streaming `POST` (`fetch`: its body is read as a stream of events). */
function post(url: string, contentType: string, body: unknown, accept: string): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': contentType, Accept: accept, ...HTTP_HEADERS },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
}

interface JsonRpcReply {
  result?: StateHolder;
  error?: { code?: number; message?: string };
}

function jsonRpcErrorLabel(error: { code?: number; message?: string }): string {
  return `JSON-RPC error ${String(error.code)}: ${String(error.message).slice(0, 80)}`;
}

/** An answer read whole: its status and body. */
interface Answer {
  status: number;
  text: string;
}

/**
 * A blocking `POST` over one of `agent`'s kept-alive connections, read whole. Node's own HTTP client, not
 * `fetch`: undici's `fetch` spent about 0.8 ms of CPU per request in this process, as much as the server under
 * test spends on it, on the same two cores and in the latency of every request at one in flight.
 */
function postOnce(agent: Agent, url: string, contentType: string, body: unknown): Promise<Answer> {
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
          ...HTTP_HEADERS,
        },
        timeout: REQUEST_TIMEOUT_MS,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
        );
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end(payload);
  });
}

const isOk = (status: number): boolean => status >= 200 && status < 300;

/** JSON-RPC 2.0, method SendMessage. */
async function sendJsonRpc(agent: Agent, url: string): Promise<string | null> {
  const { status, text } = await postOnce(agent, url, 'application/json', {
    jsonrpc: '2.0',
    id: 1,
    method: 'SendMessage',
    params: { message: userMessage() },
  });
  if (!isOk(status)) {
    return `HTTP ${status}`;
  }
  const json = JSON.parse(text) as JsonRpcReply;
  if (json.error) {
    return jsonRpcErrorLabel(json.error);
  }
  return completedOrLabel(json.result?.task?.status?.state);
}

/** HTTP+JSON: `POST {base}/message:send`, the SendMessageRequest as ProtoJSON. */
async function sendRest(agent: Agent, url: string): Promise<string | null> {
  const { status, text } = await postOnce(agent, url, 'application/a2a+json', {
    message: userMessage(),
  });
  if (!isOk(status)) {
    return `HTTP ${status}: ${text.slice(0, 80)}`;
  }
  const json = JSON.parse(text) as StateHolder;
  return completedOrLabel(json.task?.status?.state);
}

/**
 * Reads a `text/event-stream` body to its end and returns the parsed `data:` payload of each event, in
 * order, handing each to `onEvent`; `onEvent` returning a label stops reading and becomes the result.
 */
async function readSse(
  body: ReadableStream<Uint8Array>,
  onEvent: (data: unknown) => string | undefined,
): Promise<string | undefined> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let buffer = '';
  const dispatch = (block: string): string | undefined => {
    const data = block
      .split(/\r?\n/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5));
    return data.length === 0 ? undefined : onEvent(JSON.parse(data.join('\n')));
  };
  for (;;) {
    const { done, value } = await reader.read();
    buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
    const blocks = buffer.split(/\r?\n\r?\n/);
    buffer = done ? '' : (blocks.pop() ?? '');
    for (const block of blocks) {
      const label = dispatch(block);
      if (label !== undefined) {
        await reader.cancel().catch(() => undefined);
        return label;
      }
    }
    if (done) {
      return undefined;
    }
  }
}

/** An answer that is not an event stream: its status, or the JSON-RPC error in its body. */
async function notAStream(response: Response): Promise<string> {
  const text = await response.text();
  try {
    const json = JSON.parse(text) as JsonRpcReply;
    if (json.error) {
      return jsonRpcErrorLabel(json.error);
    }
  } catch {
    // not JSON: the status says enough
  }
  return `HTTP ${response.status} ${String(response.headers.get('content-type'))}: ${text.slice(0, 60)}`;
}

/** SendStreamingMessage over SSE; `unwrap` takes the StreamResponse out of one event's payload. */
async function stream(
  response: Response,
  unwrap: (data: unknown) => { event?: StateHolder; error?: string },
): Promise<string | null> {
  if (!response.ok || !response.body) {
    return notAStream(response);
  }
  if (!String(response.headers.get('content-type')).startsWith('text/event-stream')) {
    return notAStream(response);
  }
  let last: StateHolder | undefined;
  const label = await readSse(response.body, (data) => {
    const { event, error } = unwrap(data);
    last = event ?? last;
    return error;
  });
  return label ?? lastEventLabel(last);
}

/** JSON-RPC 2.0 `SendStreamingMessage`, `Accept: text/event-stream`: each event a JSON-RPC response. */
async function streamJsonRpc(url: string): Promise<string | null> {
  const response = await post(
    url,
    'application/json',
    { jsonrpc: '2.0', id: 1, method: 'SendStreamingMessage', params: { message: userMessage() } },
    'text/event-stream',
  );
  return stream(response, (data) => {
    const reply = data as JsonRpcReply;
    return reply.error ? { error: jsonRpcErrorLabel(reply.error) } : { event: reply.result };
  });
}

/** HTTP+JSON `POST {base}/message:stream`: each event a StreamResponse. */
async function streamRest(url: string): Promise<string | null> {
  const response = await post(
    url,
    'application/a2a+json',
    { message: userMessage() },
    'text/event-stream',
  );
  return stream(response, (data) => ({ event: data as StateHolder }));
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
  const plain = (send: SendOnce, close: () => void = () => undefined): Sender => ({
    mode,
    binding,
    send: () => labelled(send),
    close,
  });
  // A blocking send keeps its connections open between requests (as `fetch` does for the streams).
  const blocking = (send: (agent: Agent) => Promise<string | null>): Sender => {
    const agent = new Agent({ keepAlive: true });
    return plain(
      () => send(agent),
      () => agent.destroy(),
    );
  };
  switch (binding) {
    case 'jsonrpc':
      return mode === 'send'
        ? blocking((agent) => sendJsonRpc(agent, endpoints.jsonrpcUrl))
        : plain(() => streamJsonRpc(endpoints.jsonrpcUrl));
    case 'rest':
      return mode === 'send'
        ? blocking((agent) => sendRest(agent, `${endpoints.restBaseUrl}/message:send`))
        : plain(() => streamRest(`${endpoints.restBaseUrl}/message:stream`));
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

import { ApiError } from '../shared/api';
import { readEventStream } from '../shared/sse';
import type { StreamResponse } from './a2a-model';

/** One frame of the raw panel: a request the playground sent or a response / SSE event it received. */
export interface Frame {
  readonly direction: 'sent' | 'received';
  readonly at: string;
  /** What it is: `POST <url> SendStreamingMessage`, `SSE id 7`, `200 GetTask`. */
  readonly label: string;
  readonly body: string;
}

/** One event of an A2A stream with its SSE id (the task generation on this platform). */
export interface StreamEvent {
  readonly id: string | null;
  readonly response: StreamResponse;
}

/** Where and how the playground calls one agent over the JSON-RPC binding (spec digest §7). */
export interface AgentEndpoint {
  readonly url: string;
  /** `AgentInterface.tenant`: copied into every request's params when set (§10.9). */
  readonly tenant?: string;
  /** The extensions to activate on every request (`A2A-Extensions`, §10.2). */
  readonly extensions: readonly string[];
}

/** A JSON-RPC error answer (before the stream or as its last event). */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data: unknown,
  ) {
    super(message);
  }
}

/**
 * A2A over JSON-RPC with the tenant API key (`X-API-Key`) and `A2A-Version: 1.0`; every request and every
 * received frame is reported to `onFrame` (the API key is never part of a frame).
 */
export class A2aClient {
  private nextId = 1;

  constructor(
    private readonly apiKey: () => string | null,
    private readonly onFrame: (frame: Frame) => void,
  ) {}

  /** A unary call; resolves with its `result`. */
  async call<T>(endpoint: AgentEndpoint, method: string, params: object): Promise<T> {
    const response = await this.post(endpoint, method, params, {});
    const text = await response.text();
    this.frame('received', `${response.status} ${method}`, text);
    return resultOf<T>(response.status, text);
  }

  /**
   * A streaming call (SendStreamingMessage, SubscribeToTask): yields its events until the server closes the
   * stream or `signal` aborts. `lastEventId` resumes a subscription after that event (SSE `Last-Event-ID`).
   */
  async *stream(
    endpoint: AgentEndpoint,
    method: 'SendStreamingMessage' | 'SubscribeToTask',
    params: object,
    signal: AbortSignal,
    lastEventId?: string,
  ): AsyncGenerator<StreamEvent> {
    const response = await this.post(
      endpoint,
      method,
      params,
      {
        accept: 'text/event-stream',
        ...(lastEventId === undefined ? {} : { 'last-event-id': lastEventId }),
      },
      signal,
    );
    const type = response.headers.get('content-type') ?? '';
    if (!type.startsWith('text/event-stream') || !response.body) {
      // An error before the first event is a plain JSON-RPC answer (spec digest §7.3).
      const text = await response.text();
      this.frame('received', `${response.status} ${method}`, text);
      resultOf(response.status, text);
      throw new ApiError(response.status, `${method} answered without a stream`, text);
    }
    for await (const event of readEventStream(response.body, signal)) {
      this.frame(
        'received',
        `SSE ${event.event}${event.id === undefined ? '' : ` id ${event.id}`}`,
        event.data,
      );
      const result = resultOf<StreamResponse>(200, event.data);
      yield { id: event.id ?? null, response: result };
    }
  }

  private async post(
    endpoint: AgentEndpoint,
    method: string,
    params: object,
    extra: Record<string, string>,
    signal?: AbortSignal,
  ): Promise<Response> {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: this.nextId++,
      method,
      params: endpoint.tenant ? { ...params, tenant: endpoint.tenant } : params,
    });
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'a2a-version': '1.0',
      ...(endpoint.extensions.length > 0
        ? { 'a2a-extensions': endpoint.extensions.join(',') }
        : {}),
      ...extra,
    };
    const shown = Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}`)
      .join('\n');
    this.frame('sent', `POST ${endpoint.url} ${method}`, `${shown}\n\n${pretty(body)}`);
    const apiKey = this.apiKey();
    return fetch(endpoint.url, {
      method: 'POST',
      headers: { ...headers, ...(apiKey ? { 'x-api-key': apiKey } : {}) },
      body,
      signal: signal ?? null,
    });
  }

  private frame(direction: Frame['direction'], label: string, body: string): void {
    this.onFrame({ direction, at: new Date().toISOString(), label, body: pretty(body) });
  }
}

/** The `result` of a JSON-RPC answer, or its error thrown. */
function resultOf<T>(status: number, text: string): T {
  let envelope: { result?: unknown; error?: { code?: unknown; message?: unknown; data?: unknown } };
  try {
    envelope = JSON.parse(text) as typeof envelope;
  } catch {
    throw new ApiError(status, `${status}: ${text.slice(0, 200) || 'no body'}`, text);
  }
  if (envelope.error) {
    const { code, message, data } = envelope.error;
    throw new RpcError(
      typeof code === 'number' ? code : 0,
      `${typeof code === 'number' ? code : status}: ${typeof message === 'string' ? message : 'error'}`,
      data,
    );
  }
  if (!('result' in envelope)) {
    throw new ApiError(status, `${status}: not a JSON-RPC answer`, text);
  }
  return envelope.result as T;
}

function pretty(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

import type { StreamResponse } from '@lib/a2a-protocol';
import { tenantIdOf } from '@lib/ids';
import { taskStreamId } from '@lib/task-domain';
import type { Pool } from 'pg';
import { requestInit, type HttpRequest } from './http';
import { rpcPost, type RpcErrorObject } from './json-rpc';
import type { ServiceParams } from './wire';

/** One Server-Sent Event as it came over the wire (only the fields this platform uses). */
export interface SseFrame {
  /** The `id:` field of this event, or null when the event had none. */
  id: string | null;
  /** The `event:` field, or null for the default (`message`) type. */
  event: string | null;
  /** The `data:` lines joined with `\n`. */
  data: string;
}

/** A JSON-RPC response envelope carried by one frame (spec digest §7.3). */
export interface RpcFrame {
  jsonrpc: string;
  id: unknown;
  result?: StreamResponse;
  error?: RpcErrorObject;
}

/** How long a single read may wait before the test fails, unless told otherwise. */
export const DEFAULT_READ_TIMEOUT_MS = 15_000;

/**
 * A raw SSE reader over a `fetch` response (opened by `openEventStream`): parses `id:` / `event:` /
 * `data:` frames incrementally, as a browser's EventSource would (comments and unknown fields ignored, CRLF /
 * LF / CR line ends). Every read is bounded; `abort()` drops the connection the way a client that goes away
 * does.
 */
export class SseConnection implements AsyncIterable<SseFrame> {
  /** Every frame read so far, in order (for assertions and failure messages). */
  readonly frames: SseFrame[] = [];
  /** True once the server closed the stream (a read returned the end of the body). */
  ended = false;
  aborted = false;
  private readonly queue: SseFrame[] = [];
  private readonly decoder = new TextDecoder();
  private buffer = '';
  private lastWasCr = false;
  private fieldId: string | null = null;
  private fieldEvent: string | null = null;
  private fieldData: string[] = [];
  private readonly reader: ReadableStreamDefaultReader<Uint8Array> | null;

  constructor(
    readonly response: Response,
    private readonly controller: AbortController,
  ) {
    this.reader = this.isEventStream && response.body ? response.body.getReader() : null;
  }

  get status(): number {
    return this.response.status;
  }

  get headers(): Headers {
    return this.response.headers;
  }

  get contentType(): string {
    return this.response.headers.get('content-type') ?? '';
  }

  get isEventStream(): boolean {
    return this.contentType.startsWith('text/event-stream');
  }

  /** The body of a response that is not a stream (a pre-stream error). */
  async text(): Promise<string> {
    if (this.isEventStream) {
      throw new Error('the response is an event stream; read its frames instead');
    }
    return this.response.text();
  }

  /** The next frame, or null when the server closed the stream. Fails after `timeoutMs`. */
  async next(timeoutMs = DEFAULT_READ_TIMEOUT_MS): Promise<SseFrame | null> {
    if (!this.reader) {
      throw new Error(`not an event stream: ${this.status} ${this.contentType}`);
    }
    const deadline = Date.now() + timeoutMs;
    while (this.queue.length === 0) {
      if (this.ended || this.aborted) {
        return null;
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        throw this.timeout(timeoutMs);
      }
      const chunk = await this.readChunk(left, timeoutMs);
      if (chunk === null) {
        this.ended = true;
        this.feed(this.decoder.decode());
        // An unterminated event at the end of the body is discarded (as EventSource does).
        return this.queue.shift() ?? null;
      }
      this.feed(this.decoder.decode(chunk, { stream: true }));
    }
    return this.queue.shift() ?? null;
  }

  /**
   * Reads frames until the server closes the stream, telling `onFrame` of each as it arrives; fails if that
   * takes longer than `timeoutMs`.
   */
  async collect(
    timeoutMs = DEFAULT_READ_TIMEOUT_MS * 2,
    onFrame: (frame: SseFrame) => void = () => undefined,
  ): Promise<SseFrame[]> {
    const { frames } = await this.readUntil(timeoutMs, (frame) => {
      onFrame(frame);
      return false;
    });
    return frames;
  }

  /** Reads frames until one satisfies `match` (it is returned too); fails at the end of the stream. */
  async until(
    match: (frame: SseFrame) => boolean,
    timeoutMs = DEFAULT_READ_TIMEOUT_MS,
  ): Promise<SseFrame[]> {
    const { frames, ended } = await this.readUntil(timeoutMs, match);
    if (ended) {
      throw new Error(`stream ended before the awaited frame; read ${JSON.stringify(frames)}`);
    }
    return frames;
  }

  /** Reads frames until `stop` accepts one or the stream ends, all within `timeoutMs`. */
  private async readUntil(
    timeoutMs: number,
    stop: (frame: SseFrame) => boolean,
  ): Promise<{ frames: SseFrame[]; ended: boolean }> {
    const deadline = Date.now() + timeoutMs;
    const frames: SseFrame[] = [];
    for (;;) {
      const frame = await this.next(Math.max(1, deadline - Date.now()));
      if (frame === null) {
        return { frames, ended: true };
      }
      frames.push(frame);
      if (stop(frame)) {
        return { frames, ended: false };
      }
    }
  }

  async *[Symbol.asyncIterator](): AsyncIterator<SseFrame> {
    for (;;) {
      const frame = await this.next();
      if (frame === null) {
        return;
      }
      yield frame;
    }
  }

  /** Drops the connection (the client goes away mid-stream). */
  abort(): void {
    if (this.aborted) {
      return;
    }
    this.aborted = true;
    this.controller.abort();
    this.reader?.cancel().catch(() => undefined);
  }

  private async readChunk(leftMs: number, timeoutMs: number): Promise<Uint8Array | null> {
    const reader = this.reader as ReadableStreamDefaultReader<Uint8Array>;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), leftMs);
    });
    try {
      const read = reader.read();
      const result = await Promise.race([read, timedOut]);
      if (result === 'timeout') {
        read.catch(() => undefined);
        throw this.timeout(timeoutMs);
      }
      return result.done ? null : result.value;
    } catch (error) {
      if (this.aborted) {
        return null;
      }
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  private timeout(timeoutMs: number): Error {
    this.abort();
    return new Error(
      `no complete SSE frame within ${timeoutMs} ms; frames so far: ${JSON.stringify(this.frames)}`,
    );
  }

  /** Splits decoded text into lines (CRLF, LF or CR) and applies each one. */
  private feed(text: string): void {
    for (const char of text) {
      if (this.lastWasCr) {
        this.lastWasCr = false;
        if (char === '\n') {
          continue;
        }
      }
      if (char === '\r' || char === '\n') {
        this.lastWasCr = char === '\r';
        this.line(this.buffer);
        this.buffer = '';
      } else {
        this.buffer += char;
      }
    }
  }

  private line(line: string): void {
    if (line === '') {
      if (this.fieldData.length > 0) {
        const frame: SseFrame = {
          id: this.fieldId,
          event: this.fieldEvent,
          data: this.fieldData.join('\n'),
        };
        this.frames.push(frame);
        this.queue.push(frame);
      }
      this.fieldId = null;
      this.fieldEvent = null;
      this.fieldData = [];
      return;
    }
    if (line.startsWith(':')) {
      return;
    }
    const colon = line.indexOf(':');
    const name = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) {
      value = value.slice(1);
    }
    if (name === 'id') {
      this.fieldId = value;
    } else if (name === 'event') {
      this.fieldEvent = value;
    } else if (name === 'data') {
      this.fieldData.push(value);
    }
  }
}

/**
 * One request that asks for an event stream (`Accept: text/event-stream`); the response headers must come
 * within `timeoutMs`, the events are read from the connection.
 */
export async function openEventStream(
  request: HttpRequest,
  timeoutMs = DEFAULT_READ_TIMEOUT_MS,
): Promise<SseConnection> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    const response = await fetch(request.url, {
      ...requestInit({ ...request, headers: { Accept: 'text/event-stream', ...request.headers } }),
      signal: controller.signal,
    });
    return new SseConnection(response, controller);
  } finally {
    clearTimeout(timer);
  }
}

/** POSTs `body` (JSON unless a string) to a JSON-RPC endpoint asking for an event stream (spec digest §7.3). */
export function openSse(
  url: string,
  body: unknown,
  options: ServiceParams = {},
  timeoutMs?: number,
): Promise<SseConnection> {
  return openEventStream(rpcPost(url, body, options), timeoutMs);
}

/** The JSON-RPC envelope a frame carries. */
export function rpcOf(frame: SseFrame): RpcFrame {
  return JSON.parse(frame.data) as RpcFrame;
}

/** The StreamResponse of a success frame (throws on an error frame). */
export function resultOf(frame: SseFrame): StreamResponse {
  const rpc = rpcOf(frame);
  if (rpc.result === undefined) {
    throw new Error(`expected a success frame, got ${frame.data}`);
  }
  return rpc.result;
}

/** The numeric generation of a frame's `id:` (throws when the frame has none). */
export function generationOf(frame: SseFrame): number {
  if (frame.id === null || !/^\d+$/.test(frame.id)) {
    throw new Error(`frame without a generation id: ${JSON.stringify(frame)}`);
  }
  return Number(frame.id);
}

/** Which kind of StreamResponse a frame carries: task, message, statusUpdate or artifactUpdate. */
export function kindOf(
  response: StreamResponse,
): 'task' | 'message' | 'statusUpdate' | 'artifactUpdate' {
  if ('task' in response) {
    return 'task';
  }
  if ('message' in response) {
    return 'message';
  }
  if ('statusUpdate' in response) {
    return 'statusUpdate';
  }
  return 'artifactUpdate';
}

/** Event types that are platform-internal facts or client messages: a stream shows nothing for them. */
export const HIDDEN_EVENT_TYPES: ReadonlySet<string> = new Set([
  'TaskLeaseGranted',
  'TaskLeaseExpired',
  'TaskCancelRequested',
  'UserMessageAppended',
]);

export interface LoggedGeneration {
  version: number;
  type: string;
  data: Record<string, unknown>;
}

/** Every event of a task's stream in the log, in generation order. */
export async function logGenerations(
  pool: Pool,
  tenantId: string,
  taskId: string,
): Promise<LoggedGeneration[]> {
  const rows = await pool.query<{
    stream_version: number;
    event_type: string;
    data: Record<string, unknown>;
  }>(
    `SELECT stream_version, event_type, data FROM events.messages
      WHERE tenant_id = $1 AND stream_id = $2 ORDER BY stream_version`,
    [tenantId, taskStreamId(tenantIdOf(tenantId), taskId)],
  );
  return rows.rows.map((r) => ({ version: r.stream_version, type: r.event_type, data: r.data }));
}

/** The generations of a task's log that a stream shows as an event (hidden event types left out). */
export async function streamedGenerations(
  pool: Pool,
  tenantId: string,
  taskId: string,
): Promise<number[]> {
  return (await logGenerations(pool, tenantId, taskId))
    .filter((g) => !HIDDEN_EVENT_TYPES.has(g.type))
    .map((g) => g.version);
}

import type { StreamResponse } from '@lib/a2a-protocol';
import type { ServerResponse } from 'node:http';
import type { StreamItem, TaskSubscription } from './task-event-feed';

/** A stream that wrote nothing for this long gets a comment line, so that proxies keep it open. */
const KEEP_ALIVE_MS = 15_000;
/** How often the one keep-alive timer of the process looks for quiet streams (spreads their writes). */
const KEEP_ALIVE_TICK_MS = 1_000;

/** How one binding frames a stream item, and the error it sends when a stream ends abnormally. */
export interface SseFraming {
  data(item: StreamItem): unknown;
  error(reason: 'overflow' | 'error'): unknown;
}

/** An SSE stream that is running: `ended` resolves once it has ended and its response is closed. */
export interface SseStream {
  ended: Promise<void>;
}

/**
 * Writes a task's events as Server-Sent Events (spec digest §7.3, §8.4): each event carries `id: <generation>`
 * so a client can resume with Last-Event-ID. Resolves once the headers and the first item are written; the
 * stream then runs on its own, driven by the subscription (ADR 0008: an idle stream holds no pending call
 * chain, no timer and no promise of its own, only its socket, its subscription and a keep-alive entry), until
 * the subscription ends or the client leaves. Backpressure: while the socket is full nothing is taken from the
 * subscription, which keeps buffering up to its bound and then cuts the client off rather than growing memory.
 */
export function writeSse(
  res: ServerResponse,
  framing: SseFraming,
  first: StreamItem | null,
  subscription: TaskSubscription | null,
  headers: Record<string, string> = {},
): Promise<SseStream> {
  res.statusCode = 200;
  res.setHeader('Content-Type', 'text/event-stream');
  res.setHeader('Cache-Control', 'no-cache');
  res.setHeader('Connection', 'keep-alive');
  res.setHeader('X-Accel-Buffering', 'no');
  for (const [name, value] of Object.entries(headers)) {
    res.setHeader(name, value);
  }
  res.flushHeaders();
  const room = first ? res.write(frame(first, framing)) : true;
  if (!subscription) {
    res.end();
    return Promise.resolve({ ended: Promise.resolve() });
  }
  return Promise.resolve({ ended: new SseRun(res, framing, subscription).start(!room) });
}

/** One running SSE stream: takes the subscription's items whenever it has some and the socket has room. */
class SseRun {
  /** The socket is full: wait for 'drain' before taking more. */
  private blocked = false;
  private finished = false;
  private onEnd: () => void = () => undefined;

  constructor(
    private readonly res: ServerResponse,
    private readonly framing: SseFraming,
    private readonly subscription: TaskSubscription,
  ) {}

  /** Starts pumping (`blocked`: the socket is already full); resolves once the stream has ended. */
  start(blocked: boolean): Promise<void> {
    const ended = new Promise<void>((resolve) => (this.onEnd = resolve));
    this.blocked = blocked;
    // The request's own 'close' fired when its body was read; the response's fires when the client goes.
    this.res.on('close', this.gone);
    this.res.on('drain', this.drained);
    keepAlives.add(this.res);
    this.subscription.onReady(this.pump);
    this.pump();
    return ended;
  }

  private readonly gone = (): void => {
    this.subscription.close('closed');
    this.finish();
  };

  private readonly drained = (): void => {
    this.blocked = false;
    this.pump();
  };

  private readonly pump = (): void => {
    if (this.finished) {
      return;
    }
    if (this.res.destroyed || this.res.writableEnded) {
      this.gone();
      return;
    }
    if (this.blocked) {
      if (this.subscription.ended === 'overflow') {
        // Cut off while its socket is full: nothing more can reach this client.
        this.res.destroy();
        this.finish();
      }
      return;
    }
    for (;;) {
      const items = this.subscription.takeNow();
      if (items.length === 0) {
        const ended = this.subscription.ended;
        if (ended !== null) {
          if (ended === 'overflow' || ended === 'error') {
            this.res.write(`event: error\ndata: ${JSON.stringify(this.framing.error(ended))}\n\n`);
          }
          this.finish();
        }
        return;
      }
      let room = true;
      for (const item of items) {
        room = this.res.write(frame(item, this.framing)) && room;
      }
      keepAlives.wrote(this.res);
      if (!room) {
        this.blocked = true;
        return;
      }
    }
  };

  private finish(): void {
    if (this.finished) {
      return;
    }
    this.finished = true;
    this.subscription.onReady(null);
    this.subscription.close('closed');
    this.res.off('close', this.gone);
    this.res.off('drain', this.drained);
    keepAlives.delete(this.res);
    if (!this.res.writableEnded) {
      this.res.end();
    }
    this.onEnd();
  }
}

/**
 * The keep-alive comments of every SSE stream of the process, from one timer: a stream that wrote nothing for
 * KEEP_ALIVE_MS gets one. Streams that carry events get none, and the writes of idle ones spread over the
 * ticks instead of one timer per stream.
 */
class KeepAlives {
  /** Each stream and when it last wrote (ms). */
  private readonly streams = new Map<ServerResponse, number>();
  private timer: NodeJS.Timeout | null = null;

  add(res: ServerResponse): void {
    this.streams.set(res, Date.now());
    if (this.timer === null) {
      this.timer = setInterval(() => this.tick(), KEEP_ALIVE_TICK_MS);
      this.timer.unref();
    }
  }

  wrote(res: ServerResponse): void {
    if (this.streams.has(res)) {
      this.streams.set(res, Date.now());
    }
  }

  delete(res: ServerResponse): void {
    this.streams.delete(res);
    if (this.streams.size === 0 && this.timer !== null) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  private tick(): void {
    const due = Date.now() - KEEP_ALIVE_MS;
    for (const [res, last] of this.streams) {
      if (last <= due && !res.writableNeedDrain) {
        res.write(': keep-alive\n\n');
        this.streams.set(res, Date.now());
      }
    }
  }
}

const keepAlives = new KeepAlives();

/**
 * The JSON of each item's response, made once however many subscribers it is written to (the items a task's
 * channel reads are shared by all of its subscriptions).
 */
const responseJson = new WeakMap<StreamResponse, string>();

function frame(item: StreamItem, framing: SseFraming): string {
  return `id: ${item.id}\ndata: ${encode(framing.data(item), item.response)}\n\n`;
}

/**
 * `JSON.stringify(value)`, reusing the response's JSON when `value` is the response itself or a plain object
 * holding it as a property (the JSON-RPC envelope).
 */
function encode(value: unknown, response: StreamResponse): string {
  const shared = (): string => {
    let json = responseJson.get(response);
    if (json === undefined) {
      json = JSON.stringify(response);
      responseJson.set(response, json);
    }
    return json;
  };
  if (value === response) {
    return shared();
  }
  if (
    typeof value !== 'object' ||
    value === null ||
    Object.getPrototypeOf(value) !== Object.prototype ||
    'toJSON' in value ||
    !Object.values(value).includes(response)
  ) {
    return JSON.stringify(value);
  }
  const members: string[] = [];
  for (const [key, member] of Object.entries(value)) {
    const json = member === response ? shared() : (JSON.stringify(member) as string | undefined);
    if (json !== undefined) {
      members.push(`${JSON.stringify(key)}:${json}`);
    }
  }
  return `{${members.join(',')}}`;
}

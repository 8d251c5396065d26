import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

const RESUMABLE_STREAMS = 'https://a2a-platform.dev/extensions/resumable-streams/v1';
const TERMINAL = new Set([
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_REJECTED',
]);
/** A client's deadline for one attempt; longer is a hang, which no rule allows. */
const ATTEMPT_TIMEOUT_MS = 30_000;
/** How long one operation is retried before the client gives up on it. */
const OPERATION_DEADLINE_MS = 90_000;

/** Where the clients send: the replicas that are endpoints now, and whether one was killed. */
export interface Endpoints {
  /** Base URLs of the ready replicas of a Service (round-robin is the client's). */
  ready(service: 'ingress' | 'admin'): string[];
  /**
   * Whether the replica at `baseUrl` was SIGKILLed, or not yet serving again, at some moment from `sentAt`
   * to `failedAt` (an attempt in flight then that failed without an answer failed because of the kill).
   */
  killedAround(baseUrl: string, sentAt: number, failedAt: number): boolean;
}

/** Something a client saw go wrong; `allowed` when the rules count it as retryable. */
export interface ClientError {
  at: number;
  kind: string;
  allowed: boolean;
  detail: string;
}

/** One stream a client followed, across its resumptions. */
export interface FollowedStream {
  agent: string;
  taskId: string | null;
  /** Generation ids received, in order, over every connection. */
  ids: number[];
  /** Times the stream was opened again with Last-Event-ID after it was cut. */
  resumes: number;
  /** Events received when resubscribing after the stream had ended (any is a duplicate). */
  afterEnd: number;
  completed: boolean;
  failure: string | null;
}

export interface LoadOptions {
  tenant: string;
  apiKey: string;
  adminToken: string;
  /** New SendMessage calls per second (echo). */
  ratePerSecond: number;
  /** Streams followed at once (echo and countdown in turn). */
  streams: number;
}

type Attempt<T> =
  | { ok: true; value: T }
  | { ok: false; kind: string; allowed: boolean; retryAfterMs: number; detail: string };

interface RpcBody {
  result?: { task?: { id: string; status: { state: string } } } & {
    id?: string;
    status?: { state: string };
  };
  error?: { code: number; message?: string; data?: { reason?: string }[] };
}

/**
 * The drill's clients, over JSON-RPC to the ingress replicas round-robin: SendMessage at a steady rate,
 * streams (SendStreamingMessage, resumed with SubscribeToTask and Last-Event-ID when cut, then
 * resubscribed once after their end), and an operator reading the admin API. Retryable answers are retried
 * as a well-behaved client does: 503 after Retry-After, a connection error after a short pause.
 */
export class DrillLoad {
  readonly errors: ClientError[] = [];
  /** Task id → its agent and how it was created, for the checks afterwards. */
  readonly accepted = new Map<string, { agent: string; how: string }>();
  /** Operations given up on (never answered successfully within the deadline). */
  readonly abandoned: string[] = [];
  readonly streams: FollowedStream[] = [];
  sent = 0;
  adminCalls = 0;
  private next = 0;
  private stopped = false;
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly endpoints: Endpoints,
    private readonly options: LoadOptions,
  ) {}

  start(): void {
    this.track(this.sendLoop());
    for (let i = 0; i < this.options.streams; i++) {
      this.track(this.streamLoop(i));
    }
    this.track(this.adminLoop());
  }

  /** Stops starting new work and waits for what is in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    while (this.running.size > 0) {
      await Promise.race(this.running);
    }
  }

  /** The task's state through GetTask (retried like everything else), or null if it cannot be read. */
  async taskState(agent: string, taskId: string): Promise<string | null> {
    const reply = await this.retry(`GetTask ${taskId}`, () =>
      this.rpc(agent, 'GetTask', { id: taskId }),
    );
    return reply?.result?.status?.state ?? null;
  }

  /** Every generation of a task's stream from its start (SubscribeToTask with Last-Event-ID 0). */
  async replay(agent: string, taskId: string): Promise<number[] | null> {
    for (let tries = 0; tries < 5; tries++) {
      const base = this.pick('ingress');
      if (!base) {
        await sleep(500);
        continue;
      }
      const ids: number[] = [];
      const outcome = await this.readStream(base, agent, subscribe(taskId), '0', (id) =>
        ids.push(id),
      );
      if (outcome.ended === 'terminal' || outcome.ended === 'closed') {
        return ids;
      }
      await sleep(500);
    }
    return null;
  }

  private track(work: Promise<void>): void {
    const tracked = work.finally(() => this.running.delete(tracked));
    this.running.add(tracked);
  }

  private pick(service: 'ingress' | 'admin'): string | null {
    const ready = this.endpoints.ready(service);
    return ready.length === 0 ? null : (ready[this.next++ % ready.length] ?? null);
  }

  private async sendLoop(): Promise<void> {
    const everyMs = 1_000 / this.options.ratePerSecond;
    while (!this.stopped) {
      const started = Date.now();
      this.sent += 1;
      this.track(this.sendOne(this.sent % 2 === 0));
      await sleep(Math.max(0, started + everyMs - Date.now()));
    }
  }

  private async sendOne(returnImmediately: boolean): Promise<void> {
    const messageId = randomUUID();
    const params = {
      message: { role: 'ROLE_USER', messageId, parts: [{ text: `drill ${messageId}` }] },
      configuration: { returnImmediately },
    };
    const reply = await this.retry(`SendMessage ${messageId}`, () =>
      this.rpc('echo', 'SendMessage', params),
    );
    const task = reply?.result?.task;
    if (task) {
      this.accepted.set(task.id, { agent: 'echo', how: 'SendMessage' });
    }
  }

  /** Runs `attempt` until it succeeds, retrying what may be retried; records every failure. */
  private async retry<T>(what: string, attempt: () => Promise<Attempt<T>>): Promise<T | null> {
    const deadline = Date.now() + OPERATION_DEADLINE_MS;
    while (Date.now() < deadline) {
      const outcome = await attempt();
      if (outcome.ok) {
        return outcome.value;
      }
      this.errors.push({
        at: Date.now(),
        kind: outcome.kind,
        allowed: outcome.allowed,
        detail: `${what}: ${outcome.detail}`.slice(0, 300),
      });
      if (!outcome.allowed) {
        break;
      }
      await sleep(outcome.retryAfterMs);
    }
    this.abandoned.push(what);
    return null;
  }

  private async rpc(agent: string, method: string, params: unknown): Promise<Attempt<RpcBody>> {
    const base = this.pick('ingress');
    if (!base) {
      return noEndpoint();
    }
    const sentAt = Date.now();
    try {
      const response = await fetch(`${base}/agents/${this.options.tenant}/${agent}/jsonrpc`, {
        method: 'POST',
        headers: this.headers(),
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
        signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
      });
      const body = (await response.json().catch(() => ({}))) as RpcBody;
      if (response.ok && body.result) {
        return { ok: true, value: body };
      }
      const reason = body.error?.data?.find((d) => d.reason)?.reason ?? 'no reason';
      return httpFailure(response, `JSON-RPC ${body.error?.code ?? '?'} ${reason}`);
    } catch (error) {
      return this.networkFailure(base, sentAt, error);
    }
  }

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    return {
      'Content-Type': 'application/json',
      'A2A-Version': '1.0',
      'X-API-Key': this.options.apiKey,
      ...extra,
    };
  }

  /**
   * A failure without an HTTP answer of an attempt sent at `sentAt`; judged by whether its replica was
   * killed meanwhile.
   */
  private networkFailure<T>(base: string, sentAt: number, error: unknown): Attempt<T> {
    const name = (error as { name?: string }).name;
    if (name === 'TimeoutError' || name === 'AbortError') {
      return {
        ok: false,
        kind: 'hang (no answer in 30 s)',
        allowed: false,
        retryAfterMs: 0,
        detail: `${base}: ${String(error)}`,
      };
    }
    const code = (error as { cause?: { code?: string } }).cause?.code ?? 'connection error';
    const killed = this.endpoints.killedAround(base, sentAt, Date.now());
    return {
      ok: false,
      kind: killed ? `${code} from a killed replica` : `${code} from a live replica`,
      allowed: killed,
      retryAfterMs: 250,
      detail: `${base} at ${new Date().toISOString()}: ${String((error as { cause?: unknown }).cause ?? error)}`,
    };
  }

  private async streamLoop(index: number): Promise<void> {
    let turn = index;
    while (!this.stopped) {
      const agent = turn++ % 2 === 0 ? 'countdown' : 'echo';
      const stream = await this.follow(agent);
      this.streams.push(stream);
      if (stream.taskId) {
        this.accepted.set(stream.taskId, { agent, how: 'SendStreamingMessage' });
      }
    }
  }

  /**
   * SendStreamingMessage, resumed with SubscribeToTask + Last-Event-ID each time the stream is cut before a
   * terminal state; then one more SubscribeToTask from the last id, which must bring nothing.
   */
  private async follow(agent: string): Promise<FollowedStream> {
    const stream: FollowedStream = {
      agent,
      taskId: null,
      ids: [],
      resumes: 0,
      afterEnd: 0,
      completed: false,
      failure: null,
    };
    const messageId = randomUUID();
    const send = {
      jsonrpc: '2.0',
      id: 1,
      method: 'SendStreamingMessage',
      params: {
        message: {
          role: 'ROLE_USER',
          messageId,
          // Ten seconds of countdown: twice the ingress's preStop pause, so its drains cut streams.
          parts: [{ text: agent === 'countdown' ? '20' : `drill ${messageId}` }],
          metadata: { stepMs: 500 },
        },
      },
    };
    const deadline = Date.now() + OPERATION_DEADLINE_MS;
    let opened = false;
    while (!stream.completed && Date.now() < deadline) {
      const base = this.pick('ingress');
      if (!base) {
        await sleep(250);
        continue;
      }
      const last = stream.ids[stream.ids.length - 1];
      const body = stream.taskId === null ? send : subscribe(stream.taskId);
      const lastId = stream.taskId === null || last === undefined ? null : String(last);
      if (opened) {
        stream.resumes += 1;
      }
      opened = true;
      const outcome = await this.readStream(base, agent, body, lastId, (id, taskId, state) => {
        stream.ids.push(id);
        stream.taskId ??= taskId;
        stream.completed ||= state !== null && TERMINAL.has(state);
      });
      if (outcome.ended === 'terminal') {
        stream.completed = true;
      } else if (outcome.ended === 'closed') {
        // A drain ends the streams of its replica cleanly; the client resumes on another one.
        this.errors.push({
          at: Date.now(),
          kind: 'stream ended before a terminal state (resumed)',
          allowed: true,
          detail: base,
        });
      } else if (outcome.error) {
        this.errors.push(outcome.error);
        if (!outcome.error.allowed) {
          stream.failure = outcome.error.kind;
          return stream;
        }
        await sleep(outcome.retryAfterMs);
      }
    }
    if (!stream.completed) {
      stream.failure = 'not terminal before the deadline';
      return stream;
    }
    const last = stream.ids[stream.ids.length - 1];
    if (stream.taskId !== null && last !== undefined) {
      await this.resubscribeAfterEnd(stream, stream.taskId, String(last));
    }
    return stream;
  }

  private async resubscribeAfterEnd(stream: FollowedStream, taskId: string, lastId: string) {
    for (let tries = 0; tries < 5; tries++) {
      const base = this.pick('ingress');
      if (!base) {
        await sleep(250);
        continue;
      }
      const outcome = await this.readStream(base, stream.agent, subscribe(taskId), lastId, () => {
        stream.afterEnd += 1;
      });
      if (!outcome.error) {
        return;
      }
      this.errors.push(outcome.error);
      if (!outcome.error.allowed) {
        return;
      }
      await sleep(outcome.retryAfterMs);
    }
  }

  /** Opens one SSE response and reads it to its end, reporting each event with a generation id. */
  private async readStream(
    base: string,
    agent: string,
    body: unknown,
    lastEventId: string | null,
    onEvent: (id: number, taskId: string | null, state: string | null) => void,
  ): Promise<{ ended: 'terminal' | 'closed' | 'cut'; error?: ClientError; retryAfterMs: number }> {
    const at = Date.now();
    let sawTerminal = false;
    try {
      const response = await fetch(`${base}/agents/${this.options.tenant}/${agent}/jsonrpc`, {
        method: 'POST',
        headers: this.headers({
          Accept: 'text/event-stream',
          'A2A-Extensions': RESUMABLE_STREAMS,
          ...(lastEventId === null ? {} : { 'Last-Event-ID': lastEventId }),
        }),
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(OPERATION_DEADLINE_MS),
      });
      if (!response.headers.get('content-type')?.startsWith('text/event-stream')) {
        const text = await response.text();
        const failure = httpFailure(response, `stream open: ${text.slice(0, 120)}`);
        if (failure.ok) {
          throw new Error('unreachable');
        }
        return { ended: 'cut', error: clientError(failure), retryAfterMs: failure.retryAfterMs };
      }
      for await (const frame of sseFrames(response)) {
        const rpc = JSON.parse(frame.data) as {
          result?: Record<string, { id?: string; taskId?: string; status?: { state?: string } }>;
          error?: { code: number; data?: { reason?: string }[] };
        };
        if (rpc.error) {
          const reason = rpc.error.data?.find((d) => d.reason)?.reason ?? 'no reason';
          const allowed = reason === 'UNAVAILABLE';
          return {
            ended: 'cut',
            error: {
              at,
              kind: `stream error frame ${reason}`,
              allowed,
              detail: frame.data.slice(0, 200),
            },
            retryAfterMs: 250,
          };
        }
        const event = rpc.result ?? {};
        const task = event['task'];
        const update = event['statusUpdate'];
        const taskId = task?.id ?? update?.taskId ?? event['artifactUpdate']?.taskId ?? null;
        const state = task?.status?.state ?? update?.status?.state ?? null;
        sawTerminal ||= state !== null && TERMINAL.has(state);
        if (frame.id !== null) {
          onEvent(Number(frame.id), taskId, state);
        }
      }
    } catch (error) {
      const failure = this.networkFailure<never>(base, at, error);
      if (failure.ok) {
        throw new Error('unreachable');
      }
      return { ended: 'cut', error: clientError(failure), retryAfterMs: failure.retryAfterMs };
    }
    return { ended: sawTerminal ? 'terminal' : 'closed', retryAfterMs: 0 };
  }

  private async adminLoop(): Promise<void> {
    while (!this.stopped) {
      await this.retry('admin GET tenant', async () => {
        const base = this.pick('admin');
        if (!base) {
          return noEndpoint();
        }
        const sentAt = Date.now();
        try {
          const response = await fetch(`${base}/admin/v1/tenants/${this.options.tenant}`, {
            headers: { Authorization: `Bearer ${this.options.adminToken}` },
            signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
          });
          const text = await response.text();
          this.adminCalls += 1;
          return response.ok
            ? { ok: true as const, value: text }
            : httpFailure(response, `admin ${text.slice(0, 120)}`);
        } catch (error) {
          return this.networkFailure(base, sentAt, error);
        }
      });
      await sleep(500);
    }
  }
}

function subscribe(taskId: string): unknown {
  return { jsonrpc: '2.0', id: 1, method: 'SubscribeToTask', params: { id: taskId } };
}

function noEndpoint<T>(): Attempt<T> {
  return { ok: false, kind: 'no ready endpoint', allowed: true, retryAfterMs: 250, detail: '' };
}

/** Only a 503 that says when to come back may be retried (spec: system errors 503 with Retry-After). */
function httpFailure<T>(response: Response, what: string): Attempt<T> {
  const retryAfter = Number(response.headers.get('retry-after'));
  const allowed = response.status === 503 && Number.isFinite(retryAfter) && retryAfter > 0;
  return {
    ok: false,
    kind: allowed
      ? 'HTTP 503 with Retry-After'
      : `HTTP ${response.status} ${what.split(':')[0] ?? ''}`,
    allowed,
    retryAfterMs: allowed ? Math.min(retryAfter * 1_000, 2_000) : 0,
    detail: `HTTP ${response.status} ${what}`,
  };
}

function clientError(failure: { kind: string; allowed: boolean; detail: string }): ClientError {
  return { at: Date.now(), kind: failure.kind, allowed: failure.allowed, detail: failure.detail };
}

interface SseFrame {
  id: string | null;
  data: string;
}

/** The events of an SSE body (`id:` and `data:` fields; comments and other fields ignored). */
async function* sseFrames(response: Response): AsyncGenerator<SseFrame> {
  if (!response.body) {
    return;
  }
  const decoder = new TextDecoder();
  let buffer = '';
  let id: string | null = null;
  let data: string[] = [];
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) {
      return;
    }
    buffer += decoder.decode(value, { stream: true });
    let newline = buffer.search(/\r\n|\n|\r/);
    while (newline >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + (buffer.startsWith('\r\n', newline) ? 2 : 1));
      if (line === '') {
        if (data.length > 0) {
          yield { id, data: data.join('\n') };
        }
        id = null;
        data = [];
      } else if (line.startsWith('id:')) {
        id = line.slice(3).trim();
      } else if (line.startsWith('data:')) {
        data.push(line.slice(5).replace(/^ /, ''));
      }
      newline = buffer.search(/\r\n|\n|\r/);
    }
  }
}

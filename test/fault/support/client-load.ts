import { credentials, status as GrpcCode, Metadata, type ServiceError } from '@grpc/grpc-js';
import { a2aPb, decodeGrpcStatus, GRPC_STATUS_DETAILS_KEY } from '@lib/a2a-protocol';
import { randomUUID } from 'node:crypto';

/** How each client request is sent; the load turns through all three. */
export type LoadBinding = 'JSONRPC' | 'HTTP+JSON' | 'GRPC';
const BINDINGS: readonly LoadBinding[] = ['JSONRPC', 'HTTP+JSON', 'GRPC'];

export interface LoadOptions {
  baseUrl: string;
  grpcTarget: string;
  tenant: string;
  agent: string;
  apiKey: string;
  /** New messages per second. */
  ratePerSecond: number;
  /** The text of each message (the countdown agent counts down from it). */
  text: string;
  /** Message metadata (the countdown agent's `stepMs`). */
  metadata: Record<string, unknown>;
  /** A client's deadline for one attempt; an attempt that takes longer counts as a hang. */
  attemptTimeoutMs: number;
}

/** One message a client sent, retried with the same messageId until the platform acknowledged it. */
export interface SentMessage {
  messageId: string;
  binding: LoadBinding;
  /** Blocking SendMessage, or `returnImmediately`. */
  blocking: boolean;
  firstSentAt: number;
  attempts: number;
  /** The task the platform acknowledged (null: not acknowledged yet). */
  taskId: string | null;
  /** The task's state in the acknowledging answer. */
  ackState: string | null;
  ackedAt: number | null;
}

/** An attempt that failed, and how. */
export interface FailedAttempt {
  at: number;
  binding: LoadBinding;
  /** What the client saw, e.g. `HTTP 503 UNAVAILABLE`, `gRPC UNAVAILABLE`, `connection refused`. */
  kind: string;
  /** Whether a client may retry it: the platform said so (UNAVAILABLE with Retry-After on HTTP). */
  retryable: boolean;
  latencyMs: number;
  detail: string;
}

type Outcome =
  | { ok: true; taskId: string; state: string }
  | { ok: false; kind: string; retryable: boolean; detail: string; retryAfterMs: number };

/**
 * Clients sending SendMessage at a steady rate over the three bindings, as well-behaved clients do: a
 * retryable answer (UNAVAILABLE, or the platform not answering at all) is retried with the same messageId
 * after `Retry-After` (or a short backoff), so every message ends acknowledged exactly once. Everything the
 * clients saw is recorded for the checks and the report.
 */
export class ClientLoad {
  readonly messages: SentMessage[] = [];
  readonly failures: FailedAttempt[] = [];
  /** Attempts answered successfully, per binding. */
  readonly successes: Record<LoadBinding, number> = { JSONRPC: 0, 'HTTP+JSON': 0, GRPC: 0 };
  private readonly grpc: a2aPb.A2AServiceClient;
  private readonly inFlight = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(private readonly options: LoadOptions) {
    this.grpc = new a2aPb.A2AServiceClient(options.grpcTarget, credentials.createInsecure(), {
      'grpc.initial_reconnect_backoff_ms': 100,
      'grpc.max_reconnect_backoff_ms': 1_000,
    });
  }

  start(): void {
    const everyMs = 1_000 / this.options.ratePerSecond;
    this.timer = setInterval(() => this.sendOne(), everyMs);
  }

  /** Stops sending new messages and waits (up to `timeoutMs`) until every sent one is acknowledged. */
  async stop(timeoutMs: number): Promise<void> {
    this.stopped = true;
    if (this.timer) {
      clearInterval(this.timer);
    }
    const deadline = Date.now() + timeoutMs;
    while (this.inFlight.size > 0 && Date.now() < deadline) {
      await Promise.race([...this.inFlight, sleep(Math.max(1, deadline - Date.now()))]);
    }
    this.grpc.close();
  }

  /** The first successful answer at or after `at` (epoch ms), or null. */
  firstSuccessAfter(at: number): number | null {
    const times = this.messages
      .map((m) => m.ackedAt)
      .filter((t): t is number => t !== null && t >= at);
    return times.length > 0 ? Math.min(...times) : null;
  }

  /** Failed attempts by kind, e.g. `{ 'HTTP 503 UNAVAILABLE': 12, 'gRPC UNAVAILABLE': 5 }`. */
  failuresByKind(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const failure of this.failures) {
      counts[failure.kind] = (counts[failure.kind] ?? 0) + 1;
    }
    return counts;
  }

  private sendOne(): void {
    if (this.stopped) {
      return;
    }
    const index = this.messages.length;
    const binding = BINDINGS[index % BINDINGS.length] ?? 'JSONRPC';
    const message: SentMessage = {
      messageId: randomUUID(),
      binding,
      // Every binding sends both kinds: blocking and returnImmediately alternate per round of three.
      blocking: Math.floor(index / BINDINGS.length) % 2 === 0,
      firstSentAt: Date.now(),
      attempts: 0,
      taskId: null,
      ackState: null,
      ackedAt: null,
    };
    this.messages.push(message);
    const run = this.deliver(message).finally(() => this.inFlight.delete(run));
    this.inFlight.add(run);
  }

  private async deliver(message: SentMessage): Promise<void> {
    for (;;) {
      message.attempts += 1;
      const started = Date.now();
      const outcome = await this.attempt(message);
      if (outcome.ok) {
        this.successes[message.binding] += 1;
        message.taskId = outcome.taskId;
        message.ackState = outcome.state;
        message.ackedAt = Date.now();
        return;
      }
      this.failures.push({
        at: started,
        binding: message.binding,
        kind: outcome.kind,
        retryable: outcome.retryable,
        latencyMs: Date.now() - started,
        detail: outcome.detail.slice(0, 300),
      });
      if (!outcome.retryable) {
        return;
      }
      await sleep(outcome.retryAfterMs);
    }
  }

  private attempt(message: SentMessage): Promise<Outcome> {
    switch (message.binding) {
      case 'JSONRPC':
        return this.viaJsonRpc(message);
      case 'HTTP+JSON':
        return this.viaRest(message);
      case 'GRPC':
        return this.viaGrpc(message);
    }
  }

  private request(message: SentMessage): Record<string, unknown> {
    return {
      message: {
        role: 'ROLE_USER',
        messageId: message.messageId,
        parts: [{ text: this.options.text }],
        metadata: this.options.metadata,
      },
      configuration: { returnImmediately: !message.blocking },
    };
  }

  private async viaJsonRpc(message: SentMessage): Promise<Outcome> {
    const { baseUrl, tenant, agent } = this.options;
    const reply = await this.post(`${baseUrl}/agents/${tenant}/${agent}/jsonrpc`, {
      jsonrpc: '2.0',
      id: message.attempts,
      method: 'SendMessage',
      params: this.request(message),
    });
    if (!('status' in reply)) {
      return reply;
    }
    const body = reply.body as {
      result?: { task?: { id: string; status: { state: string } } };
      error?: { code: number; data?: { reason?: string }[] };
    };
    const task = body.result?.task;
    if (reply.status === 200 && task) {
      return { ok: true, taskId: task.id, state: task.status.state };
    }
    const reason = body.error?.data?.find((d) => d.reason)?.reason ?? 'none';
    return httpFailure(reply, `JSON-RPC ${body.error?.code ?? '?'} ${reason}`, reason);
  }

  private async viaRest(message: SentMessage): Promise<Outcome> {
    const { baseUrl, tenant, agent } = this.options;
    const reply = await this.post(
      `${baseUrl}/agents/${tenant}/${agent}/rest/message:send`,
      this.request(message),
    );
    if (!('status' in reply)) {
      return reply;
    }
    const body = reply.body as {
      task?: { id: string; status: { state: string } };
      error?: { status?: string; details?: { reason?: string }[] };
    };
    if (reply.status === 200 && body.task) {
      return { ok: true, taskId: body.task.id, state: body.task.status.state };
    }
    const reason = body.error?.details?.find((d) => d.reason)?.reason ?? 'none';
    return httpFailure(reply, `REST ${body.error?.status ?? '?'}`, reason);
  }

  private async post(
    url: string,
    body: unknown,
  ): Promise<{ status: number; headers: Headers; body: unknown } | Outcome> {
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'X-API-Key': this.options.apiKey,
          'A2A-Version': '1.0',
        },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.options.attemptTimeoutMs),
      });
      const text = await response.text();
      let parsed: unknown = null;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = { unparsable: text.slice(0, 200) };
      }
      return { status: response.status, headers: response.headers, body: parsed };
    } catch (error) {
      return networkFailure(error);
    }
  }

  private viaGrpc(message: SentMessage): Promise<Outcome> {
    const request = a2aPb.SendMessageRequest.fromJSON({
      tenant: `${this.options.tenant}/${this.options.agent}`,
      ...this.request(message),
    });
    const md = new Metadata();
    md.set('x-api-key', this.options.apiKey);
    md.set('a2a-version', '1.0');
    return new Promise((resolve) => {
      this.grpc.sendMessage(
        request,
        md,
        { deadline: Date.now() + this.options.attemptTimeoutMs },
        (error: ServiceError | null, response?: a2aPb.SendMessageResponse) => {
          if (!error && response?.task) {
            resolve({
              ok: true,
              taskId: response.task.id,
              state: a2aPb.taskStateToJSON(
                response.task.status?.state ?? a2aPb.TaskState.TASK_STATE_UNSPECIFIED,
              ),
            });
            return;
          }
          resolve(grpcFailure(error));
        },
      );
    });
  }
}

/**
 * An HTTP error answer: retryable only when the platform said UNAVAILABLE in a 503 that tells when to retry
 * (spec digest §8.3: system errors 503 with Retry-After).
 */
function httpFailure(
  reply: { status: number; headers: Headers },
  what: string,
  reason: string,
): Outcome {
  const retryAfter = Number(reply.headers.get('retry-after'));
  const retryable =
    reply.status === 503 &&
    reason === 'UNAVAILABLE' &&
    Number.isFinite(retryAfter) &&
    retryAfter > 0;
  return {
    ok: false,
    kind: `HTTP ${reply.status} ${what}${reply.status === 503 && !retryable ? ' (no Retry-After)' : ''}`,
    retryable,
    detail: `${what} ${reason}`,
    retryAfterMs: retryable ? Math.min(retryAfter * 1_000, 2_000) : 0,
  };
}

/** A gRPC error: UNAVAILABLE is retryable; with ErrorInfo it came from the platform, without from the network. */
function grpcFailure(error: ServiceError | null): Outcome {
  if (!error) {
    return {
      ok: false,
      kind: 'gRPC OK without a task',
      retryable: false,
      detail: '',
      retryAfterMs: 0,
    };
  }
  const details = error.metadata?.get(GRPC_STATUS_DETAILS_KEY)[0];
  const reason = Buffer.isBuffer(details) ? decodeGrpcStatus(details).errorInfo?.reason : undefined;
  const name = GrpcCode[error.code] ?? String(error.code);
  if (error.code === GrpcCode.DEADLINE_EXCEEDED) {
    return {
      ok: false,
      kind: 'gRPC hang (deadline exceeded)',
      retryable: false,
      detail: error.details,
      retryAfterMs: 0,
    };
  }
  return {
    ok: false,
    kind: reason ? `gRPC ${name} ${reason}` : `gRPC ${name} (transport)`,
    retryable: error.code === GrpcCode.UNAVAILABLE,
    detail: error.details,
    retryAfterMs: 500,
  };
}

/**
 * The platform did not answer at all: no listener (connection refused), or the connection broke. Retryable
 * for a client (the platform is not there to say otherwise); a hang past the attempt's deadline is not.
 */
function networkFailure(error: unknown): Outcome {
  const cause = (error as { cause?: { code?: string } }).cause;
  const name = (error as { name?: string }).name;
  if (name === 'TimeoutError' || name === 'AbortError') {
    return {
      ok: false,
      kind: 'HTTP hang (client deadline)',
      retryable: false,
      detail: String(error),
      retryAfterMs: 0,
    };
  }
  const code = cause?.code ?? 'unknown';
  return {
    ok: false,
    kind: `no answer (${code})`,
    retryable: true,
    detail: String(error),
    retryAfterMs: 500,
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

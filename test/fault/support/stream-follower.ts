import type { StreamResponse } from '@lib/a2a-protocol';
import { randomUUID } from 'node:crypto';
import { openSse, rpcOf, type SseConnection } from '../../e2e/support/sse';

const RESUMABLE_STREAMS = 'https://a2a-platform.dev/extensions/resumable-streams/v1';
const TERMINAL = new Set([
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_REJECTED',
]);

export interface FollowOptions {
  /** The agent's JSON-RPC endpoint. */
  endpoint: string;
  apiKey: string;
  text: string;
  metadata: Record<string, unknown>;
  /** Give up following after this long. */
  timeoutMs: number;
}

/** What one client saw of one task over a stream that it resumed whenever it was cut. */
export interface FollowedStream {
  taskId: string | null;
  /** Every generation id received, in arrival order (across resumptions). */
  ids: number[];
  /** How each interruption looked: an error frame's reason, or how the connection broke. */
  interruptions: string[];
  /** Attempts to (re)open the stream that the platform answered with a retryable error. */
  refusedOpens: string[];
  /** The last state the stream showed. */
  lastState: string | null;
  /** Ended with a terminal state (and the server closed the stream). */
  completed: boolean;
  /** Why following stopped early, if it did. */
  failure: string | null;
}

/**
 * A streaming client with the platform's resumable-streams extension: SendStreamingMessage, then, each time
 * the stream is cut (an error frame, a dropped connection), SubscribeToTask with `Last-Event-ID` set to the
 * last generation it saw, retrying refused opens after `Retry-After`, until the task is terminal.
 */
export async function followStream(options: FollowOptions): Promise<FollowedStream> {
  const result: FollowedStream = {
    taskId: null,
    ids: [],
    interruptions: [],
    refusedOpens: [],
    lastState: null,
    completed: false,
    failure: null,
  };
  const deadline = Date.now() + options.timeoutMs;
  const messageId = randomUUID();
  while (!result.completed && Date.now() < deadline) {
    const last = result.ids[result.ids.length - 1];
    const body =
      result.taskId === null
        ? {
            jsonrpc: '2.0',
            id: 1,
            method: 'SendStreamingMessage',
            params: {
              message: {
                role: 'ROLE_USER',
                messageId,
                parts: [{ text: options.text }],
                metadata: options.metadata,
              },
            },
          }
        : { jsonrpc: '2.0', id: 1, method: 'SubscribeToTask', params: { id: result.taskId } };
    let connection: SseConnection;
    try {
      connection = await openSse(options.endpoint, body, {
        apiKey: options.apiKey,
        headers: {
          'A2A-Extensions': RESUMABLE_STREAMS,
          ...(last === undefined ? {} : { 'Last-Event-ID': String(last) }),
        },
      });
    } catch (error) {
      result.refusedOpens.push(`no answer: ${String((error as Error).cause ?? error)}`);
      await sleep(500);
      continue;
    }
    if (!connection.isEventStream) {
      const retryAfter = Number(connection.headers.get('retry-after'));
      const text = await connection.text().catch(() => '');
      if (connection.status !== 503 || !(retryAfter > 0)) {
        result.failure = `open answered ${connection.status}: ${text.slice(0, 300)}`;
        return result;
      }
      result.refusedOpens.push(`HTTP 503 (Retry-After ${retryAfter})`);
      await sleep(Math.min(retryAfter * 1_000, 2_000));
      continue;
    }
    const cut = await readUntilCut(connection, result, deadline);
    if (cut) {
      result.interruptions.push(cut);
    }
  }
  if (!result.completed && !result.failure) {
    result.failure = `not terminal after ${options.timeoutMs} ms (last state ${result.lastState})`;
  }
  return result;
}

/** Reads frames into `result`; returns why the stream was cut, or null when it ended normally. */
async function readUntilCut(
  connection: SseConnection,
  result: FollowedStream,
  deadline: number,
): Promise<string | null> {
  for (;;) {
    let frame;
    try {
      frame = await connection.next(Math.max(1, deadline - Date.now()));
    } catch (error) {
      connection.abort();
      return `connection broke: ${String(error).slice(0, 200)}`;
    }
    if (frame === null) {
      return result.completed ? null : 'closed before a terminal state';
    }
    const rpc = rpcOf(frame);
    if (rpc.error) {
      const reason = (rpc.error.data as { reason?: string }[] | undefined)?.find(
        (d) => d.reason,
      )?.reason;
      return `error frame ${rpc.error.code} ${reason ?? ''}`.trim();
    }
    if (frame.id !== null) {
      result.ids.push(Number(frame.id));
    }
    const state = stateOf(rpc.result, result);
    if (state) {
      result.lastState = state;
      if (TERMINAL.has(state)) {
        result.completed = true;
      }
    }
  }
}

function stateOf(response: StreamResponse | undefined, result: FollowedStream): string | null {
  if (!response) {
    return null;
  }
  if ('task' in response) {
    result.taskId = response.task.id;
    return response.task.status.state;
  }
  if ('statusUpdate' in response) {
    return response.statusUpdate.status.state;
  }
  return null;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

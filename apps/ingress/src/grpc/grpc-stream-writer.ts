import type { ServerWritableStream } from '@grpc/grpc-js';
import { A2aError } from '@lib/a2a-protocol';
import { streamError } from '../http/service-parameters';
import type { StreamItem, TaskSubscription } from '../streaming/task-event-feed';

/** A server-streaming call of the gRPC binding: any request, generated `StreamResponse` messages out. */
export type GrpcStreamCall = ServerWritableStream<unknown, unknown>;

/**
 * Writes a task's events as `StreamResponse` messages (spec digest §8b, §10.6): the first item, then the
 * subscription's items in generation order. Resolves when the stream ended normally (terminal or interrupted
 * state, or the client left); throws the error the call must end with when the stream was cut off.
 * Backpressure: no message is written while the call's buffer is full; meanwhile the subscription buffers up to
 * its bound and cuts the client off rather than growing memory.
 */
export async function writeGrpcStream(
  call: GrpcStreamCall,
  first: StreamItem | null,
  subscription: TaskSubscription | null,
  encode: (item: StreamItem) => unknown,
): Promise<void> {
  if (first) {
    await write(call, encode(first));
  }
  while (subscription && !gone(call)) {
    const items = await subscription.take();
    if (items.length === 0) {
      break;
    }
    for (const item of items) {
      await write(call, encode(item));
    }
  }
  const ended = subscription?.ended;
  if (gone(call)) {
    return;
  }
  if (ended === 'overflow' || ended === 'error') {
    throw streamError(ended);
  }
  if (ended === 'shutdown') {
    throw new A2aError(
      'UNAVAILABLE',
      'the server is shutting down; resume with SubscribeToTask on another connection',
    );
  }
}

/** The client cancelled or the connection dropped. */
function gone(call: GrpcStreamCall): boolean {
  return call.cancelled || call.destroyed;
}

/** Writes one message; when the call's buffer is full, waits until it drains or the call goes away. */
async function write(call: GrpcStreamCall, message: unknown): Promise<void> {
  if (gone(call) || call.write(message)) {
    return;
  }
  await new Promise<void>((resolve) => {
    const done = (): void => {
      call.off('drain', done);
      call.off('close', done);
      resolve();
    };
    call.on('drain', done);
    call.on('close', done);
  });
}

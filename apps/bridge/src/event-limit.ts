/** grpc-js refuses a message over its own receive limit (4 MiB) with this, whatever ours is. */
const GRPC_TOO_LARGE = /Received message larger than max/;
const LF = 0x0a;
const CR = 0x0d;

/** An upstream event (or answer) over UPSTREAM_EVENT_LIMIT_BYTES: the task fails with this message. */
export class EventTooLarge extends Error {
  override readonly name = 'EventTooLarge';

  constructor(readonly limitBytes: number) {
    super(`an event of more than ${limitBytes} bytes (UPSTREAM_EVENT_LIMIT_BYTES)`);
  }
}

/**
 * The response with its body cut at `limitBytes`: an event stream event by event (the bytes of its lines
 * since the last blank line), any other body whole. The read fails with {@link EventTooLarge} as soon as the
 * limit is passed, so a larger event is never held in memory, and the connection is dropped.
 */
export function limitedResponse(response: Response, limitBytes: number): Response {
  if (!response.body) {
    return response;
  }
  const stream = response.headers.get('content-type')?.startsWith('text/event-stream') === true;
  return new Response(response.body.pipeThrough(eventLimit(stream, limitBytes)), {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

/** Passes the bytes on while each event (`stream`) or the whole body stays within `limitBytes`. */
export function eventLimit(
  stream: boolean,
  limitBytes: number,
): TransformStream<Uint8Array, Uint8Array> {
  let size = 0;
  let lineLength = 0;
  let afterCr = false;
  /** Counts the bytes of the current event's lines; whether it went over the limit. */
  const overInEvents = (chunk: Uint8Array): boolean => {
    for (const byte of chunk) {
      if (byte === LF && afterCr) {
        afterCr = false; // the LF of a CRLF: the line has ended already
        continue;
      }
      afterCr = byte === CR;
      if (byte === LF || byte === CR) {
        if (lineLength === 0) {
          size = 0; // a blank line: the event ends
        }
        lineLength = 0;
      } else {
        lineLength += 1;
        size += 1;
        if (size > limitBytes) {
          return true;
        }
      }
    }
    return false;
  };
  return new TransformStream({
    transform(chunk, controller) {
      const over = stream ? overInEvents(chunk) : (size += chunk.length) > limitBytes;
      if (over) {
        throw new EventTooLarge(limitBytes);
      }
      controller.enqueue(chunk);
    },
  });
}

/**
 * Refuses an event whose JSON form is larger than `limitBytes`: the check of a gRPC upstream's events, which
 * grpc-js reads whole up to its own 4 MiB (an HTTP body is cut as it is read, {@link limitedResponse}).
 */
export function checkEventSize(event: unknown, limitBytes: number): void {
  if (Buffer.byteLength(JSON.stringify(event), 'utf8') > limitBytes) {
    throw new EventTooLarge(limitBytes);
  }
}

/** The event limit an upstream call failed on, if it did (the SDK may wrap it, or be told it by grpc-js). */
export function tooLarge(error: unknown, limitBytes: number): EventTooLarge | undefined {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 5; depth += 1) {
    if (cause instanceof EventTooLarge) {
      return cause;
    }
    if (GRPC_TOO_LARGE.test(cause.message)) {
      return new EventTooLarge(limitBytes);
    }
    cause = cause.cause;
  }
  return undefined;
}

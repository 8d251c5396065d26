import { describe, expect, it } from 'vitest';
import {
  checkEventSize,
  eventLimit,
  EventTooLarge,
  limitedResponse,
  tooLarge,
} from './event-limit';

/** What a stream of `chunks` through the limit gives: its text, or the error it failed with. */
async function through(stream: boolean, limit: number, chunks: string[]): Promise<string | Error> {
  const source = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) {
        controller.enqueue(new TextEncoder().encode(chunk));
      }
      controller.close();
    },
  });
  try {
    return await new Response(source.pipeThrough(eventLimit(stream, limit))).text();
  } catch (error) {
    return error as Error;
  }
}

describe('eventLimit', () => {
  it('counts an event stream event by event, whatever the line ends and chunks', async () => {
    const events = ['data: 12345\n\n', 'data: 123\r\n', 'data: 4\r\n\r\n', 'data: 1234\r\r'];
    expect(await through(true, 16, events)).toBe(events.join(''));
    // One event cut in three chunks, its lines counted together.
    expect(await through(true, 16, ['data: 12', '3\nda', 'ta: 45\n\n'])).toBeInstanceOf(
      EventTooLarge,
    );
  });

  it('fails on an event over the limit even when its chunk ends other events', async () => {
    expect(await through(true, 8, ['data: 123456789\n\ndata: 1\n\n'])).toBeInstanceOf(
      EventTooLarge,
    );
  });

  it('counts any other body whole', async () => {
    expect(await through(false, 10, ['12345', '67890'])).toBe('1234567890');
    expect(await through(false, 10, ['12345', '\n\n', '67890'])).toBeInstanceOf(EventTooLarge);
  });
});

describe('limitedResponse', () => {
  it('keeps the status and headers, and cuts an event stream per event', async () => {
    const response = limitedResponse(
      new Response('data: 1234567890\n\n', {
        status: 200,
        headers: { 'Content-Type': 'text/event-stream' },
      }),
      10,
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    await expect(response.text()).rejects.toThrow(
      'an event of more than 10 bytes (UPSTREAM_EVENT_LIMIT_BYTES)',
    );
    const body = limitedResponse(new Response('{"a":1}'), 10);
    expect(await body.json()).toEqual({ a: 1 });
  });
});

describe('checkEventSize and tooLarge', () => {
  it('measures an event in its JSON form', () => {
    expect(() => checkEventSize({ text: 'é'.repeat(4) }, 19)).not.toThrow();
    expect(() => checkEventSize({ text: 'é'.repeat(5) }, 20)).toThrow(EventTooLarge);
  });

  it('finds the limit in what the SDK wraps, and in grpc-js’s own refusal', () => {
    const cause = new EventTooLarge(10);
    expect(tooLarge(new Error('HTTP error', { cause }), 10)).toBe(cause);
    expect(
      tooLarge(new Error('gRPC error for sendMessage: 8 Received message larger than max'), 99)
        ?.message,
    ).toBe('an event of more than 99 bytes (UPSTREAM_EVENT_LIMIT_BYTES)');
    expect(tooLarge(new Error('fetch failed'), 10)).toBeUndefined();
  });
});

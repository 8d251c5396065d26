/** One server-sent event, as the text/event-stream format defines it. */
export interface SseEvent {
  id?: string;
  event: string;
  data: string;
}

/**
 * Reads a text/event-stream body (from `fetch`, which unlike EventSource can send an Authorization header and
 * a POST body) and yields its events. Comments and `retry:` lines are skipped; the stream ends with the body.
 */
export async function* readEventStream(
  body: ReadableStream<Uint8Array>,
  signal?: AbortSignal,
): AsyncGenerator<SseEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const abort = (): void => void reader.cancel().catch(() => undefined);
  signal?.addEventListener('abort', abort, { once: true });
  let buffer = '';
  let event: { id?: string; event: string; data: string[] } = { event: 'message', data: [] };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) {
        return;
      }
      buffer += decoder.decode(value, { stream: true });
      const lines = buffer.split(/\r\n|\r|\n/);
      buffer = lines.pop() ?? '';
      for (const line of lines) {
        if (line === '') {
          if (event.data.length > 0) {
            yield { id: event.id, event: event.event, data: event.data.join('\n') };
          }
          event = { event: 'message', data: [] };
          continue;
        }
        if (line.startsWith(':')) {
          continue;
        }
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'data') {
          event.data.push(value);
        } else if (field === 'event') {
          event.event = value;
        } else if (field === 'id') {
          event.id = value;
        }
      }
    }
  } finally {
    signal?.removeEventListener('abort', abort);
    reader.releaseLock();
  }
}

/**
 * The HTTP exchange both HTTP-based bindings use (JSON-RPC, spec digest §7; HTTP+JSON, §8): one request with
 * `fetch`, read whole (streams: `openEventStream` in sse.ts). It adds no header of its own; json-rpc.ts and
 * rest.ts add the binding's, and a fuzzer can send exactly what it wants.
 */

export interface HttpRequest {
  method: string;
  url: string;
  headers?: Record<string, string>;
  /** Sent as is: a string, or bytes (which `fetch` sends without a Content-Type of its own). */
  body?: string | Uint8Array;
  /** Sends the body as a stream (chunked transfer encoding, no Content-Length). */
  chunked?: boolean;
}

export interface HttpReply {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed body, or undefined when it was not JSON. */
  json: unknown;
}

/** The `fetch` options of a request. */
export function requestInit(request: HttpRequest): RequestInit {
  const { method, headers, body, chunked } = request;
  if (body === undefined) {
    return { method, headers };
  }
  if (!chunked) {
    return { method, headers, body };
  }
  const bytes = typeof body === 'string' ? new TextEncoder().encode(body) : body;
  return {
    method,
    headers,
    body: new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes);
        controller.close();
      },
    }),
    duplex: 'half',
  } as RequestInit;
}

/** Reads a response whole. */
export async function readReply(response: Response): Promise<HttpReply> {
  const text = await response.text();
  let json: unknown;
  try {
    json = text === '' ? undefined : (JSON.parse(text) as unknown);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

/** One request, its response read whole; `timeoutMs` bounds both (no bound when absent). */
export async function exchange(request: HttpRequest, timeoutMs?: number): Promise<HttpReply> {
  const response = await fetch(request.url, {
    ...requestInit(request),
    ...(timeoutMs === undefined ? {} : { signal: AbortSignal.timeout(timeoutMs) }),
  });
  return readReply(response);
}

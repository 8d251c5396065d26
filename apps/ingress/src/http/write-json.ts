import type { ServerResponse } from 'node:http';

/**
 * Ends a response with a JSON document and the given headers (`Content-Type` JSON unless they name one).
 * Written straight to Node's response: an answer to a POST is never revalidated, so Express's ETag (a hash of
 * every body) would only cost time.
 */
export function writeJson(
  res: ServerResponse,
  status: number,
  headers: Record<string, string>,
  body: unknown,
): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  for (const [name, value] of Object.entries(headers)) {
    res.setHeader(name, value);
  }
  res.end(JSON.stringify(body));
}

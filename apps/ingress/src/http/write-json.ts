import type { Response } from 'express';

/**
 * Ends a response with a JSON document and the given headers. Written straight to Node's response: an answer
 * to a POST is never revalidated, so Express's ETag (a hash of every body) would only cost time.
 */
export function writeJson(
  res: Response,
  status: number,
  headers: Record<string, string>,
  body: unknown,
): void {
  res.statusCode = status;
  for (const [name, value] of Object.entries(headers)) {
    res.setHeader(name, value);
  }
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.end(JSON.stringify(body));
}

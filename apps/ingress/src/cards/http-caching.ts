import type { Request, Response } from 'express';
import { createHash } from 'node:crypto';

/** A response body with its validators (RFC 9110 §8.8). */
export interface CacheableDocument {
  body: Buffer;
  /** Strong entity tag (quoted) derived from the exact body bytes. */
  etag: string;
  /** Whole seconds, as HTTP dates carry no fraction. */
  lastModified: Date;
}

/** `value` as the JSON bytes served, with a strong ETag over them. */
export function cacheableDocument(value: unknown, lastModified: Date): CacheableDocument {
  const body = Buffer.from(JSON.stringify(value), 'utf8');
  return {
    body,
    etag: `"${createHash('sha256').update(body).digest('base64url')}"`,
    lastModified: new Date(Math.floor(lastModified.getTime() / 1000) * 1000),
  };
}

/** The request's preconditions that a GET of a cacheable document evaluates. */
export interface Preconditions {
  ifNoneMatch: string | undefined;
  ifModifiedSince: string | undefined;
}

/**
 * Whether a GET/HEAD is answered with 304 Not Modified (RFC 9110 §13.2.2 steps 3–4). If-None-Match wins when
 * present: `*` or any listed tag equal to ours under the weak comparison (§8.8.3.2: `W/` is ignored).
 * Otherwise If-Modified-Since: not modified when our Last-Modified is not after the given date; a value that
 * is not a valid HTTP-date, or a date in the future, is ignored (§13.1.3).
 */
export function isNotModified(
  preconditions: Preconditions,
  document: Pick<CacheableDocument, 'etag' | 'lastModified'>,
  now: Date,
): boolean {
  const { ifNoneMatch, ifModifiedSince } = preconditions;
  if (ifNoneMatch !== undefined) {
    if (ifNoneMatch.trim() === '*') {
      return true;
    }
    const ours = opaqueTag(document.etag);
    return entityTags(ifNoneMatch).some((tag) => opaqueTag(tag) === ours);
  }
  if (ifModifiedSince === undefined) {
    return false;
  }
  const since = Date.parse(ifModifiedSince);
  if (Number.isNaN(since) || since > now.getTime()) {
    return false;
  }
  return document.lastModified.getTime() <= since;
}

/** The entity tags of an If-None-Match list; a comma may appear inside a tag (§8.8.3 `etagc`). */
function entityTags(header: string): string[] {
  return header.match(/(?:W\/)?"[^"]*"/g) ?? [];
}

function opaqueTag(tag: string): string {
  return tag.startsWith('W/') ? tag.slice(2) : tag;
}

/**
 * Writes `document` with `Cache-Control: public, max-age`, ETag and Last-Modified, or a bodiless 304 with the
 * same caching headers when the request's preconditions say the client's copy is current.
 */
export function sendCacheable(
  req: Request,
  res: Response,
  document: CacheableDocument,
  options: { contentType: string; maxAgeSeconds: number; now: Date },
): void {
  res.setHeader('Cache-Control', `public, max-age=${options.maxAgeSeconds}`);
  res.setHeader('ETag', document.etag);
  res.setHeader('Last-Modified', document.lastModified.toUTCString());
  const preconditions = {
    ifNoneMatch: req.get('if-none-match'),
    ifModifiedSince: req.get('if-modified-since'),
  };
  if (isNotModified(preconditions, document, options.now)) {
    res.status(304).end();
    return;
  }
  res.setHeader('Content-Type', options.contentType);
  res.setHeader('Content-Length', document.body.length);
  // `end`, not `send`: Express would add its own weak ETag and freshness check.
  res.status(200).end(document.body);
}

import { describe, expect, it } from 'vitest';
import { cacheableDocument, isNotModified } from './http-caching';

const doc = cacheableDocument({ hello: 'world' }, new Date('2026-03-01T10:00:00.750Z'));
const now = new Date('2026-03-02T00:00:00Z');
const ifNoneMatch = (value: string) => ({ ifNoneMatch: value, ifModifiedSince: undefined });
const ifModifiedSince = (value: string) => ({ ifNoneMatch: undefined, ifModifiedSince: value });

describe('cacheableDocument', () => {
  it('serves the JSON bytes with a strong ETag over them and Last-Modified in whole seconds', () => {
    expect(doc.body.toString('utf8')).toBe('{"hello":"world"}');
    expect(doc.etag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
    expect(cacheableDocument({ hello: 'world' }, new Date()).etag).toBe(doc.etag);
    expect(cacheableDocument({ hello: 'World' }, new Date()).etag).not.toBe(doc.etag);
    expect(doc.lastModified.toISOString()).toBe('2026-03-01T10:00:00.000Z');
  });
});

describe('isNotModified (RFC 9110 §13.1.2, §13.1.3, §13.2.2)', () => {
  it('If-None-Match: our tag, a list holding it, a weak form of it or * → not modified', () => {
    for (const header of [doc.etag, `"other", ${doc.etag}`, `W/"a,b", W/${doc.etag}`, '*', ' * ']) {
      expect(isNotModified(ifNoneMatch(header), doc, now), header).toBe(true);
    }
  });

  it('If-None-Match: other tags, an unquoted tag or garbage → modified', () => {
    for (const header of ['"other"', doc.etag.slice(1, -1), '', 'W/', `"x", "y"`]) {
      expect(isNotModified(ifNoneMatch(header), doc, now), header).toBe(false);
    }
  });

  it('If-Modified-Since: not modified at or after Last-Modified, modified before it', () => {
    expect(isNotModified(ifModifiedSince('Sun, 01 Mar 2026 10:00:00 GMT'), doc, now)).toBe(true);
    expect(isNotModified(ifModifiedSince('Sun, 01 Mar 2026 11:00:00 GMT'), doc, now)).toBe(true);
    expect(isNotModified(ifModifiedSince('Sun, 01 Mar 2026 09:59:59 GMT'), doc, now)).toBe(false);
  });

  it('If-Modified-Since is ignored when it is not a date or lies in the future', () => {
    expect(isNotModified(ifModifiedSince('yesterday'), doc, now)).toBe(false);
    expect(isNotModified(ifModifiedSince('Fri, 01 Jan 2027 00:00:00 GMT'), doc, now)).toBe(false);
  });

  it('If-Modified-Since is ignored when If-None-Match is present', () => {
    const both = { ifNoneMatch: '"other"', ifModifiedSince: 'Sun, 01 Mar 2026 11:00:00 GMT' };
    expect(isNotModified(both, doc, now)).toBe(false);
  });

  it('without preconditions the document is sent', () => {
    expect(isNotModified({ ifNoneMatch: undefined, ifModifiedSince: undefined }, doc, now)).toBe(
      false,
    );
  });
});

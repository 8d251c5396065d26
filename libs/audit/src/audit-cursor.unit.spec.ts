import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor } from './audit-cursor';
import { InvalidAuditQuery } from './audit.errors';

describe('audit cursor', () => {
  it.each([1, 42, 1_000_000, Number.MAX_SAFE_INTEGER])('round-trips seq %d', (seq) => {
    const cursor = encodeCursor(seq);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(cursor)).toBe(seq);
  });

  it.each([
    ['empty', ''],
    ['not base64url', 'MTI+'],
    ['padded', 'MQ=='],
    ['zero', Buffer.from('0').toString('base64url')],
    ['negative', Buffer.from('-1').toString('base64url')],
    ['leading zero', Buffer.from('012').toString('base64url')],
    ['not a number', Buffer.from('abc').toString('base64url')],
    ['beyond safe integers', Buffer.from('9007199254740993').toString('base64url')],
    ['a non-canonical encoding of 1', 'MR'],
  ])('refuses a cursor that is %s', (_, cursor) => {
    expect(() => decodeCursor(cursor)).toThrow(InvalidAuditQuery);
  });

  it('encodes only positive integer seqs', () => {
    expect(() => encodeCursor(0)).toThrow(RangeError);
    expect(() => encodeCursor(1.5)).toThrow(RangeError);
  });
});

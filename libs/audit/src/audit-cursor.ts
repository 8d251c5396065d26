import { InvalidAuditQuery } from './audit.errors';

const BASE64URL = /^[A-Za-z0-9_-]+$/;
const SEQ = /^[1-9][0-9]{0,15}$/;

/**
 * The cursor of the page after the record at `seq`. A tenant's seq order is fixed once a record is written, so
 * pages never repeat or skip a record, whatever is appended meanwhile. Opaque to operators: base64url.
 */
export function encodeCursor(seq: number): string {
  if (!Number.isSafeInteger(seq) || seq < 1) {
    throw new RangeError(`not a record seq: ${seq}`);
  }
  return Buffer.from(String(seq), 'utf8').toString('base64url');
}

/** The seq a cursor from {@link encodeCursor} stands for; anything else is an {@link InvalidAuditQuery}. */
export function decodeCursor(cursor: string): number {
  const text = BASE64URL.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const seq = Number(text);
  if (!SEQ.test(text) || !Number.isSafeInteger(seq) || encodeCursor(seq) !== cursor) {
    throw new InvalidAuditQuery('the cursor is not one this log gave out');
  }
  return seq;
}

/**
 * What one POST came to (STYLE.md "The push-notification dispatcher", ADR 0010 decision 4):
 * - `delivered`: the receiver answered 2xx;
 * - `retry`: worth another attempt later: a connection error or timeout, or 408, 425, 429, 5xx, with the
 *   receiver's `Retry-After` when it gave one;
 * - `rejected`: another attempt would fare no better: 3xx (redirects are not followed), another 4xx, an invalid
 *   URL or a refused destination (never dialled).
 */
export type DeliveryVerdict =
  | { outcome: 'delivered'; status: number }
  | { outcome: 'retry'; status?: number; retryAfterMs?: number; error: string }
  | { outcome: 'rejected'; status?: number; error: string };

/** A verdict with the time the attempt took, from the call to the last byte read (or the failure). */
export type DeliveryResult = DeliveryVerdict & { durationMs: number };

/** Statuses that say "later" (RFC 9110 §15.5.9 408, RFC 8470 §5.2 425, RFC 6585 §4 429) besides 5xx. */
const RETRYABLE_CLIENT_ERRORS = new Set([408, 425, 429]);

/**
 * The verdict of a response status. `retryAfter` is the raw `Retry-After` header, read for retryable statuses
 * only (see `parseRetryAfter`).
 */
export function statusVerdict(
  status: number,
  retryAfter: string | undefined,
  nowMs: number,
  retryAfterCapMs: number,
): DeliveryVerdict {
  if (status >= 200 && status < 300) {
    return { outcome: 'delivered', status };
  }
  if (RETRYABLE_CLIENT_ERRORS.has(status) || (status >= 500 && status < 600)) {
    const retryAfterMs = parseRetryAfter(retryAfter, nowMs, retryAfterCapMs);
    return retryAfterMs === undefined
      ? { outcome: 'retry', status, error: `HTTP ${status}` }
      : { outcome: 'retry', status, retryAfterMs, error: `HTTP ${status}` };
  }
  if (status >= 300 && status < 400) {
    return { outcome: 'rejected', status, error: `HTTP ${status}: redirects are not followed` };
  }
  return { outcome: 'rejected', status, error: `HTTP ${status}` };
}

/** IMF-fixdate, the HTTP-date form senders must generate (RFC 9110 §5.6.7). */
const IMF_FIXDATE = /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/;

/**
 * `Retry-After` (RFC 9110 §10.2.3) in milliseconds from `nowMs`: delay-seconds or an IMF-fixdate (a past date
 * is 0), at most `capMs`. Undefined when absent or unreadable (the backoff alone then decides).
 */
export function parseRetryAfter(
  value: string | undefined,
  nowMs: number,
  capMs: number,
): number | undefined {
  const text = value?.trim();
  if (!text) {
    return undefined;
  }
  if (/^\d+$/.test(text)) {
    return Math.min(capMs, Number(text) * 1_000);
  }
  const date = IMF_FIXDATE.test(text) ? Date.parse(text) : Number.NaN;
  return Number.isNaN(date) ? undefined : Math.min(capMs, Math.max(0, date - nowMs));
}

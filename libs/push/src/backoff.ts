/**
 * The delay before attempt `attempt + 1` after attempt `attempt` (1-based) failed: exponential backoff with
 * full jitter, a random value in [0, min(capMs, baseMs × 2^(attempt − 1))] (whole milliseconds). `random`
 * returns a value in [0, 1), like `Math.random`.
 */
export function backoffDelay(
  attempt: number,
  baseMs: number,
  capMs: number,
  random: () => number,
): number {
  if (!Number.isInteger(attempt) || attempt < 1) {
    throw new RangeError(`attempts are counted from 1, not ${attempt}`);
  }
  const ceiling = Math.min(capMs, baseMs * 2 ** (attempt - 1));
  return Math.floor(random() * (ceiling + 1));
}

/**
 * The delay before the next attempt honouring the receiver's `Retry-After` (ADR 0010 decision 4): the later of
 * `retryAfterMs` and the jittered backoff, never more than `capMs`.
 */
export function retryDelay(
  attempt: number,
  retryAfterMs: number | undefined,
  baseMs: number,
  capMs: number,
  random: () => number,
): number {
  const jittered = backoffDelay(attempt, baseMs, capMs, random);
  return Math.min(capMs, Math.max(retryAfterMs ?? 0, jittered));
}

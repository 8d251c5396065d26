/**
 * At most `limit` sends at once per destination host (PUSH_HOST_CONCURRENCY, ADR 0010 decision 8), without
 * waiting: a caller at the limit gets nothing and re-queues its work, so a slow host never holds a slot that
 * another host's work could use.
 */
export class HostLimiter {
  private readonly inFlight = new Map<string, number>();

  constructor(private readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) {
      throw new RangeError(`the per-host limit must be a positive integer, not ${limit}`);
    }
  }

  /**
   * Takes a slot for `host` (the URL's host name, compared case-insensitively): returns the function that gives
   * it back (calling it again does nothing), or null when the host is at its limit.
   */
  tryAcquire(host: string): (() => void) | null {
    const key = host.toLowerCase();
    const current = this.inFlight.get(key) ?? 0;
    if (current >= this.limit) {
      return null;
    }
    this.inFlight.set(key, current + 1);
    let released = false;
    return () => {
      if (released) {
        return;
      }
      released = true;
      const remaining = (this.inFlight.get(key) ?? 1) - 1;
      if (remaining === 0) {
        this.inFlight.delete(key);
      } else {
        this.inFlight.set(key, remaining);
      }
    };
  }
}

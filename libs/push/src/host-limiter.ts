/** Gives a slot back; calling it again does nothing. */
export type ReleaseSlot = () => void;

/** Weight of the newest hold time in a host's average. */
const HOLD_WEIGHT = 0.2;
/** A slot held this many times the host's average (and longer than a caller's wait) says the host is stuck. */
const STUCK_FACTOR = 4;
/** Hosts remembered (their average hold time) before those with no slot held are forgotten. */
const HOSTS_REMEMBERED = 10_000;

interface Waiter {
  grant: (release: ReleaseSlot | null) => void;
  timer: NodeJS.Timeout;
}

interface HostSlots {
  /** When each slot held now was taken (ms), oldest first. */
  held: number[];
  /** Callers waiting for a slot, first come first served. */
  waiting: Waiter[];
  /** Average time a slot is held (ms), over the slots given back so far; null before the first. */
  holdMs: number | null;
}

/**
 * At most `limit` sends at once per destination host (PUSH_HOST_CONCURRENCY, ADR 0010 decision 8). A caller
 * at the limit waits for a slot only when the host gives them back fast enough for one to come within its
 * `maxWaitMs` (the caller's place in line times the host's average hold time, over `limit`, within it, and
 * no slot held much longer than the average: the host is not stuck), and never longer than that; otherwise,
 * and when the wait runs out, it gets nothing and re-queues its work. So a slow or silent host never has
 * callers wait for it, while callers of a fast host take turns instead of giving their work back and taking
 * it again.
 */
export class HostLimiter {
  private readonly hosts = new Map<string, HostSlots>();

  constructor(private readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) {
      throw new RangeError(`the per-host limit must be a positive integer, not ${limit}`);
    }
  }

  /**
   * A slot for `host` (the URL's host name, compared case-insensitively), at once or after waiting at most
   * `maxWaitMs` as described above: the function that gives it back, or null.
   */
  acquire(host: string, maxWaitMs: number): Promise<ReleaseSlot | null> {
    const key = host.toLowerCase();
    let slots = this.hosts.get(key);
    if (!slots) {
      this.forgetIdleHosts();
      slots = { held: [], waiting: [], holdMs: null };
      this.hosts.set(key, slots);
    }
    if (slots.held.length < this.limit) {
      return Promise.resolve(this.take(slots));
    }
    if (!this.worthWaiting(slots, maxWaitMs)) {
      return Promise.resolve(null);
    }
    return new Promise((resolve) => {
      const waiter: Waiter = {
        grant: resolve,
        timer: setTimeout(() => {
          slots.waiting.splice(slots.waiting.indexOf(waiter), 1);
          resolve(null);
        }, maxWaitMs),
      };
      slots.waiting.push(waiter);
    });
  }

  /** Whether a slot of a host at its limit is expected within `maxWaitMs` for one more waiter. */
  private worthWaiting(slots: HostSlots, maxWaitMs: number): boolean {
    const oldest = slots.held[0];
    return (
      maxWaitMs > 0 &&
      slots.holdMs !== null &&
      oldest !== undefined &&
      Date.now() - oldest <= Math.max(maxWaitMs, STUCK_FACTOR * slots.holdMs) &&
      ((slots.waiting.length + 1) * slots.holdMs) / this.limit <= maxWaitMs
    );
  }

  private forgetIdleHosts(): void {
    if (this.hosts.size < HOSTS_REMEMBERED) {
      return;
    }
    for (const [key, slots] of this.hosts) {
      if (slots.held.length === 0) {
        this.hosts.delete(key);
      }
    }
  }

  private take(slots: HostSlots): ReleaseSlot {
    const takenAt = Date.now();
    slots.held.push(takenAt);
    let released = false;
    return () => {
      if (released) {
        return;
      }
      released = true;
      const now = Date.now();
      slots.held.splice(slots.held.indexOf(takenAt), 1);
      const heldMs = now - takenAt;
      slots.holdMs =
        slots.holdMs === null ? heldMs : slots.holdMs + HOLD_WEIGHT * (heldMs - slots.holdMs);
      const next = slots.waiting.shift();
      if (next) {
        clearTimeout(next.timer);
        next.grant(this.take(slots));
      }
    };
  }
}

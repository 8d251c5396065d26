/** Exponential backoff: `initialMs × factor^attempt`, capped at `maxMs`, spread by ±`jitter`. */
export interface BackoffPolicy {
  readonly initialMs: number;
  readonly maxMs: number;
  readonly factor: number;
  /** Fraction of the delay added or removed at random, so that workers do not reconnect in lockstep. */
  readonly jitter: number;
}

/**
 * 100 ms doubling to 1 s, ±20 %: used for reconnecting and for retrying updates. The cap stays well under a
 * lease's length, so a worker is back within about a second of the platform and keeps its leases.
 */
export const DEFAULT_BACKOFF: BackoffPolicy = {
  initialMs: 100,
  maxMs: 1_000,
  factor: 2,
  jitter: 0.2,
};

/**
 * The delay before retry number `attempt` (0 for the first retry). `random` returns a value in [0, 1);
 * 0.5 yields the un-jittered delay.
 */
export function backoffDelayMs(
  attempt: number,
  policy: BackoffPolicy = DEFAULT_BACKOFF,
  random: () => number = Math.random,
): number {
  const base = Math.min(policy.maxMs, policy.initialMs * policy.factor ** Math.max(0, attempt));
  const spread = base * policy.jitter * (2 * random() - 1);
  return Math.max(0, Math.round(base + spread));
}

/** Resolves after `ms`, or as soon as `signal` aborts (never rejects). */
export function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) {
      resolve();
      return;
    }
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

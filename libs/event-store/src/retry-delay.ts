/** Capped exponential backoff with jitter, for reconnecting to a dependency that went away. */
export interface RetryDelays {
  /** Delay before the first retry. */
  readonly firstMs: number;
  /** No delay grows past this. */
  readonly capMs: number;
}

/** 100 ms doubling up to 2 s: back within about two seconds of a dependency's return. */
export const RECONNECT_DELAYS: RetryDelays = { firstMs: 100, capMs: 2_000 };

/**
 * The delay before retry number `attempt` (0-based): `firstMs × 2^attempt`, capped, then drawn uniformly from
 * its upper half, so that replicas that lost the same server do not come back in lockstep.
 */
export function retryDelayMs(
  attempt: number,
  delays: RetryDelays = RECONNECT_DELAYS,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(delays.capMs, delays.firstMs * 2 ** Math.min(Math.max(0, attempt), 30));
  return Math.round(ceiling / 2 + (ceiling / 2) * random());
}

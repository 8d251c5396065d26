import { describe, expect, it } from 'vitest';
import { RECONNECT_DELAYS, retryDelayMs } from './retry-delay';

describe('retryDelayMs', () => {
  it('doubles from the first delay up to the cap, drawn from the upper half of each step', () => {
    const low = (attempt: number) => retryDelayMs(attempt, RECONNECT_DELAYS, () => 0);
    const high = (attempt: number) => retryDelayMs(attempt, RECONNECT_DELAYS, () => 1);
    expect([0, 1, 2, 3, 4, 5, 6].map(low)).toEqual([50, 100, 200, 400, 800, 1_000, 1_000]);
    expect([0, 1, 2, 3, 4, 5, 6].map(high)).toEqual([100, 200, 400, 800, 1_600, 2_000, 2_000]);
  });

  it('stays within the cap for any attempt, however large', () => {
    for (const attempt of [10, 100, 10_000, Number.MAX_SAFE_INTEGER]) {
      const delay = retryDelayMs(attempt);
      expect(delay).toBeGreaterThanOrEqual(RECONNECT_DELAYS.capMs / 2);
      expect(delay).toBeLessThanOrEqual(RECONNECT_DELAYS.capMs);
    }
  });

  it('spreads replicas that retry together', () => {
    const delays = new Set(Array.from({ length: 50 }, () => retryDelayMs(8)));
    expect(delays.size).toBeGreaterThan(10);
  });
});

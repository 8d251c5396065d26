import { afterEach, describe, expect, it, vi } from 'vitest';
import { backoffDelayMs, DEFAULT_BACKOFF, pause } from './backoff';

const middle = (): number => 0.5;

describe('backoffDelayMs', () => {
  it('doubles from 100 ms and stays at 2 s', () => {
    const schedule = Array.from({ length: 8 }, (_, attempt) =>
      backoffDelayMs(attempt, DEFAULT_BACKOFF, middle),
    );
    expect(schedule).toEqual([100, 200, 400, 800, 1_000, 1_000, 1_000, 1_000]);
  });

  it('spreads each delay by at most ±20 %', () => {
    expect(backoffDelayMs(0, DEFAULT_BACKOFF, () => 0)).toBe(80);
    expect(backoffDelayMs(0, DEFAULT_BACKOFF, () => 0.999_999)).toBe(120);
    expect(backoffDelayMs(10, DEFAULT_BACKOFF, () => 0)).toBe(800);
    expect(backoffDelayMs(10, DEFAULT_BACKOFF, () => 0.999_999)).toBe(1_200);
  });

  it('treats a negative attempt as the first one and never overflows', () => {
    expect(backoffDelayMs(-3, DEFAULT_BACKOFF, middle)).toBe(100);
    expect(backoffDelayMs(10_000, DEFAULT_BACKOFF, middle)).toBe(1_000);
  });
});

describe('pause', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('resolves at once when the signal aborts', async () => {
    vi.useFakeTimers();
    const controller = new AbortController();
    let resolved = false;
    void pause(60_000, controller.signal).then(() => (resolved = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(resolved).toBe(false);
    controller.abort();
    // The clock has not moved: the abort, not the delay, ended the pause, and its timer is gone.
    await vi.advanceTimersByTimeAsync(0);
    expect(resolved).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });
});

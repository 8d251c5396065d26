import { describe, expect, it } from 'vitest';
import { backoffDelay, retryDelay } from './backoff';

const BASE = 1_000;
const CAP = 300_000;
/** The top of the jitter range (random() never returns 1). */
const highest = (): number => 0.999_999_999;
const lowest = (): number => 0;

describe('backoffDelay (exponential, full jitter)', () => {
  it('the range doubles from the base per attempt and stops at the cap', () => {
    const ceilings = Array.from({ length: 11 }, (_, i) => backoffDelay(i + 1, BASE, CAP, highest));
    expect(ceilings).toStrictEqual([
      1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 64_000, 128_000, 256_000, 300_000, 300_000,
    ]);
  });

  it('jitter spans the whole range from 0', () => {
    expect(backoffDelay(3, BASE, CAP, lowest)).toBe(0);
    expect(backoffDelay(3, BASE, CAP, () => 0.5)).toBe(2_000);
    expect(backoffDelay(3, BASE, CAP, highest)).toBe(4_000);
  });

  it('never overflows on a large attempt number', () => {
    expect(backoffDelay(5_000, BASE, CAP, highest)).toBe(CAP);
  });

  it('counts attempts from 1', () => {
    for (const attempt of [0, -1, 1.5, Number.NaN]) {
      expect(() => backoffDelay(attempt, BASE, CAP, lowest)).toThrow(RangeError);
    }
  });
});

describe('retryDelay (Retry-After honoured)', () => {
  it('waits at least what the receiver asked', () => {
    expect(retryDelay(1, 30_000, BASE, CAP, highest)).toBe(30_000);
    expect(retryDelay(1, 0, BASE, CAP, highest)).toBe(1_000);
  });

  it('keeps the jittered backoff when it is longer than Retry-After', () => {
    expect(retryDelay(8, 5_000, BASE, CAP, () => 0.5)).toBe(64_000);
  });

  it('never waits more than the cap, whatever the receiver asked', () => {
    expect(retryDelay(1, 3_600_000, BASE, CAP, lowest)).toBe(CAP);
  });

  it('is the plain backoff without Retry-After', () => {
    expect(retryDelay(4, undefined, BASE, CAP, () => 0.25)).toBe(2_000);
  });
});

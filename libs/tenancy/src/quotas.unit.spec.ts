import { describe, expect, it } from 'vitest';
import { slidingRate } from './quotas';

describe('slidingRate', () => {
  it('is the current count alone when the previous second had none', () => {
    expect(slidingRate(7, 0, 12_345)).toBe(7);
  });

  it('weighs the previous second by the share of it the window still covers', () => {
    expect(slidingRate(0, 20, 5_000)).toBe(20);
    expect(slidingRate(0, 20, 5_250)).toBe(15);
    expect(slidingRate(4, 20, 5_750)).toBe(9);
    expect(slidingRate(4, 20, 5_999)).toBeCloseTo(4.02, 5);
  });
});

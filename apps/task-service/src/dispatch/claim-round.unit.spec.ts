import { describe, expect, it } from 'vitest';
import { afterRound, openSlots } from './claim-round';

describe('a claim round under a lease cap', () => {
  it.each([
    // cap, leases held, free places → slots for new leases
    [2, 0, 10, 2],
    [2, 1, 10, 1],
    [2, 2, 10, 0],
    // A cap lowered below the leases held grants nothing (and revokes nothing).
    [2, 5, 10, 0],
    [10, 3, 4, 4],
    [10, 0, 0, 0],
  ])('cap %i with %i held and %i free places leaves %i slots', (cap, held, free, slots) => {
    expect(openSlots(cap, held, free)).toBe(slots);
  });
});

describe('what a claim run does after a round', () => {
  it('marks the queue drained when it found fewer tasks than it looked for', () => {
    expect(afterRound({ free: 4, asked: 4, found: 3, leased: 3 })).toBe('drained');
    expect(afterRound({ free: 4, asked: 2, found: 1, leased: 1 })).toBe('drained');
  });

  it('looks again when room was the only bound and it leased something', () => {
    expect(afterRound({ free: 4, asked: 4, found: 4, leased: 2 })).toBe('more');
  });

  it('stops without marking the queue drained when the cap left no slot, or fewer slots than room', () => {
    expect(afterRound({ free: 4, asked: 0, found: 0, leased: 0 })).toBe('done');
    expect(afterRound({ free: 4, asked: 2, found: 2, leased: 2 })).toBe('done');
  });

  it('stops when every task it found went elsewhere', () => {
    expect(afterRound({ free: 4, asked: 4, found: 4, leased: 0 })).toBe('done');
  });
});

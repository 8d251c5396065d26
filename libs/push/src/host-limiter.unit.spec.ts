import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { HostLimiter, type ReleaseSlot } from './host-limiter';

const WAIT_MS = 100;

async function slot(limiter: HostLimiter, host: string): Promise<ReleaseSlot> {
  const release = await limiter.acquire(host, WAIT_MS);
  if (!release) {
    throw new Error(`no slot for ${host}`);
  }
  return release;
}

describe('HostLimiter', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  it('grants up to the limit per host; then, with nothing known of the host, null without waiting', async () => {
    const limiter = new HostLimiter(2);
    await slot(limiter, 'hooks.example.com');
    await slot(limiter, 'hooks.example.com');
    expect(await limiter.acquire('hooks.example.com', WAIT_MS)).toBeNull();
    expect(await limiter.acquire('other.example.com', WAIT_MS)).toBeTypeOf('function');
  });

  it('a released slot can be taken again; releasing twice frees one slot only', async () => {
    const limiter = new HostLimiter(1);
    const release = await slot(limiter, 'a.example');
    release();
    release();
    const again = await slot(limiter, 'a.example');
    expect(await limiter.acquire('a.example', 0)).toBeNull();
    again();
    expect(await limiter.acquire('a.example', 0)).toBeTypeOf('function');
  });

  it('treats host names case-insensitively', async () => {
    const limiter = new HostLimiter(1);
    await slot(limiter, 'Hooks.Example.com');
    expect(await limiter.acquire('hooks.example.COM', 0)).toBeNull();
  });

  it('lets callers of a fast host wait their turn, first come first served', async () => {
    const limiter = new HostLimiter(2);
    // The host has given slots back after 10 ms: a slot is expected every 5 ms.
    const [a, b] = [await slot(limiter, 'fast.example'), await slot(limiter, 'fast.example')];
    vi.advanceTimersByTime(10);
    a();
    b();
    const holders = [await slot(limiter, 'fast.example'), await slot(limiter, 'fast.example')];
    const order: string[] = [];
    const queue = async (name: string): Promise<ReleaseSlot | null> => {
      const release = await limiter.acquire('fast.example', WAIT_MS);
      order.push(name);
      return release;
    };
    const first = queue('first');
    const second = queue('second');
    vi.advanceTimersByTime(5);
    holders[0]?.();
    expect(await first).toBeTypeOf('function');
    holders[1]?.();
    expect(await second).toBeTypeOf('function');
    expect(order).toStrictEqual(['first', 'second']);
  });

  it('does not wait where no slot is expected within the wait: too many ahead, slow, or stuck', async () => {
    const limiter = new HostLimiter(1);
    const released = await slot(limiter, 'slow.example');
    vi.advanceTimersByTime(60);
    released();
    await slot(limiter, 'slow.example');
    // Slots are held 60 ms: one caller may wait (60 ms ≤ 100), a second would wait 120.
    const waiting = limiter.acquire('slow.example', WAIT_MS);
    expect(await limiter.acquire('slow.example', WAIT_MS)).toBeNull();
    // The one waiting gives up at the end of its wait...
    vi.advanceTimersByTime(WAIT_MS + 1);
    expect(await waiting).toBeNull();
    // ... and once the slot held now is held four times the average, the host is stuck: nobody waits.
    vi.advanceTimersByTime(4 * 60 - WAIT_MS);
    expect(await limiter.acquire('slow.example', WAIT_MS)).toBeNull();
  });

  it('needs a positive integer limit', () => {
    for (const limit of [0, -1, 1.5]) {
      expect(() => new HostLimiter(limit)).toThrow(RangeError);
    }
  });
});

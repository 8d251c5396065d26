import { describe, expect, it } from 'vitest';
import { HostLimiter } from './host-limiter';

describe('HostLimiter', () => {
  it('grants up to the limit per host, then null without waiting', () => {
    const limiter = new HostLimiter(2);
    const first = limiter.tryAcquire('hooks.example.com');
    const second = limiter.tryAcquire('hooks.example.com');
    expect(first).toBeTypeOf('function');
    expect(second).toBeTypeOf('function');
    expect(limiter.tryAcquire('hooks.example.com')).toBeNull();
    expect(limiter.tryAcquire('other.example.com')).toBeTypeOf('function');
  });

  it('a released slot can be taken again; releasing twice frees one slot only', () => {
    const limiter = new HostLimiter(1);
    const release = limiter.tryAcquire('a.example')!;
    release();
    release();
    const again = limiter.tryAcquire('a.example');
    expect(again).toBeTypeOf('function');
    expect(limiter.tryAcquire('a.example')).toBeNull();
    again!();
    expect(limiter.tryAcquire('a.example')).toBeTypeOf('function');
  });

  it('treats host names case-insensitively', () => {
    const limiter = new HostLimiter(1);
    limiter.tryAcquire('Hooks.Example.com');
    expect(limiter.tryAcquire('hooks.example.COM')).toBeNull();
  });

  it('needs a positive integer limit', () => {
    for (const limit of [0, -1, 1.5]) {
      expect(() => new HostLimiter(limit)).toThrow(RangeError);
    }
  });
});

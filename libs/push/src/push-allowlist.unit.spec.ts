import { describe, expect, it } from 'vitest';
import { PushAllowlist } from './push-allowlist';

const allowlist = new PushAllowlist({
  acme: ['Hooks.Internal.Acme', '10.20.0.0/16', '127.0.0.1', 'fd00:1::/32', '::1'],
  empty: [],
});

describe('PushAllowlist', () => {
  it.each([
    ['a host name, case-insensitively', 'hooks.internal.acme', '10.99.0.1', true],
    ['a host name in capitals', 'HOOKS.INTERNAL.ACME', '192.168.0.1', true],
    ['another host name', 'other.internal.acme', '192.168.0.1', false],
    ['an address in an IPv4 CIDR', 'x.acme', '10.20.3.4', true],
    ['an address just outside it', 'x.acme', '10.21.0.0', false],
    ['a bare IPv4 address as /32', '127.0.0.1', '127.0.0.1', true],
    ['its neighbour', '127.0.0.2', '127.0.0.2', false],
    ['an IPv4-mapped form of an admitted IPv4 address', 'x', '::ffff:127.0.0.1', true],
    ['an address in an IPv6 CIDR', 'x', 'fd00:1:ffff::9', true],
    ['a bare IPv6 address as /128', 'x', '::1', true],
    ['an IPv6 address outside', 'x', 'fd00:2::1', false],
  ])('acme: %s → %s', (_case, host, address, expected) => {
    expect(allowlist.allowed('acme', host, address)).toBe(expected);
  });

  it('admits nothing for a tenant without entries (tenants do not share entries)', () => {
    expect(allowlist.allowed('globex', 'hooks.internal.acme', '10.20.3.4')).toBe(false);
    expect(allowlist.allowed('empty', '127.0.0.1', '127.0.0.1')).toBe(false);
    expect(allowlist.has('acme')).toBe(true);
    expect(allowlist.has('empty')).toBe(false);
    expect(allowlist.has('globex')).toBe(false);
  });

  it('fails at construction on an invalid CIDR, naming tenant and entry', () => {
    expect(() => new PushAllowlist({ acme: ['10.0.0.0/33'] })).toThrow(
      'PUSH_ALLOWLIST of tenant acme: invalid CIDR 10.0.0.0/33',
    );
    expect(() => new PushAllowlist({ acme: ['hooks/8'] })).toThrow(/invalid CIDR hooks\/8/);
  });
});

import { describe, expect, it } from 'vitest';
import { cidrContains, parseCidr, parseIp } from './ip-address';
import { classifyAddress, isLoopbackAddress, RESERVED_RANGES } from './reserved-ranges';

describe('classifyAddress', () => {
  it.each([
    // IPv4
    ['0.0.0.0', '0.0.0.0/8'],
    ['0.255.255.255', '0.0.0.0/8'],
    ['10.0.0.1', '10.0.0.0/8'],
    ['10.255.255.255', '10.0.0.0/8'],
    ['100.64.0.1', '100.64.0.0/10'],
    ['100.127.255.255', '100.64.0.0/10'],
    ['100.100.100.200', '100.100.100.200/32'],
    ['127.0.0.1', '127.0.0.0/8'],
    ['127.255.255.254', '127.0.0.0/8'],
    ['168.63.129.16', '168.63.129.16/32'],
    ['169.254.0.1', '169.254.0.0/16'],
    ['169.254.169.254', '169.254.169.254/32'],
    ['172.16.0.1', '172.16.0.0/12'],
    ['172.31.255.255', '172.16.0.0/12'],
    ['192.0.0.8', '192.0.0.0/24'],
    ['192.0.2.1', '192.0.2.0/24'],
    ['192.88.99.1', '192.88.99.0/24'],
    ['192.168.1.1', '192.168.0.0/16'],
    ['198.18.0.1', '198.18.0.0/15'],
    ['198.19.255.255', '198.18.0.0/15'],
    ['198.51.100.7', '198.51.100.0/24'],
    ['203.0.113.9', '203.0.113.0/24'],
    ['224.0.0.1', '224.0.0.0/4'],
    ['239.255.255.250', '224.0.0.0/4'],
    ['240.0.0.1', '240.0.0.0/4'],
    ['255.255.255.255', '255.255.255.255/32'],
    // IPv6
    ['::', '::/128'],
    ['::1', '::1/128'],
    ['::7f00:1', '::/96'],
    ['64:ff9b:1::1', '64:ff9b:1::/48'],
    ['100::1', '100::/64'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', '2001::/32'],
    ['2001:2::1', '2001:2::/48'],
    ['2001:db8::1', '2001:db8::/32'],
    ['3fff:fff::1', '3fff::/20'],
    ['fc00::1', 'fc00::/7'],
    ['fd12:3456::1', 'fc00::/7'],
    ['fd00:ec2::254', 'fd00:ec2::254/128'],
    ['fe80::1', 'fe80::/10'],
    ['fe80::1%eth0', 'fe80::/10'],
    ['febf::1', 'fe80::/10'],
    ['fec0::1', 'fec0::/10'],
    ['ff02::1', 'ff00::/8'],
  ])('%s is reserved: %s', (address, cidr) => {
    expect(classifyAddress(address)?.range.cidr).toBe(cidr);
  });

  it.each([
    ['::ffff:127.0.0.1', '127.0.0.0/8', '127.0.0.1'],
    ['::ffff:7f00:1', '127.0.0.0/8', '127.0.0.1'],
    ['::ffff:a9fe:a9fe', '169.254.169.254/32', '169.254.169.254'],
    ['::ffff:10.1.2.3', '10.0.0.0/8', '10.1.2.3'],
    ['64:ff9b::192.168.0.1', '192.168.0.0/16', '192.168.0.1'],
    ['64:ff9b::7f00:1', '127.0.0.0/8', '127.0.0.1'],
    ['2002:7f00:1::1', '127.0.0.0/8', '127.0.0.1'],
    ['2002:a9fe:a9fe::', '169.254.169.254/32', '169.254.169.254'],
  ])('%s carries an IPv4 address and is judged by it: %s', (address, cidr, ipv4) => {
    expect(classifyAddress(address)).toStrictEqual({
      range: expect.objectContaining({ cidr }),
      embeddedIpv4: ipv4,
    });
  });

  it.each([
    '1.1.1.1',
    '8.8.8.8',
    '9.255.255.255',
    '11.0.0.0',
    '100.63.255.255',
    '100.128.0.0',
    '126.255.255.255',
    '128.0.0.0',
    '169.253.255.255',
    '169.255.0.0',
    '172.15.255.255',
    '172.32.0.0',
    '192.167.255.255',
    '192.169.0.0',
    '198.17.255.255',
    '198.20.0.0',
    '223.255.255.255',
    '2606:4700:4700::1111',
    '2001:4860:4860::8888',
    '2a00:1450:4001::200e',
    'fbff:ffff::1',
    'fe00::1',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
  ])('%s is globally reachable', (address) => {
    expect(classifyAddress(address)).toBeUndefined();
  });

  it('names the most specific block: metadata rather than link-local or unique-local', () => {
    expect(classifyAddress('169.254.169.254')?.range.name).toMatch(/cloud metadata/);
    expect(classifyAddress('fd00:ec2::254')?.range.name).toMatch(/cloud metadata/);
    expect(classifyAddress('255.255.255.255')?.range.name).toBe('limited broadcast');
  });

  it('refuses to classify what is not an IP address', () => {
    for (const text of ['localhost', '127.1', '0x7f000001', '1.2.3.4.5', '']) {
      expect(() => classifyAddress(text)).toThrow(TypeError);
    }
  });

  it('every block parses, is written with its host bits clear, and cites a source', () => {
    for (const range of RESERVED_RANGES) {
      const cidr = parseCidr(range.cidr);
      expect(cidr, range.cidr).toBeDefined();
      expect(cidrContains(cidr!, parseIp(range.cidr.split('/')[0]!)!)).toBe(true);
      expect(range.reference).not.toBe('');
    }
  });
});

describe('isLoopbackAddress', () => {
  it.each([
    '127.0.0.1',
    '127.255.0.9',
    '::1',
    '0:0:0:0:0:0:0:1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
  ])('holds for %s', (address) => {
    expect(isLoopbackAddress(address)).toBe(true);
  });

  it.each([
    '10.0.0.1',
    '169.254.169.254',
    '128.0.0.1',
    '::2',
    'fe80::1',
    '::ffff:10.0.0.1',
    'localhost',
  ])('does not hold for %s', (address) => {
    expect(isLoopbackAddress(address)).toBe(false);
  });
});

describe('parseCidr / parseIp', () => {
  it.each([
    ['10.1.2.3/8', { version: 4, network: 0x0a00_0000n, prefix: 8 }],
    ['192.168.1.1', { version: 4, network: 0xc0a8_0101n, prefix: 32 }],
    ['0.0.0.0/0', { version: 4, network: 0n, prefix: 0 }],
    ['::1', { version: 6, network: 1n, prefix: 128 }],
    ['fe80::1/10', { version: 6, network: 0xfe80n << 112n, prefix: 10 }],
    ['::ffff:1.2.3.4/128', { version: 6, network: 0xffff_0102_0304n, prefix: 128 }],
  ])('%s', (text, expected) => {
    expect(parseCidr(text)).toStrictEqual(expected);
  });

  it.each([
    '10.0.0.0/33',
    '::/129',
    '10.0.0.0/',
    '10.0.0.0/-1',
    '10.0.0.0/8/8',
    'host/8',
    '10.0.0/8',
  ])('%s is not a CIDR', (text) => {
    expect(parseCidr(text)).toBeUndefined();
  });

  it('reads every IPv6 spelling of one address alike', () => {
    const spellings = [
      '2001:db8:0:0:0:0:2:1',
      '2001:db8::2:1',
      '2001:DB8::2:1',
      '2001:0db8:0000:0000:0000:0000:0002:0001',
    ];
    const values = spellings.map((text) => parseIp(text)?.value);
    expect(new Set(values).size).toBe(1);
    expect(parseIp('1::')?.value).toBe(1n << 112n);
  });
});

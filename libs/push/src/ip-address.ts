import { isIPv4, isIPv6 } from 'node:net';

/** An IP address as a number: 32 bits for IPv4, 128 bits for IPv6. */
export interface IpAddress {
  readonly version: 4 | 6;
  readonly value: bigint;
}

/** A network prefix (RFC 4632 for IPv4, RFC 4291 §2.3 for IPv6); host bits of `network` are zero. */
export interface Cidr {
  readonly version: 4 | 6;
  readonly network: bigint;
  readonly prefix: number;
}

const WIDTH = { 4: 32, 6: 128 } as const;

/** Parses a dotted-quad IPv4 or an IPv6 address (a zone id such as `%eth0` is ignored); undefined otherwise. */
export function parseIp(text: string): IpAddress | undefined {
  if (isIPv4(text)) {
    return { version: 4, value: parseIpv4(text) };
  }
  const zone = text.indexOf('%');
  const bare = zone < 0 ? text : text.slice(0, zone);
  return isIPv6(bare) ? { version: 6, value: parseIpv6(bare) } : undefined;
}

/**
 * Parses `address/prefix`, or a bare address as a single-address prefix; host bits are cleared, so
 * `10.1.2.3/8` is `10.0.0.0/8`. Undefined when the address or the prefix length is not valid.
 */
export function parseCidr(text: string): Cidr | undefined {
  const slash = text.indexOf('/');
  const ip = parseIp(slash < 0 ? text : text.slice(0, slash));
  if (!ip) {
    return undefined;
  }
  const width = WIDTH[ip.version];
  const prefixText = slash < 0 ? String(width) : text.slice(slash + 1);
  const prefix = Number(prefixText);
  if (!/^\d{1,3}$/.test(prefixText) || prefix > width) {
    return undefined;
  }
  return { version: ip.version, network: ip.value & mask(width, prefix), prefix };
}

/** Whether `ip` lies in `cidr` (an IPv4 address is never in an IPv6 prefix, nor the other way round). */
export function cidrContains(cidr: Cidr, ip: IpAddress): boolean {
  return (
    ip.version === cidr.version &&
    (ip.value & mask(WIDTH[ip.version], cidr.prefix)) === cidr.network
  );
}

/** The 32 bits of an IPv6 address that start at bit `offset` (from the left), as an IPv4 address. */
export function embeddedIpv4(ip: IpAddress, offset: number): IpAddress {
  return { version: 4, value: (ip.value >> BigInt(128 - offset - 32)) & 0xffff_ffffn };
}

/** Dotted-quad text of an IPv4 address. */
export function formatIpv4(ip: IpAddress): string {
  return [24n, 16n, 8n, 0n].map((shift) => String((ip.value >> shift) & 0xffn)).join('.');
}

function mask(width: number, prefix: number): bigint {
  return ((1n << BigInt(prefix)) - 1n) << BigInt(width - prefix);
}

function parseIpv4(text: string): bigint {
  return text.split('.').reduce((value, octet) => (value << 8n) | BigInt(octet), 0n);
}

/** `text` is valid IPv6 (checked by the caller): groups around one `::`, optionally ending in a dotted quad. */
function parseIpv6(text: string): bigint {
  let hex = text;
  const lastColon = hex.lastIndexOf(':');
  if (hex.includes('.', lastColon)) {
    const v4 = parseIpv4(hex.slice(lastColon + 1));
    hex = `${hex.slice(0, lastColon + 1)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [head = '', tail] = hex.split('::');
  const groups = (part: string): string[] => (part === '' ? [] : part.split(':'));
  const headGroups = groups(head);
  const tailGroups = tail === undefined ? [] : groups(tail);
  const zeros = Array<string>(8 - headGroups.length - tailGroups.length).fill('0');
  return [...headGroups, ...zeros, ...tailGroups].reduce(
    (value, group) => (value << 16n) | BigInt(`0x${group}`),
    0n,
  );
}

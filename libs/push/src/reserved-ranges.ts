import {
  cidrContains,
  embeddedIpv4,
  formatIpv4,
  parseCidr,
  parseIp,
  type Cidr,
  type IpAddress,
} from './ip-address';

/** A special-purpose address block a webhook may not reach unless the tenant's allowlist admits it. */
export interface ReservedRange {
  readonly cidr: string;
  readonly name: string;
  /** Where the block is defined. */
  readonly reference: string;
}

/** Why an address is refused: its range and, for an IPv6 form that carries an IPv4 address, that address. */
export interface AddressRefusal {
  readonly range: ReservedRange;
  readonly embeddedIpv4?: string;
}

/**
 * The blocks refused, after the IANA IPv4 and IPv6 Special-Purpose Address Registries (RFC 6890): everything
 * not globally reachable, plus the cloud metadata endpoints that are. The most specific block names the reason.
 */
export const RESERVED_RANGES: readonly ReservedRange[] = [
  { cidr: '0.0.0.0/8', name: 'unspecified ("this network")', reference: 'RFC 1122 §3.2.1.3' },
  { cidr: '10.0.0.0/8', name: 'private', reference: 'RFC 1918' },
  { cidr: '100.64.0.0/10', name: 'shared address space (CGNAT)', reference: 'RFC 6598' },
  { cidr: '100.100.100.200/32', name: 'cloud metadata (Alibaba Cloud)', reference: 'ECS metadata' },
  { cidr: '127.0.0.0/8', name: 'loopback', reference: 'RFC 1122 §3.2.1.3' },
  {
    cidr: '168.63.129.16/32',
    name: 'cloud platform endpoint (Azure)',
    reference: 'Azure WireServer',
  },
  { cidr: '169.254.0.0/16', name: 'link-local', reference: 'RFC 3927' },
  {
    cidr: '169.254.169.254/32',
    name: 'cloud metadata (AWS, GCP, Azure, OpenStack)',
    reference: 'instance metadata services',
  },
  { cidr: '172.16.0.0/12', name: 'private', reference: 'RFC 1918' },
  { cidr: '192.0.0.0/24', name: 'IETF protocol assignments', reference: 'RFC 6890 §2.2.2' },
  { cidr: '192.0.2.0/24', name: 'documentation (TEST-NET-1)', reference: 'RFC 5737' },
  { cidr: '192.88.99.0/24', name: '6to4 relay anycast (deprecated)', reference: 'RFC 7526' },
  { cidr: '192.168.0.0/16', name: 'private', reference: 'RFC 1918' },
  { cidr: '198.18.0.0/15', name: 'benchmarking', reference: 'RFC 2544' },
  { cidr: '198.51.100.0/24', name: 'documentation (TEST-NET-2)', reference: 'RFC 5737' },
  { cidr: '203.0.113.0/24', name: 'documentation (TEST-NET-3)', reference: 'RFC 5737' },
  { cidr: '224.0.0.0/4', name: 'multicast', reference: 'RFC 5771' },
  { cidr: '240.0.0.0/4', name: 'reserved', reference: 'RFC 1112 §4' },
  { cidr: '255.255.255.255/32', name: 'limited broadcast', reference: 'RFC 919 §7' },
  { cidr: '::/128', name: 'unspecified', reference: 'RFC 4291 §2.5.2' },
  { cidr: '::1/128', name: 'loopback', reference: 'RFC 4291 §2.5.3' },
  { cidr: '::/96', name: 'IPv4-compatible (deprecated)', reference: 'RFC 4291 §2.5.5.1' },
  { cidr: '64:ff9b:1::/48', name: 'local-use IPv4/IPv6 translation', reference: 'RFC 8215' },
  { cidr: '100::/64', name: 'discard-only', reference: 'RFC 6666' },
  { cidr: '2001::/32', name: 'Teredo tunnelling', reference: 'RFC 4380' },
  { cidr: '2001:2::/48', name: 'benchmarking', reference: 'RFC 5180' },
  { cidr: '2001:db8::/32', name: 'documentation', reference: 'RFC 3849' },
  { cidr: '3fff::/20', name: 'documentation', reference: 'RFC 9637' },
  { cidr: 'fc00::/7', name: 'unique-local', reference: 'RFC 4193' },
  { cidr: 'fd00:ec2::254/128', name: 'cloud metadata (AWS)', reference: 'EC2 instance metadata' },
  { cidr: 'fe80::/10', name: 'link-local', reference: 'RFC 4291 §2.5.6' },
  { cidr: 'fec0::/10', name: 'site-local (deprecated)', reference: 'RFC 3879' },
  { cidr: 'ff00::/8', name: 'multicast', reference: 'RFC 4291 §2.7' },
];

/**
 * IPv6 forms that carry an IPv4 address a packet ends up at: such an address is judged by that IPv4 address.
 * `offset` is the bit where the IPv4 address starts.
 */
const IPV4_MAPPED = { cidr: cidr('::ffff:0:0/96'), offset: 96 }; // RFC 4291 §2.5.5.2
const IPV4_CARRIERS: readonly { cidr: Cidr; offset: number }[] = [
  IPV4_MAPPED,
  { cidr: cidr('64:ff9b::/96'), offset: 96 }, // NAT64 well-known prefix, RFC 6052 §2.1
  { cidr: cidr('2002::/16'), offset: 16 }, // 6to4, RFC 3056 §2
];

/** Longest prefix first, so the first block that holds an address is the most specific one. */
const BY_SPECIFICITY = RESERVED_RANGES.map((range) => ({ range, block: cidr(range.cidr) })).sort(
  (a, b) => b.block.prefix - a.block.prefix,
);

/**
 * Classifies an IP address (IPv4 dotted quad or IPv6): the reserved block that holds it, or undefined for a
 * globally reachable address. An IPv4-mapped, NAT64 or 6to4 address is judged by the IPv4 address it carries.
 * Throws a TypeError for anything that is not an IP address.
 */
export function classifyAddress(address: string): AddressRefusal | undefined {
  const ip = parseIp(address);
  if (!ip) {
    throw new TypeError(`not an IP address: ${address}`);
  }
  const range = reservedRangeOf(ip);
  if (range) {
    return { range };
  }
  const carrier = IPV4_CARRIERS.find((form) => cidrContains(form.cidr, ip));
  if (!carrier) {
    return undefined;
  }
  const ipv4 = embeddedIpv4(ip, carrier.offset);
  const embedded = reservedRangeOf(ipv4);
  return embedded && { range: embedded, embeddedIpv4: formatIpv4(ipv4) };
}

const LOOPBACK: readonly Cidr[] = [cidr('127.0.0.0/8'), cidr('::1/128')];

/**
 * Whether an IP address is loopback (127.0.0.0/8, `::1`, or an IPv4-mapped loopback address): a service of
 * this very machine. False for anything that is not an IP address.
 */
export function isLoopbackAddress(address: string): boolean {
  const ip = parseIp(address);
  return ip !== undefined && LOOPBACK.some((block) => cidrContains(block, unmapped(ip)));
}

/** The IPv4 address an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) stands for; the address itself otherwise. */
export function unmapped(ip: IpAddress): IpAddress {
  return cidrContains(IPV4_MAPPED.cidr, ip) ? embeddedIpv4(ip, IPV4_MAPPED.offset) : ip;
}

function reservedRangeOf(ip: IpAddress): ReservedRange | undefined {
  return BY_SPECIFICITY.find(({ block }) => cidrContains(block, ip))?.range;
}

function cidr(text: string): Cidr {
  const parsed = parseCidr(text);
  if (!parsed) {
    throw new Error(`invalid CIDR in the reserved ranges: ${text}`);
  }
  return parsed;
}

import { cidrContains, parseCidr, parseIp, type Cidr } from './ip-address';
import { unmapped } from './reserved-ranges';

/** Per tenant: host names (exact, case-insensitive) and IPv4 / IPv6 CIDRs (a bare address is a /32 or /128). */
export type AllowlistEntries = Readonly<Record<string, readonly string[]>>;

interface TenantEntries {
  readonly hosts: ReadonlySet<string>;
  readonly cidrs: readonly Cidr[];
}

/**
 * The destinations an operator lets a tenant's webhooks reach although they are reserved (loopback, private,
 * link-local, …): e.g. `{"acme": ["hooks.internal.acme", "10.20.0.0/16"]}` (PUSH_ALLOWLIST).
 */
export class PushAllowlist {
  private readonly tenants = new Map<string, TenantEntries>();

  /** Throws, naming the tenant and the entry, when an entry with a `/` or an IP address is not a valid CIDR. */
  constructor(entries: AllowlistEntries = {}) {
    for (const [tenant, list] of Object.entries(entries)) {
      const hosts = new Set<string>();
      const cidrs: Cidr[] = [];
      for (const entry of list) {
        if (entry.includes('/') || parseIp(entry)) {
          const cidr = parseCidr(entry);
          if (!cidr) {
            throw new Error(`PUSH_ALLOWLIST of tenant ${tenant}: invalid CIDR ${entry}`);
          }
          cidrs.push(cidr);
        } else {
          hosts.add(entry.toLowerCase());
        }
      }
      if (hosts.size > 0 || cidrs.length > 0) {
        this.tenants.set(tenant, { hosts, cidrs });
      }
    }
  }

  /** Whether the tenant has any entry: tenants without one share one policy (nothing reserved is reachable). */
  has(tenant: string): boolean {
    return this.tenants.has(tenant);
  }

  /**
   * Whether the tenant's entries name `host` or hold `address` (an IPv4-mapped IPv6 address counts as its IPv4
   * address). `address` that is not an IP address is never held.
   */
  allowed(tenant: string, host: string, address: string): boolean {
    const entries = this.tenants.get(tenant);
    if (!entries) {
      return false;
    }
    if (entries.hosts.has(host.toLowerCase())) {
      return true;
    }
    const ip = parseIp(address);
    return (
      ip !== undefined &&
      entries.cidrs.some((cidr) => cidrContains(cidr, ip) || cidrContains(cidr, unmapped(ip)))
    );
  }
}

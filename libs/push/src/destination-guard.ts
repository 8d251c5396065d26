import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { classifyAddress } from './reserved-ranges';

/** The outcome of checking a webhook URL at registration: the parsed, normalised URL, or why it is refused. */
export type WebhookUrlCheck = { ok: true; url: URL } | { ok: false; reason: string };

/**
 * Checks a webhook URL when a config is registered (spec digest §10.10, ADR 0010 decision 8): an absolute
 * `http` or `https` URL with a host and without userinfo. Returns it as the WHATWG URL parser normalises it
 * (`href` is what to store and send to), which also turns decimal, octal and hexadecimal IPv4 forms
 * (`http://2130706433/`, `http://0x7f.1/`) into the dotted quad the send-time guard judges. Where the host
 * points is checked when sending, not here.
 */
export function checkWebhookUrl(url: string): WebhookUrlCheck {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { ok: false, reason: 'not an absolute URL' };
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    return { ok: false, reason: `scheme ${parsed.protocol.slice(0, -1)} is not http or https` };
  }
  if (parsed.username !== '' || parsed.password !== '') {
    return { ok: false, reason: 'credentials in the URL are not allowed; use authentication' };
  }
  if (parsed.hostname === '') {
    return { ok: false, reason: 'the URL has no host' };
  }
  return { ok: true, url: parsed };
}

/** Whether a tenant's allowlist admits connecting to `address` for `host`. */
export type DestinationPolicy = (host: string, address: string) => boolean;

/**
 * Why a socket may not connect to `address` (resolved from `host`, or `host` itself when it is an IP literal):
 * undefined when the address is globally reachable or the policy admits it.
 */
export function destinationRefusal(
  host: string,
  address: string,
  allows: DestinationPolicy,
): string | undefined {
  const refusal = classifyAddress(address);
  if (!refusal || allows(host, address)) {
    return undefined;
  }
  const { cidr, name, reference } = refusal.range;
  const carried = refusal.embeddedIpv4 === undefined ? '' : ` (carrying ${refusal.embeddedIpv4})`;
  const resolved = host === address ? '' : ` (resolved from ${host})`;
  return `${address}${carried}${resolved} is ${name} (${cidr}, ${reference}) and not in the allowlist`;
}

/** `code` of the error a guarded lookup fails with when it refuses a destination. */
export const DESTINATION_REFUSED = 'PUSH_DESTINATION_REFUSED';

/** A destination the guard refused; no socket was connected. */
export class DestinationRefusedError extends Error {
  readonly code = DESTINATION_REFUSED;

  constructor(readonly reason: string) {
    super(`destination refused: ${reason}`);
    this.name = 'DestinationRefusedError';
  }
}

/** `dns.lookup` with `all: true`: what the guard resolves host names with. */
export type Resolver = (
  hostname: string,
  options: { family?: number | 'IPv4' | 'IPv6'; hints?: number; all: true },
  callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

/** What `guardedLookup` checks against and whom it tells. */
export interface GuardedLookupOptions {
  allows: DestinationPolicy;
  /** Called with each address handed to the socket, right before it connects; if it throws, nothing connects. */
  onAddress?: (address: string) => void;
  /** Default: `dns.lookup`. */
  resolve?: Resolver;
}

/**
 * A `lookup` for `net.connect` / `http.Agent` options (ADR 0010 decision 8): resolves the host once, refuses
 * the connection if any address is reserved and not admitted by the policy (one internal address is enough to
 * mark the host as internal), and hands the socket exactly the addresses it checked, so nothing is resolved a
 * second time. Node does not call `lookup` for an IP literal: callers check literal hosts themselves.
 */
export function guardedLookup(options: GuardedLookupOptions): LookupFunction {
  const resolve: Resolver = options.resolve ?? dnsLookup;
  return (hostname, lookupOptions, callback) => {
    resolve(hostname, { ...lookupOptions, all: true }, (err, addresses) => {
      const first = addresses?.[0];
      if (err || !first) {
        callback(err ?? notFound(hostname), '');
        return;
      }
      for (const { address } of addresses) {
        const refusal = destinationRefusal(hostname, address, options.allows);
        if (refusal !== undefined) {
          callback(new DestinationRefusedError(refusal), '');
          return;
        }
      }
      const handed = lookupOptions.all ? addresses : [first];
      try {
        handed.forEach(({ address }) => options.onAddress?.(address));
      } catch (hookError) {
        callback(hookError as Error, '');
        return;
      }
      if (lookupOptions.all) {
        callback(null, addresses);
      } else {
        callback(null, first.address, first.family);
      }
    });
  };
}

function notFound(hostname: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
}

import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import {
  checkWebhookUrl,
  DESTINATION_REFUSED,
  destinationRefusal,
  guardedLookup,
  type DestinationPolicy,
  type Resolver,
} from './destination-guard';

const nothingAdmitted: DestinationPolicy = () => false;

describe('checkWebhookUrl (registration)', () => {
  it.each([
    ['https://hooks.example.com/a2a?x=1', 'https://hooks.example.com/a2a?x=1'],
    ['HTTP://Hooks.Example.COM:80/path', 'http://hooks.example.com/path'],
    ['https://hooks.example.com:443', 'https://hooks.example.com/'],
    ['http://[2001:db8::1]:8080/', 'http://[2001:db8::1]:8080/'],
    // The WHATWG parser turns every IPv4 spelling into the dotted quad the send-time guard judges.
    ['http://2130706433/', 'http://127.0.0.1/'],
    ['http://0177.0.0.1/', 'http://127.0.0.1/'],
    ['http://0x7f.1/', 'http://127.0.0.1/'],
    ['http://0x7f000001/', 'http://127.0.0.1/'],
    ['http://127.1/', 'http://127.0.0.1/'],
    ['http://127.0.0.1./', 'http://127.0.0.1/'],
    ['http://%31%32%37.0.0.1/', 'http://127.0.0.1/'],
    ['http://0/', 'http://0.0.0.0/'],
    ['http://[::ffff:127.0.0.1]/', 'http://[::ffff:7f00:1]/'],
  ])('accepts %s as %s', (url, normalised) => {
    const checked = checkWebhookUrl(url);
    expect(checked.ok && checked.url.href).toBe(normalised);
  });

  it.each([
    ['not a url', /not an absolute URL/],
    ['/relative/path', /not an absolute URL/],
    ['ftp://hooks.example.com/', /scheme ftp is not http or https/],
    ['file:///etc/passwd', /scheme file/],
    ['javascript:alert(1)', /scheme javascript/],
    ['gopher://127.0.0.1:6379/_FLUSHALL', /scheme gopher/],
    ['https://user:pass@hooks.example.com/', /credentials in the URL/],
    ['https://user@hooks.example.com/', /credentials in the URL/],
    ['http://256.1.1.1/', /not an absolute URL/],
    ['http://[fe80::1%25eth0]/', /not an absolute URL/],
    ['http://exa mple.com/', /not an absolute URL/],
  ])('refuses %s', (url, reason) => {
    const checked = checkWebhookUrl(url);
    expect(checked.ok).toBe(false);
    expect(!checked.ok && checked.reason).toMatch(reason);
  });
});

describe('destinationRefusal', () => {
  it('explains a refusal with the address, its block and its source', () => {
    expect(destinationRefusal('127.0.0.1', '127.0.0.1', nothingAdmitted)).toBe(
      '127.0.0.1 is loopback (127.0.0.0/8, RFC 1122 §3.2.1.3) and not in the allowlist',
    );
    expect(destinationRefusal('metadata.internal', '::ffff:a9fe:a9fe', nothingAdmitted)).toMatch(
      /^::ffff:a9fe:a9fe \(carrying 169\.254\.169\.254\) \(resolved from metadata\.internal\) is cloud metadata/,
    );
  });

  it('lets through a public address, and a reserved one the policy admits', () => {
    expect(
      destinationRefusal('hooks.example.com', '93.184.216.34', nothingAdmitted),
    ).toBeUndefined();
    const admits: DestinationPolicy = (host, address) =>
      host === 'hooks.internal' && address === '10.0.0.5';
    expect(destinationRefusal('hooks.internal', '10.0.0.5', admits)).toBeUndefined();
    expect(destinationRefusal('hooks.internal', '10.0.0.6', admits)).toMatch(/private/);
  });
});

/** A resolver that answers from a table, as `dns.lookup` with `all: true` would. */
function resolverOf(table: Record<string, string[]>): Resolver {
  return (hostname, _options, callback) => {
    const addresses = table[hostname];
    if (!addresses) {
      callback(
        Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }),
        [],
      );
      return;
    }
    callback(
      null,
      addresses.map(
        (address): LookupAddress => ({ address, family: address.includes(':') ? 6 : 4 }),
      ),
    );
  };
}

interface LookupOutcome {
  err: NodeJS.ErrnoException | null;
  address: string | LookupAddress[];
  family?: number;
}

function lookup(
  hostname: string,
  all: boolean,
  options: Parameters<typeof guardedLookup>[0],
): Promise<LookupOutcome> {
  return new Promise((resolve) =>
    guardedLookup(options)(hostname, { all }, (err, address, family) =>
      resolve({ err, address, family }),
    ),
  );
}

describe('guardedLookup', () => {
  const resolve = resolverOf({
    'hooks.example.com': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
    localhost: ['127.0.0.1', '::1'],
    'rebinding.example': ['93.184.216.34', '10.0.0.1'],
    'metadata.example': ['169.254.169.254'],
    'empty.example': [],
  });

  it('hands the socket exactly the addresses it checked, one or all', async () => {
    const dialled: string[] = [];
    const options = { allows: nothingAdmitted, resolve, onAddress: (a: string) => dialled.push(a) };
    expect(await lookup('hooks.example.com', false, options)).toStrictEqual({
      err: null,
      address: '93.184.216.34',
      family: 4,
    });
    expect(await lookup('hooks.example.com', true, options)).toStrictEqual({
      err: null,
      address: [
        { address: '93.184.216.34', family: 4 },
        { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 },
      ],
      family: undefined,
    });
    expect(dialled).toStrictEqual([
      '93.184.216.34',
      '93.184.216.34',
      '2606:2800:220:1:248:1893:25c8:1946',
    ]);
  });

  it.each([
    ['localhost', /127\.0\.0\.1 \(resolved from localhost\) is loopback/],
    ['rebinding.example', /10\.0\.0\.1 \(resolved from rebinding\.example\) is private/],
    ['metadata.example', /cloud metadata/],
  ])('refuses %s before anything connects', async (hostname, reason) => {
    const dialled: string[] = [];
    const outcome = await lookup(hostname, true, {
      allows: nothingAdmitted,
      resolve,
      onAddress: (a) => dialled.push(a),
    });
    expect(outcome.err?.code).toBe(DESTINATION_REFUSED);
    expect(outcome.err?.message).toMatch(reason);
    expect(dialled).toStrictEqual([]);
  });

  it('lets an allowlisted host name reach its reserved addresses', async () => {
    const outcome = await lookup('localhost', false, {
      allows: (host) => host === 'localhost',
      resolve,
    });
    expect(outcome).toMatchObject({ err: null, address: '127.0.0.1' });
  });

  it('passes resolver failures on, and treats an empty answer as not found', async () => {
    expect(
      (await lookup('nowhere.example', false, { allows: nothingAdmitted, resolve })).err?.code,
    ).toBe('ENOTFOUND');
    expect(
      (await lookup('empty.example', true, { allows: nothingAdmitted, resolve })).err?.code,
    ).toBe('ENOTFOUND');
  });

  it('connects nothing when the dial hook throws', async () => {
    const outcome = await lookup('hooks.example.com', false, {
      allows: nothingAdmitted,
      resolve,
      onAddress: () => {
        throw new Error('tripwire');
      },
    });
    expect(outcome.err?.message).toBe('tripwire');
  });

  it('resolves with dns.lookup by default: localhost is loopback and refused', async () => {
    const outcome = await lookup('localhost', true, { allows: nothingAdmitted });
    expect(outcome.err?.code).toBe(DESTINATION_REFUSED);
  });
});

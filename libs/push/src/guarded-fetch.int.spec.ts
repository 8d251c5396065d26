import type { LookupAddress } from 'node:dns';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DESTINATION_REFUSED, type Resolver } from './destination-guard';
import { guardedFetch, type GuardedFetchOptions } from './guarded-fetch';
import { isLoopbackAddress } from './reserved-ranges';

/** A server on 127.0.0.1 that counts its connections; the only address these tests may ever dial. */
let server: http.Server;
let port: number;
let connections = 0;
const paths: string[] = [];

function handle(req: IncomingMessage, res: ServerResponse): void {
  paths.push(req.url ?? '');
  switch (req.url ?? '') {
    case '/keys':
      res
        .writeHead(200, {
          'content-type': 'application/json',
          'x-seen-accept': req.headers.accept ?? '',
        })
        .end('{"keys":[]}');
      return;
    case '/moved':
      res.writeHead(302, { location: `http://127.0.0.1:${port}/keys` }).end();
      return;
    case '/large':
      res.writeHead(200).end('x'.repeat(10_000));
      return;
    case '/stall':
      return;
    default:
      res.writeHead(404).end();
  }
}

/** Every address and port handed to a socket. */
const dials: string[] = [];
const loopbackOnly = (_host: string, address: string): boolean => isLoopbackAddress(address);

function fetcher(overrides: Partial<GuardedFetchOptions> = {}) {
  return guardedFetch({
    allows: loopbackOnly,
    bodyLimitBytes: 4_096,
    // Longer than any loopback fetch may take on a busy machine: only a test's own timeout ends a request.
    timeoutMs: 15_000,
    onDial: (address, to) => dials.push(`${address}:${to}`),
    ...overrides,
  });
}

/** A resolver that answers `addresses` for every name and counts its calls. */
function resolverOf(...addresses: string[]): Resolver & { calls: number } {
  const answer: LookupAddress[] = addresses.map((address) => ({
    address,
    family: address.includes(':') ? 6 : 4,
  }));
  const resolve = ((_name, _options, callback) => {
    resolve.calls += 1;
    setImmediate(() => callback(null, answer));
  }) as Resolver & { calls: number };
  resolve.calls = 0;
  return resolve;
}

beforeAll(async () => {
  server = http.createServer(handle);
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('guardedFetch', () => {
  it('fetches from an admitted address: status, headers and body, the request headers sent', async () => {
    dials.length = 0;
    const response = await fetcher()(`http://127.0.0.1:${port}/keys`, {
      headers: new Headers({ accept: 'application/jwk-set+json' }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-seen-accept')).toBe('application/jwk-set+json');
    expect(await response.json()).toStrictEqual({ keys: [] });
    expect(dials).toStrictEqual([`127.0.0.1:${port}`]);
  });

  it('resolves a host name once and dials exactly the address it checked', async () => {
    dials.length = 0;
    const resolve = resolverOf('127.0.0.1');
    const response = await fetcher({ resolve })(`http://jwks.example:${port}/keys`);
    expect(response.status).toBe(200);
    expect(resolve.calls).toBe(1);
    expect(dials).toStrictEqual([`127.0.0.1:${port}`]);
  });

  it('refuses a name with any reserved address it may not reach, connecting nowhere', async () => {
    dials.length = 0;
    const before = connections;
    const resolve = resolverOf('93.184.215.14', '10.1.2.3');
    const refused: unknown = await fetcher({ resolve })(`http://jwks.example:${port}/keys`).catch(
      (err: unknown) => err,
    );
    expect(refused).toMatchObject({
      code: DESTINATION_REFUSED,
      message: expect.stringMatching(/10\.1\.2\.3 \(resolved from jwks\.example\) is private/),
    });
    expect(resolve.calls).toBe(1);
    expect(dials).toStrictEqual([]);
    expect(connections).toBe(before);
  });

  it('refuses a reserved IP literal the policy does not admit before anything connects', async () => {
    dials.length = 0;
    const before = connections;
    const strict = fetcher({ allows: undefined });
    for (const url of [
      `http://127.0.0.1:${port}/keys`,
      `http://[::ffff:127.0.0.1]:${port}/keys`,
      'http://169.254.169.254/latest/meta-data/',
    ]) {
      await expect(strict(url), url).rejects.toMatchObject({ code: DESTINATION_REFUSED });
    }
    expect(dials).toStrictEqual([]);
    expect(connections).toBe(before);
  });

  it('returns a redirect without following it', async () => {
    paths.length = 0;
    const response = await fetcher()(`http://127.0.0.1:${port}/moved`);
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe(`http://127.0.0.1:${port}/keys`);
    expect(paths).toStrictEqual(['/moved']);
  });

  it('fails on a body over the cap', async () => {
    await expect(fetcher()(`http://127.0.0.1:${port}/large`)).rejects.toThrow(
      'the response body exceeds 4096 bytes',
    );
    const roomy = await fetcher({ bodyLimitBytes: 10_000 })(`http://127.0.0.1:${port}/large`);
    expect((await roomy.text()).length).toBe(10_000);
  });

  it('gives up after its timeout, or when the caller aborts', async () => {
    await expect(
      fetcher({ timeoutMs: 200 })(`http://127.0.0.1:${port}/stall`),
    ).rejects.toMatchObject({ name: 'TimeoutError' });
    const caller = new AbortController();
    const pending = fetcher()(`http://127.0.0.1:${port}/stall`, { signal: caller.signal });
    caller.abort(new Error('the caller gave up'));
    await expect(pending).rejects.toThrow('the caller gave up');
  });

  it('fetches only http and https', async () => {
    await expect(fetcher()('file:///etc/passwd')).rejects.toThrow(/only http and https/);
    await expect(fetcher()(`gopher://127.0.0.1:${port}/`)).rejects.toThrow(/only http and https/);
  });
});

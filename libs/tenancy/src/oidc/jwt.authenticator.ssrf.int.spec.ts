/**
 * JWKS URLs are chosen by tenant admins, so the authenticator fetches them through the webhook SSRF guard
 * (`@lib/push` guardedFetch): a URL that leads to a reserved address is refused before anything connects,
 * as a rejection that is not worth retrying (the ingress answers it UNAUTHENTICATED, HTTP 401), and loopback
 * is reachable only with the loopback allowance (OIDC_ALLOW_INSECURE_LOOPBACK) of local identity providers.
 */
import type { JWTPayload } from 'jose';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JwtAuthenticator } from './jwt.authenticator';
import { JwtRejected } from './jwt.errors';
import { validateOidcIssuer, type OidcIssuer } from './oidc-issuer';
import { JwksTestServer, mintToken, testSigningKey, type TestSigningKey } from './testing';

const ISSUER = 'https://idp.example';
const AUDIENCE = 'api://a2a-platform';
const claims: JWTPayload = { iss: ISSUER, aud: AUDIENCE, sub: 'alice' };

/** The definition an admin API running with OIDC_ALLOW_INSECURE_LOOPBACK would have stored. */
function issuerAt(jwksUrl: string): OidcIssuer {
  const result = validateOidcIssuer(
    { issuer: ISSUER, audience: AUDIENCE, jwksUrl },
    { allowInsecureLoopback: true },
  );
  if (!result.ok) {
    throw new Error(JSON.stringify(result.errors));
  }
  return result.issuer;
}

/** The rejection `verify` ends with (it must end with one). */
async function rejected(
  authenticator: JwtAuthenticator,
  token: string,
  issuer: OidcIssuer,
): Promise<JwtRejected> {
  const outcome: unknown = await authenticator.verify(token, [issuer]).then(
    () => new Error('the token was accepted'),
    (err: unknown) => err,
  );
  expect(outcome).toBeInstanceOf(JwtRejected);
  return outcome as JwtRejected;
}

describe('JwtAuthenticator: JWKS URLs go through the SSRF guard', () => {
  let key: TestSigningKey;
  let idp: JwksTestServer;
  let token: string;

  beforeAll(async () => {
    key = await testSigningKey('ES256');
    idp = await JwksTestServer.start([key]);
    token = await mintToken(key, claims);
  });

  afterAll(async () => {
    await idp.stop();
  });

  it('refuses a JWKS URL that leads to loopback without the loopback allowance, fetching nothing', async () => {
    const port = new URL(idp.url).port;
    const authenticator = new JwtAuthenticator();
    for (const url of [
      idp.url,
      // A host name resolving to loopback, and loopback in IPv4-mapped IPv6 form.
      `http://localhost:${port}/.well-known/jwks.json`,
      `https://[::ffff:127.0.0.1]:${port}/.well-known/jwks.json`,
      `https://localhost:${port}/.well-known/jwks.json`,
    ]) {
      const rejection = await rejected(authenticator, token, issuerAt(url));
      expect(rejection, url).toMatchObject({ reason: 'jwks-refused', issuer: ISSUER });
      // Not retryable: the ingress answers UNAUTHENTICATED (HTTP 401), not UNAVAILABLE.
      expect(rejection.retryable).toBe(false);
      expect(rejection.message).not.toContain(port);
      expect((rejection.cause as Error).message).toMatch(/loopback .*not in the allowlist/);
    }
    expect(idp.requests).toBe(0);
  });

  it('with the loopback allowance fetches from loopback, and still from nothing else reserved', async () => {
    const local = new JwtAuthenticator({ allowInsecureLoopback: true });
    await expect(local.verify(token, [issuerAt(idp.url)])).resolves.toMatchObject({
      subject: 'alice',
    });
    expect(idp.requests).toBe(1);
    for (const url of [
      'https://10.20.30.40/jwks.json',
      'https://192.168.1.1/jwks.json',
      'https://169.254.169.254/latest/meta-data/jwks',
      'https://[fd00:ec2::254]/jwks',
      'https://[::ffff:10.0.0.1]/jwks',
      'https://0.0.0.0/jwks',
    ]) {
      // Refused before any connection: a dial to these would end in a timeout, jwks-unavailable.
      const rejection = await rejected(local, token, issuerAt(url));
      expect(rejection.reason, url).toBe('jwks-refused');
    }
  });

  it('does not follow a redirect, to loopback or anywhere', async () => {
    const redirecting: Server = createServer((_req, res) => {
      res.writeHead(302, { location: idp.url }).end();
    });
    await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', () => resolve()));
    try {
      const { port } = redirecting.address() as AddressInfo;
      const before = idp.requests;
      const local = new JwtAuthenticator({ allowInsecureLoopback: true });
      const rejection = await rejected(local, token, issuerAt(`http://127.0.0.1:${port}/jwks`));
      expect(rejection.reason).toBe('jwks-unavailable');
      expect(idp.requests).toBe(before);
    } finally {
      redirecting.closeAllConnections();
      await new Promise<void>((resolve) => redirecting.close(() => resolve()));
    }
  });

  it('refuses a JWK Set larger than its cap', async () => {
    const large = await JwksTestServer.start([
      key,
      ...(await Promise.all(Array.from({ length: 8 }, () => testSigningKey('RS256')))),
    ]);
    try {
      const capped = new JwtAuthenticator({
        allowInsecureLoopback: true,
        jwksBodyLimitBytes: 2_048,
      });
      const rejection = await rejected(capped, token, issuerAt(large.url));
      expect(rejection.reason).toBe('jwks-unavailable');
      expect(String((rejection.cause as Error).message)).toMatch(/exceeds 2048 bytes/);
      const roomy = new JwtAuthenticator({ allowInsecureLoopback: true });
      await expect(roomy.verify(token, [issuerAt(large.url)])).resolves.toMatchObject({
        subject: 'alice',
      });
    } finally {
      await large.stop();
    }
  });
});

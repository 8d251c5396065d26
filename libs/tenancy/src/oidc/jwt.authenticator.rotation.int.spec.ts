import type { JWTPayload } from 'jose';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { JwtAuthenticator, type JwtAuthenticatorOptions } from './jwt.authenticator';
import { JwtRejected, type JwtRejectionReason } from './jwt.errors';
import { validateOidcIssuer, type OidcIssuer } from './oidc-issuer';
import { JwksTestServer, mintToken, testSigningKey } from './testing';

/** An authenticator as OIDC_ALLOW_INSECURE_LOOPBACK makes it: the test identity providers are on 127.0.0.1. */
const loopbackAuthenticator = (options: JwtAuthenticatorOptions = {}): JwtAuthenticator =>
  new JwtAuthenticator({ allowInsecureLoopback: true, ...options });

const ISSUER = 'https://idp.example';
const AUDIENCE = 'api://a2a-platform';
const claims: JWTPayload = { iss: ISSUER, aud: AUDIENCE, sub: 'alice' };

function issuerAt(server: JwksTestServer): OidcIssuer {
  const result = validateOidcIssuer(
    { issuer: ISSUER, audience: AUDIENCE, jwksUrl: server.url },
    { allowInsecureLoopback: true },
  );
  if (!result.ok) {
    throw new Error(JSON.stringify(result.errors));
  }
  return result.issuer;
}

async function rejection(
  authenticator: JwtAuthenticator,
  token: string,
  issuers: readonly OidcIssuer[],
): Promise<JwtRejectionReason> {
  const err: unknown = await authenticator.verify(token, issuers).then(
    () => new Error('the token was accepted'),
    (rejected: unknown) => rejected,
  );
  expect(err).toBeInstanceOf(JwtRejected);
  return (err as JwtRejected).reason;
}

describe('JwtAuthenticator: keys rotate and providers fail without a restart', () => {
  const servers: JwksTestServer[] = [];
  const start = async (...args: Parameters<typeof JwksTestServer.start>) => {
    const server = await JwksTestServer.start(...args);
    servers.push(server);
    return server;
  };

  afterEach(async () => {
    vi.useRealTimers();
    await Promise.all(servers.splice(0).map((server) => server.stop()));
  });

  /**
   * The cooldown and the maximum age of a key set count from `Date.now()`: on a clock of the test's own (timers
   * and sockets stay real), every step happens at the same instant until the test moves the clock on.
   */
  const ownClock = (): void => {
    vi.useFakeTimers({ toFake: ['Date'] });
  };

  it('accepts a key rotated in at the JWKS URL once the cooldown has passed', async () => {
    const [oldKey, newKey] = await Promise.all([testSigningKey('ES256'), testSigningKey('RS256')]);
    const idp = await start([oldKey]);
    const issuer = issuerAt(idp);
    ownClock();
    const authenticator = loopbackAuthenticator({ jwksCooldownMs: 1_000 });
    await authenticator.verify(await mintToken(oldKey, claims), [issuer]);
    expect(idp.requests).toBe(1);

    idp.publish(newKey);
    const rotated = await mintToken(newKey, claims);
    // Within the cooldown an unknown kid does not make the set be fetched again.
    expect(await rejection(authenticator, rotated, [issuer])).toBe('bad-signature');
    expect(idp.requests).toBe(1);

    vi.advanceTimersByTime(1_000);
    const verified = await authenticator.verify(rotated, [issuer]);
    expect(verified.subject).toBe('alice');
    expect(idp.requests).toBe(2);
    // The set just fetched no longer has the old key.
    expect(await rejection(authenticator, await mintToken(oldKey, claims), [issuer])).toBe(
      'bad-signature',
    );
  });

  it('keeps accepting a removed key until the cached set reaches its maximum age', async () => {
    const [oldKey, newKey] = await Promise.all([testSigningKey('ES256'), testSigningKey('ES256')]);
    const idp = await start([oldKey]);
    const issuer = issuerAt(idp);
    ownClock();
    const authenticator = loopbackAuthenticator({ jwksCacheMaxAgeMs: 500 });
    const token = await mintToken(oldKey, claims);
    await authenticator.verify(token, [issuer]);

    idp.publish(newKey);
    await expect(authenticator.verify(token, [issuer])).resolves.toMatchObject({
      subject: 'alice',
    });
    expect(idp.requests).toBe(1);

    vi.advanceTimersByTime(500);
    expect(await rejection(authenticator, token, [issuer])).toBe('bad-signature');
    expect(idp.requests).toBe(2);
  });

  it('serves cached keys while the provider is down, and says jwks-unavailable for what needs a fetch', async () => {
    const [key, rotated] = await Promise.all([testSigningKey('ES256'), testSigningKey('ES256')]);
    const idp = await JwksTestServer.start([key]);
    const issuer = issuerAt(idp);
    const authenticator = loopbackAuthenticator({ jwksCooldownMs: 0 });
    const token = await mintToken(key, claims);
    await authenticator.verify(token, [issuer]);
    await idp.stop();

    await expect(authenticator.verify(token, [issuer])).resolves.toMatchObject({
      subject: 'alice',
    });
    const unknownKid = await mintToken(rotated, claims);
    const err: unknown = await authenticator.verify(unknownKid, [issuer]).catch((e: unknown) => e);
    expect(err).toMatchObject({ reason: 'jwks-unavailable', retryable: true, issuer: ISSUER });
    expect((err as JwtRejected).cause).toBeDefined();
    expect(await rejection(loopbackAuthenticator(), token, [issuer])).toBe('jwks-unavailable');
  });

  it('an error status, a redirect, or a published key that cannot be used is jwks-unavailable', async () => {
    const key = await testSigningKey('ES256');
    const idp = await start([key]);
    const issuer = issuerAt(idp);
    const token = await mintToken(key, claims);
    idp.answerWith({ status: 503 });
    expect(await rejection(loopbackAuthenticator(), token, [issuer])).toBe('jwks-unavailable');
    idp.answerWith({ status: 302 });
    expect(await rejection(loopbackAuthenticator(), token, [issuer])).toBe('jwks-unavailable');
    idp.answerWith('keys');
    idp.publish({ publicJwk: { kty: 'EC', kid: key.kid, crv: 'P-256', x: 'AA', y: 'AA' } });
    expect(await rejection(loopbackAuthenticator(), token, [issuer])).toBe('jwks-unavailable');
  });

  it('a provider that does not answer is jwks-unavailable after the fetch timeout', async () => {
    const key = await testSigningKey('ES256');
    const idp = await start([key]);
    idp.answerWith('stall');
    const authenticator = loopbackAuthenticator({ jwksTimeoutMs: 300 });
    const err: unknown = await authenticator
      .verify(await mintToken(key, claims), [issuerAt(idp)])
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ reason: 'jwks-unavailable', issuer: ISSUER });
    // Only the timeout ends a fetch that gets no answer.
    expect((err as JwtRejected).cause).toMatchObject({ code: 'ERR_JWKS_TIMEOUT' });
  });

  it('recovers without a restart once the provider answers again', async () => {
    const key = await testSigningKey('ES256');
    const idp = await start([key]);
    const issuer = issuerAt(idp);
    const authenticator = loopbackAuthenticator();
    const token = await mintToken(key, claims);
    idp.answerWith({ status: 500 });
    expect(await rejection(authenticator, token, [issuer])).toBe('jwks-unavailable');
    idp.answerWith('keys');
    await expect(authenticator.verify(token, [issuer])).resolves.toMatchObject({
      subject: 'alice',
    });
  });
});

import { exportSPKI, SignJWT, type JWTPayload } from 'jose';
import { generateKeyPairSync, sign } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { JwtAuthenticator, type JwtAuthenticatorOptions } from './jwt.authenticator';
import { JwtRejected, type JwtRejectionReason } from './jwt.errors';
import { validateOidcIssuer, type OidcIssuer } from './oidc-issuer';
import {
  JwksTestServer,
  mintToken,
  testSigningKey,
  unsecuredToken,
  type TestSigningKey,
} from './testing';

/** An authenticator as OIDC_ALLOW_INSECURE_LOOPBACK makes it: the test identity providers are on 127.0.0.1. */
const loopbackAuthenticator = (options: JwtAuthenticatorOptions = {}): JwtAuthenticator =>
  new JwtAuthenticator({ allowInsecureLoopback: true, ...options });

const ISSUER_A = 'https://idp-a.example/realms/one';
const ISSUER_B = 'https://idp-b.example';
const AUDIENCE = 'api://a2a-platform';

/** An issuer definition as the admin API stores it, pointing at a local JWKS server. */
function issuerAt(
  server: JwksTestServer,
  issuer: string,
  extra: Record<string, unknown> = {},
): OidcIssuer {
  const result = validateOidcIssuer(
    { issuer, audience: AUDIENCE, jwksUrl: server.url, ...extra },
    { allowInsecureLoopback: true },
  );
  if (!result.ok) {
    throw new Error(JSON.stringify(result.errors));
  }
  return result.issuer;
}

const now = (): number => Math.floor(Date.now() / 1000);

/** The reason `token` is refused for, after checking the message tells the client nothing of the token. */
async function rejection(
  authenticator: JwtAuthenticator,
  token: string,
  issuers: readonly OidcIssuer[],
): Promise<JwtRejectionReason> {
  try {
    await authenticator.verify(token, issuers);
  } catch (err) {
    expect(err).toBeInstanceOf(JwtRejected);
    const rejected = err as JwtRejected;
    for (const part of token.split('.').filter((p) => p.length > 8)) {
      expect(rejected.message).not.toContain(part);
    }
    return rejected.reason;
  }
  throw new Error('the token was accepted');
}

describe('JwtAuthenticator against a JWKS served over HTTP', () => {
  let keyA: TestSigningKey;
  let idpA: JwksTestServer;
  let idpB: JwksTestServer;
  let issuerA: OidcIssuer;
  let issuerB: OidcIssuer;
  let authenticator: JwtAuthenticator;

  const claims = (extra: JWTPayload = {}): JWTPayload => ({
    iss: ISSUER_A,
    aud: AUDIENCE,
    sub: 'alice',
    ...extra,
  });

  beforeAll(async () => {
    keyA = await testSigningKey('ES256');
    idpA = await JwksTestServer.start([keyA]);
    idpB = await JwksTestServer.start([await testSigningKey('ES256')]);
    issuerA = issuerAt(idpA, ISSUER_A, {
      scopeMap: { 'a2a.read': ['task:read'], 'a2a.write': ['task:read', 'task:write'] },
    });
    issuerB = issuerAt(idpB, ISSUER_B);
    authenticator = loopbackAuthenticator();
  });

  afterAll(async () => {
    await idpA.stop();
    await idpB.stop();
  });

  it('accepts a valid token: namespaced principal, subject, mapped scopes, expiry', async () => {
    const exp = now() + 120;
    const token = await mintToken(keyA, claims({ exp, scope: 'a2a.write openid' }));
    const verified = await authenticator.verify(token, [issuerB, issuerA]);
    expect(verified).toStrictEqual({
      issuer: issuerA,
      principalId: `oidc:${ISSUER_A}#alice`,
      scopes: ['task:read', 'task:write'],
      expiresAt: new Date(exp * 1000),
      subject: 'alice',
    });
  });

  it('accepts each default algorithm: RS256, PS256, ES256, EdDSA', async () => {
    const keys = await Promise.all(
      (['RS256', 'PS256', 'ES256', 'EdDSA'] as const).map((alg) => testSigningKey(alg)),
    );
    const idp = await JwksTestServer.start(keys);
    try {
      const issuer = issuerAt(idp, ISSUER_A);
      for (const key of keys) {
        const verified = await authenticator.verify(await mintToken(key, claims()), [issuer]);
        expect(verified.subject).toBe('alice');
      }
      expect(idp.requests).toBe(1);
    } finally {
      await idp.stop();
    }
  });

  it('rejects an expired token, and accepts one expired within the 30 s clock tolerance', async () => {
    const expired = await mintToken(keyA, claims({ exp: now() - 60 }));
    expect(await rejection(authenticator, expired, [issuerA])).toBe('expired');
    const skewed = await mintToken(keyA, claims({ exp: now() - 10 }));
    await expect(authenticator.verify(skewed, [issuerA])).resolves.toMatchObject({
      subject: 'alice',
    });
  });

  it('rejects a token not valid yet, and accepts one whose nbf is within the tolerance', async () => {
    const early = await mintToken(keyA, claims({ nbf: now() + 120 }));
    expect(await rejection(authenticator, early, [issuerA])).toBe('not-yet-valid');
    const skewed = await mintToken(keyA, claims({ nbf: now() + 10 }));
    await expect(authenticator.verify(skewed, [issuerA])).resolves.toMatchObject({
      subject: 'alice',
    });
  });

  it('honours a tighter clock tolerance', async () => {
    const strict = loopbackAuthenticator({ clockToleranceSeconds: 0 });
    const skewed = await mintToken(keyA, claims({ exp: now() - 10 }));
    expect(await rejection(strict, skewed, [issuerA])).toBe('expired');
  });

  it('rejects a token for another audience, or without one', async () => {
    const other = await mintToken(keyA, claims({ aud: ['api://other', 'api://else'] }));
    expect(await rejection(authenticator, other, [issuerA])).toBe('wrong-audience');
    const none = await mintToken(keyA, claims({ aud: undefined }));
    expect(await rejection(authenticator, none, [issuerA])).toBe('missing-claim');
    const listed = await mintToken(keyA, claims({ aud: ['api://other', AUDIENCE] }));
    await expect(authenticator.verify(listed, [issuerA])).resolves.toMatchObject({
      subject: 'alice',
    });
  });

  it('rejects a token whose issuer differs from the configured one, even by a trailing slash', async () => {
    const before = idpA.requests;
    const token = await mintToken(keyA, claims({ iss: `${ISSUER_A}/` }));
    expect(await rejection(authenticator, token, [issuerA])).toBe('unknown-issuer');
    expect(idpA.requests).toBe(before);
  });

  it('rejects an issuer the tenant does not trust without contacting anything', async () => {
    const before = [idpA.requests, idpB.requests];
    const token = await mintToken(keyA, claims({ iss: 'https://evil.example' }));
    expect(await rejection(authenticator, token, [issuerA, issuerB])).toBe('unknown-issuer');
    expect(await rejection(authenticator, await mintToken(keyA, claims()), [])).toBe(
      'unknown-issuer',
    );
    expect([idpA.requests, idpB.requests]).toStrictEqual(before);
  });

  it('rejects a valid signature by a key that is not published under the same kid', async () => {
    const impostor = await testSigningKey('ES256', keyA.kid);
    const token = await mintToken(impostor, claims());
    expect(await rejection(authenticator, token, [issuerA])).toBe('bad-signature');
  });

  it('rejects a key under another kid; made-up kids refetch at most once per cooldown', async () => {
    // The cooldown (1 s) counts from `Date.now()`: on a clock of the test's own, all the made-up kids come
    // within one cooldown however long they take (timers and sockets stay real).
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const fresh = loopbackAuthenticator();
      await fresh.verify(await mintToken(keyA, claims()), [issuerA]);
      const before = idpA.requests;
      vi.advanceTimersByTime(1_000);
      const strangers = await Promise.all(
        Array.from({ length: 10 }, () => testSigningKey('ES256')),
      );
      const reasons = await Promise.all(
        strangers.map(async (key) => rejection(fresh, await mintToken(key, claims()), [issuerA])),
      );
      expect(new Set(reasons)).toStrictEqual(new Set(['bad-signature']));
      expect(idpA.requests - before).toBe(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it('rejects an unsigned token (alg "none")', async () => {
    const token = unsecuredToken(claims({ exp: now() + 60 }));
    expect(token.endsWith('.')).toBe(true);
    expect(await rejection(authenticator, token, [issuerA])).toBe('unsupported-algorithm');
  });

  it('rejects HS256 signed with the public key as the secret (algorithm confusion)', async () => {
    const pem = await exportSPKI(keyA.publicKey);
    for (const secret of [pem, JSON.stringify(keyA.publicJwk)]) {
      const token = await new SignJWT(claims({ exp: now() + 60 }))
        .setProtectedHeader({ alg: 'HS256', kid: keyA.kid })
        .sign(new TextEncoder().encode(secret));
      expect(await rejection(authenticator, token, [issuerA])).toBe('unsupported-algorithm');
    }
  });

  it('rejects an algorithm the authenticator was not configured with', async () => {
    const esOnly = loopbackAuthenticator({ algorithms: ['ES256'] });
    const rsa = await testSigningKey('RS256');
    const idp = await JwksTestServer.start([rsa]);
    try {
      const token = await mintToken(rsa, claims());
      expect(await rejection(esOnly, token, [issuerAt(idp, ISSUER_A)])).toBe(
        'unsupported-algorithm',
      );
      expect(idp.requests).toBe(0);
    } finally {
      await idp.stop();
    }
  });

  it('refuses to be configured with none, HMAC or no algorithm at all', () => {
    for (const algorithms of [['none'], ['HS256'], ['ES256', 'HS512'], []]) {
      expect(() => new JwtAuthenticator({ algorithms: algorithms as ['ES256'] })).toThrow(
        /non-empty subset/,
      );
    }
    expect(() => new JwtAuthenticator({ jwksCooldownMs: -1 })).toThrow(/non-negative integer/);
  });

  it('maps scopes from a space-separated string and from an array through the scope map', async () => {
    const fromString = await mintToken(keyA, claims({ scope: 'openid a2a.read email' }));
    expect((await authenticator.verify(fromString, [issuerA])).scopes).toStrictEqual(['task:read']);
    const scp = issuerAt(idpA, ISSUER_A, {
      scopesClaim: 'scp',
      scopeMap: { 'a2a.read': ['task:read'], 'a2a.write': ['task:write'] },
    });
    const fromArray = await mintToken(keyA, claims({ scp: ['a2a.write', 'a2a.read', 'profile'] }));
    expect((await authenticator.verify(fromArray, [scp])).scopes).toStrictEqual([
      'task:write',
      'task:read',
    ]);
    const without = await mintToken(keyA, claims());
    expect((await authenticator.verify(without, [issuerA])).scopes).toStrictEqual([]);
    const wrongShape = await mintToken(keyA, claims({ scope: { read: true } }));
    expect(await rejection(authenticator, wrongShape, [issuerA])).toBe('malformed');
  });

  it('takes the principal from the configured claim', async () => {
    const oid = issuerAt(idpA, ISSUER_A, { principalClaim: 'oid' });
    const token = await mintToken(keyA, claims({ oid: '00000000-0000-4000-8000-000000000001' }));
    const verified = await authenticator.verify(token, [oid]);
    expect(verified.principalId).toBe(`oidc:${ISSUER_A}#00000000-0000-4000-8000-000000000001`);
    expect(await rejection(authenticator, await mintToken(keyA, claims()), [oid])).toBe(
      'missing-claim',
    );
  });

  it('rejects a token without sub, with an unusable sub, or without exp', async () => {
    for (const sub of [undefined, '', 42]) {
      const token = await mintToken(keyA, claims({ sub: sub as string }));
      expect(await rejection(authenticator, token, [issuerA])).toBe('missing-claim');
    }
    const forever = await mintToken(keyA, claims(), { expiresInSeconds: null });
    expect(await rejection(authenticator, forever, [issuerA])).toBe('missing-claim');
    await expect(authenticator.verify(forever, [issuerA])).rejects.toThrow(
      'the bearer token lacks a required claim ("exp")',
    );
  });

  it("rejects a token signed with issuer A's key that claims to come from issuer B", async () => {
    const token = await mintToken(keyA, claims({ iss: ISSUER_B }));
    expect(await rejection(authenticator, token, [issuerA, issuerB])).toBe('bad-signature');
  });

  it('rejects what is not a compact JWS, or longer than the limit', async () => {
    const valid = await mintToken(keyA, claims());
    const [header, payload] = valid.split('.');
    for (const token of ['', 'garbage', 'a.b.c', `${header}.${payload}`, `${valid}.x.y`]) {
      expect(await rejection(authenticator, token, [issuerA])).toBe('malformed');
    }
    const short = loopbackAuthenticator({ maxTokenLength: valid.length - 1 });
    expect(await rejection(short, valid, [issuerA])).toBe('malformed');
  });

  it('without a kid, tries each key of the type the JWKS publishes', async () => {
    const [first, second] = await Promise.all([testSigningKey('ES256'), testSigningKey('ES256')]);
    const idp = await JwksTestServer.start([first, second]);
    try {
      const issuer = issuerAt(idp, ISSUER_A);
      const token = await mintToken(second, claims(), { kid: null });
      await expect(authenticator.verify(token, [issuer])).resolves.toMatchObject({
        subject: 'alice',
      });
      const stranger = await mintToken(await testSigningKey('ES256'), claims(), { kid: null });
      expect(await rejection(authenticator, stranger, [issuer])).toBe('bad-signature');
    } finally {
      await idp.stop();
    }
  });

  it('rejects a token verified by an RSA key shorter than 2048 bits', async () => {
    const weak = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const kid = 'weak';
    const idp = await JwksTestServer.start([
      { publicJwk: { ...weak.publicKey.export({ format: 'jwk' }), kid, alg: 'RS256' } },
    ]);
    try {
      // Signed by hand: jose refuses to sign with such a key as well.
      const part = (value: object): string =>
        Buffer.from(JSON.stringify(value)).toString('base64url');
      const input = `${part({ alg: 'RS256', kid })}.${part(claims({ exp: now() + 60 }))}`;
      const signature = sign('sha256', Buffer.from(input), weak.privateKey).toString('base64url');
      const token = `${input}.${signature}`;
      const issuer = issuerAt(idp, ISSUER_A);
      expect(await rejection(authenticator, token, [issuer])).toBe('bad-signature');
      const err = await authenticator.verify(token, [issuer]).catch((e: unknown) => e);
      expect((err as JwtRejected).cause).toMatchObject({ message: expect.stringMatching(/2048/) });
    } finally {
      await idp.stop();
    }
  });

  it('tenants naming the same JWKS URL share one key set: one fetch', async () => {
    const key = await testSigningKey('ES256');
    const idp = await JwksTestServer.start([key]);
    try {
      const fresh = loopbackAuthenticator();
      const tenant1 = issuerAt(idp, ISSUER_A, { audience: 'tenant-1' });
      const tenant2 = issuerAt(idp, ISSUER_A, { audience: 'tenant-2' });
      await fresh.verify(await mintToken(key, claims({ aud: 'tenant-1' })), [tenant1]);
      await fresh.verify(await mintToken(key, claims({ aud: 'tenant-2' })), [tenant2]);
      expect(idp.requests).toBe(1);
    } finally {
      await idp.stop();
    }
  });
});

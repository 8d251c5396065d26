import { describe, expect, it } from 'vitest';
import { validateOidcIssuer } from './oidc-issuer';

const valid = {
  issuer: 'https://login.example.com/tenant-1/v2.0',
  audience: 'api://a2a-platform',
  jwksUrl: 'https://login.example.com/tenant-1/discovery/v2.0/keys?appid=42',
};

const fields = (input: unknown, allowInsecureLoopback = false): Record<string, string> => {
  const result = validateOidcIssuer(input, { allowInsecureLoopback });
  expect(result.ok).toBe(false);
  return result.ok
    ? {}
    : Object.fromEntries(result.errors.map(({ field, description }) => [field, description]));
};

describe('validateOidcIssuer', () => {
  it('keeps the strings as given and fills in the default claims and an empty scope map', () => {
    expect(validateOidcIssuer(valid)).toStrictEqual({
      ok: true,
      issuer: { ...valid, principalClaim: 'sub', scopesClaim: 'scope', scopeMap: {} },
    });
  });

  it('does not normalise the issuer: `iss` is compared exactly, trailing slash and case included', () => {
    const result = validateOidcIssuer({ ...valid, issuer: 'https://Login.Example.com' });
    expect(result.ok && result.issuer.issuer).toBe('https://Login.Example.com');
  });

  it('takes custom claims and a scope map, copying the lists', () => {
    const granted = ['task:read', 'task:write'];
    const result = validateOidcIssuer({
      ...valid,
      principalClaim: 'https://example.com/claims/user',
      scopesClaim: 'scp',
      // As the admin API's JSON body parses: `__proto__` is an own member there, not the prototype.
      scopeMap: { 'a2a.write': granted, ...(JSON.parse('{"__proto__": ["x"]}') as object) },
    });
    expect(result.ok).toBe(true);
    if (result.ok) {
      expect(result.issuer.principalClaim).toBe('https://example.com/claims/user');
      expect(result.issuer.scopeMap['a2a.write']).toStrictEqual(granted);
      expect(result.issuer.scopeMap['a2a.write']).not.toBe(granted);
      expect(Object.hasOwn(result.issuer.scopeMap, '__proto__')).toBe(true);
      expect(Object.getPrototypeOf(result.issuer.scopeMap)).toBe(Object.prototype);
    }
  });

  it('requires https for both URLs', () => {
    expect(
      fields({ ...valid, issuer: 'http://login.example.com', jwksUrl: 'ftp://x.example/keys' }),
    ).toStrictEqual({ issuer: 'must use https', jwksUrl: 'must use https' });
  });

  it('accepts loopback http only when allowed', () => {
    const loopback = {
      ...valid,
      issuer: 'http://localhost:8080/realms/test',
      jwksUrl: 'http://127.0.0.1:8080/certs',
    };
    expect(validateOidcIssuer(loopback, { allowInsecureLoopback: true }).ok).toBe(true);
    expect(
      validateOidcIssuer(
        { ...loopback, jwksUrl: 'http://[::1]:8080/certs' },
        { allowInsecureLoopback: true },
      ).ok,
    ).toBe(true);
    expect(fields(loopback)).toStrictEqual({ issuer: 'must use https', jwksUrl: 'must use https' });
    expect(fields({ ...loopback, jwksUrl: 'http://10.0.0.1/certs' }, true)).toStrictEqual({
      jwksUrl: 'must use https',
    });
  });

  it('refuses credentials, fragments, and a query in the issuer (OIDC Core §2)', () => {
    expect(
      fields({
        ...valid,
        issuer: 'https://login.example.com/?tenant=1#x',
        jwksUrl: 'https://user:pw@login.example.com/keys',
      }),
    ).toStrictEqual({
      issuer: 'must not have a query (OIDC Core §2)',
      jwksUrl: 'must not carry credentials',
    });
    const both = validateOidcIssuer({ ...valid, issuer: 'https://login.example.com/?#' });
    expect(both.ok ? [] : both.errors.map((e) => e.description)).toStrictEqual([
      'must not have a fragment',
      'must not have a query (OIDC Core §2)',
    ]);
  });

  it('refuses what is not a URL, and URLs with spaces or of excessive length', () => {
    expect(
      fields({
        ...valid,
        issuer: 'login.example.com',
        jwksUrl: ` ${valid.jwksUrl}`,
      }),
    ).toStrictEqual({
      issuer: 'must be an absolute URL',
      jwksUrl: 'must be a URL of at most 2048 printable ASCII characters without spaces',
    });
    expect(fields({ ...valid, issuer: `https://x.example/${'a'.repeat(2048)}` })).toHaveProperty(
      'issuer',
    );
  });

  it('requires a non-empty audience without surrounding spaces', () => {
    expect(fields({ ...valid, audience: '' })).toStrictEqual({
      audience: 'must be a non-empty string',
    });
    expect(fields({ ...valid, audience: ' api ' })).toHaveProperty('audience');
    expect(fields({ issuer: valid.issuer, jwksUrl: valid.jwksUrl })).toStrictEqual({
      audience: 'must be a non-empty string',
    });
  });

  it('refuses claim names that are empty, contain spaces, or name the token rather than the caller', () => {
    expect(fields({ ...valid, principalClaim: 'user id', scopesClaim: '' })).toStrictEqual({
      principalClaim: 'must be a claim name of 1 to 256 printable ASCII characters without spaces',
      scopesClaim: 'must be a claim name of 1 to 256 printable ASCII characters without spaces',
    });
    expect(fields({ ...valid, principalClaim: 'jti', scopesClaim: 'aud' })).toStrictEqual({
      principalClaim: 'must not be "jti", which describes the token, not the caller',
      scopesClaim: 'must not be "aud", which describes the token, not the caller',
    });
  });

  it('checks the scope map: scope-token keys, lists of non-empty platform scopes', () => {
    expect(
      fields({
        ...valid,
        scopeMap: { 'a b': ['x'], ok: ['x'], single: 'x', empty: [''], nested: [['x']] },
      }),
    ).toStrictEqual({
      'scopeMap.a b': 'the key must be a scope token (RFC 6749 §3.3) of at most 256 characters',
      'scopeMap.single': 'must be an array of at most 64 non-empty platform scopes',
      'scopeMap.empty': 'must be an array of at most 64 non-empty platform scopes',
      'scopeMap.nested': 'must be an array of at most 64 non-empty platform scopes',
    });
    expect(fields({ ...valid, scopeMap: ['x'] })).toStrictEqual({
      scopeMap: 'must be an object of scope → platform scopes',
    });
    const many = Object.fromEntries(Array.from({ length: 257 }, (_, i) => [`s${i}`, ['x']]));
    expect(fields({ ...valid, scopeMap: many })).toStrictEqual({
      scopeMap: 'must have at most 256 entries',
    });
  });

  it('reports unknown fields and every wrong field at once', () => {
    expect(fields({ ...valid, audiance: 'x', issuer: 1, jwksUrl: null })).toStrictEqual({
      audiance: 'is not a field of an issuer definition',
      issuer: 'must be a non-empty string',
      jwksUrl: 'must be a non-empty string',
    });
  });

  it('refuses anything but an object', () => {
    for (const input of [null, 'https://x', [valid], 42]) {
      expect(fields(input)).toStrictEqual({ '': 'must be a JSON object' });
    }
  });
});

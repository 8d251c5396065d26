import { describe, expect, it } from 'vitest';
import { JwtRejected } from './jwt.errors';
import {
  externalScopes,
  mapScopes,
  OIDC_PRINCIPAL_PREFIX,
  oidcPrincipalId,
  selectIssuer,
} from './oidc-claims';
import type { OidcIssuer } from './oidc-issuer';

const issuer = (iss: string, audience: string): OidcIssuer => ({
  issuer: iss,
  audience,
  jwksUrl: `${iss}/keys`,
  principalClaim: 'sub',
  scopesClaim: 'scope',
  scopeMap: {},
});

describe('oidcPrincipalId', () => {
  it('namespaces the subject by its issuer, apart from API-key principals', () => {
    expect(oidcPrincipalId('https://idp.example', 'alice')).toBe('oidc:https://idp.example#alice');
    expect(oidcPrincipalId('https://idp.example', 'alice').startsWith(OIDC_PRINCIPAL_PREFIX)).toBe(
      true,
    );
  });

  it('the same subject at two issuers is two principals', () => {
    expect(oidcPrincipalId('https://a.example', 'u1')).not.toBe(
      oidcPrincipalId('https://b.example', 'u1'),
    );
  });

  it('is unambiguous: an issuer has no `#`, so a subject holding one cannot shift the boundary', () => {
    const id = oidcPrincipalId('https://a.example/x', 'y#z');
    const rest = id.slice(OIDC_PRINCIPAL_PREFIX.length);
    const boundary = rest.indexOf('#');
    expect([rest.slice(0, boundary), rest.slice(boundary + 1)]).toStrictEqual([
      'https://a.example/x',
      'y#z',
    ]);
  });
});

describe('externalScopes', () => {
  it('splits a space-separated string (RFC 8693 §4.2), ignoring repeated spaces', () => {
    expect(externalScopes('read  write ')).toStrictEqual(['read', 'write']);
    expect(externalScopes('')).toStrictEqual([]);
  });

  it('takes an array of strings as it is', () => {
    expect(externalScopes(['read', 'write'])).toStrictEqual(['read', 'write']);
  });

  it('no claim means no scopes; any other shape is malformed', () => {
    expect(externalScopes(undefined)).toStrictEqual([]);
    for (const value of [42, null, { read: true }, ['read', 1]]) {
      expect(externalScopes(value)).toBeUndefined();
    }
  });
});

describe('mapScopes', () => {
  const scopeMap = { read: ['task:read'], write: ['task:read', 'task:write'], admin: [] };

  it('grants the mapped platform scopes, each once, in first-granted order', () => {
    expect(mapScopes(['write', 'read'], scopeMap)).toStrictEqual(['task:read', 'task:write']);
  });

  it('drops external scopes without an entry, prototype names included', () => {
    expect(
      mapScopes(['openid', 'email', 'constructor', '__proto__', 'admin'], scopeMap),
    ).toStrictEqual([]);
  });
});

describe('selectIssuer', () => {
  const a = issuer('https://a.example', 'platform');
  const b = issuer('https://b.example', 'platform');

  const reason = (fn: () => unknown): string | undefined => {
    try {
      fn();
    } catch (err) {
      return err instanceof JwtRejected ? err.reason : 'not a rejection';
    }
    return undefined;
  };

  it('picks the issuer the token names, exactly', () => {
    expect(selectIssuer([a, b], { iss: 'https://b.example' })).toBe(b);
    expect(reason(() => selectIssuer([a, b], { iss: 'https://b.example/' }))).toBe(
      'unknown-issuer',
    );
    expect(reason(() => selectIssuer([], { iss: 'https://a.example' }))).toBe('unknown-issuer');
  });

  it('a token without `iss` lacks a claim; a non-string `iss` is malformed', () => {
    expect(reason(() => selectIssuer([a], {}))).toBe('missing-claim');
    expect(reason(() => selectIssuer([a], { iss: ['https://a.example'] }))).toBe('malformed');
  });
});

import type { GuardedFetch } from '@lib/push';
import { describe, expect, it } from 'vitest';
import { OAuthTokens, TokenRefused } from './oauth-token';

const client = { tokenUrl: 'https://auth.example/token', clientId: 'bridge', scope: 'a2a' };

/** A token endpoint answering `answers` in turn; it keeps the forms it was sent. */
function endpoint(answers: [number, unknown][]): { fetch: GuardedFetch; forms: URLSearchParams[] } {
  const forms: URLSearchParams[] = [];
  const fetch: GuardedFetch = (_url, init) => {
    forms.push(new URLSearchParams(init?.body ?? ''));
    const [status, body] = answers[Math.min(forms.length - 1, answers.length - 1)] ?? [500, {}];
    return Promise.resolve(new Response(JSON.stringify(body), { status }));
  };
  return { fetch, forms };
}

describe('OAuthTokens', () => {
  it('asks with the client credentials, and keeps the token until shortly before it expires', async () => {
    let now = 0;
    const { fetch, forms } = endpoint([
      [200, { access_token: 'first', token_type: 'Bearer', expires_in: 60 }],
      [200, { access_token: 'second', token_type: 'bearer', expires_in: 60 }],
    ]);
    const tokens = new OAuthTokens(client, 's3cret', fetch, undefined, () => now);
    expect(await Promise.all([tokens.token(), tokens.token()])).toEqual(['first', 'first']);
    expect(forms).toHaveLength(1);
    expect(Object.fromEntries(forms[0] ?? [])).toEqual({
      grant_type: 'client_credentials',
      client_id: 'bridge',
      client_secret: 's3cret',
      scope: 'a2a',
    });
    now = 29_000;
    expect(await tokens.token()).toBe('first');
    now = 31_000;
    expect(await tokens.token()).toBe('second');
    expect(forms).toHaveLength(2);
  });

  it('refuses an answer without a bearer token, saying why', async () => {
    const denied = new OAuthTokens(
      client,
      'x',
      endpoint([[401, { error: 'invalid_client' }]]).fetch,
    );
    await expect(denied.token()).rejects.toThrow(
      new TokenRefused('the token endpoint gave no token: invalid_client'),
    );
    const mac = new OAuthTokens(
      client,
      'x',
      endpoint([[200, { access_token: 't', token_type: 'mac' }]]).fetch,
    );
    await expect(mac.token()).rejects.toThrow(/a mac token, not a bearer one/);
  });
});

import type { GuardedFetch } from '@lib/push';
import type { OAuth2Client } from './upstream-store';

/** A token is fetched again this long before the expiry its answer gave. */
const EXPIRY_MARGIN_MS = 30_000;
/** A token whose answer gives no `expires_in` is used this long. */
const DEFAULT_LIFETIME_MS = 300_000;

/** The token endpoint did not give a token: the call that needed it (a task's, an extended card's) fails with this message. */
export class TokenRefused extends Error {
  override readonly name = 'TokenRefused';
}

/**
 * Bearer tokens of OAuth 2 client credentials (RFC 6749 §4.4) for one upstream: asked for at the token URL
 * (through the guard: no reserved address the tenant may not reach, no redirect), with the client's id and
 * secret in the form body (§2.3.1), and cached until shortly before they expire. Calls that need a token
 * while one is being fetched wait for that one.
 */
export class OAuthTokens {
  private cached: { token: string; until: number } | undefined;
  private pending: Promise<string> | undefined;

  constructor(
    private readonly client: OAuth2Client,
    private readonly secret: string,
    private readonly fetch: GuardedFetch,
    /** Told of every token fetched or refused (the bridge audits them). */
    private readonly onFetch: (outcome: 'ok' | 'failed', reason: string | null) => void = () =>
      undefined,
    private readonly now: () => number = Date.now,
  ) {}

  async token(): Promise<string> {
    if (this.cached && this.cached.until > this.now()) {
      return this.cached.token;
    }
    this.pending ??= this.fetchToken()
      .then(
        (token) => {
          this.onFetch('ok', null);
          return token;
        },
        (error: unknown) => {
          this.onFetch('failed', error instanceof TokenRefused ? 'TOKEN_REFUSED' : 'UNAVAILABLE');
          throw error;
        },
      )
      .finally(() => {
        this.pending = undefined;
      });
    return this.pending;
  }

  private async fetchToken(): Promise<string> {
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: this.client.clientId,
      client_secret: this.secret,
      ...(this.client.scope !== undefined ? { scope: this.client.scope } : {}),
    });
    const body = form.toString();
    const response = await this.fetch(this.client.tokenUrl, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        'Content-Length': String(Buffer.byteLength(body)),
        Accept: 'application/json',
      },
      body,
    });
    const text = await response.text();
    let answer: {
      access_token?: unknown;
      token_type?: unknown;
      expires_in?: unknown;
      error?: unknown;
    };
    try {
      answer = JSON.parse(text) as typeof answer;
    } catch {
      throw new TokenRefused(`the token endpoint answered HTTP ${response.status}, not JSON`);
    }
    if (!response.ok || typeof answer.access_token !== 'string' || answer.access_token === '') {
      const error = typeof answer.error === 'string' ? answer.error : `HTTP ${response.status}`;
      throw new TokenRefused(`the token endpoint gave no token: ${error}`);
    }
    if (typeof answer.token_type === 'string' && answer.token_type.toLowerCase() !== 'bearer') {
      throw new TokenRefused(
        `the token endpoint gave a ${answer.token_type} token, not a bearer one`,
      );
    }
    const lifetime =
      typeof answer.expires_in === 'number' && answer.expires_in > 0
        ? answer.expires_in * 1000
        : DEFAULT_LIFETIME_MS;
    this.cached = {
      token: answer.access_token,
      until: this.now() + Math.max(0, lifetime - EXPIRY_MARGIN_MS),
    };
    return answer.access_token;
  }
}

import type { JWK } from 'jose';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestSigningKey } from './test-keys';

/** Path of the key set on a {@link JwksTestServer}. */
export const TEST_JWKS_PATH = '/.well-known/jwks.json';

/** How the server answers JWKS requests: with the key set, with an error status, or never (a hung provider). */
export type JwksAnswer = 'keys' | 'stall' | { status: number };

/**
 * An identity provider's JWKS endpoint for tests: loopback only, a random port, the keys a test publishes,
 * and a count of the requests it got, so tests can see when the authenticator fetches. Test code only:
 * production code never imports `oidc/testing` (checked by `oidc.testing-boundary.unit.spec.ts`).
 */
export class JwksTestServer {
  private readonly server: Server;
  private keys: JWK[] = [];
  private answer: JwksAnswer = 'keys';
  private served = 0;

  private constructor() {
    this.server = createServer((req, res) => this.handle(req, res));
  }

  /** Listens on 127.0.0.1 at a free port, publishing `keys`. */
  static async start(
    keys: readonly Pick<TestSigningKey, 'publicJwk'>[] = [],
  ): Promise<JwksTestServer> {
    const jwks = new JwksTestServer();
    jwks.publish(...keys);
    await new Promise<void>((resolve, reject) => {
      jwks.server.once('error', reject);
      jwks.server.listen(0, '127.0.0.1', () => resolve());
    });
    return jwks;
  }

  /** The JWKS URL, `http://127.0.0.1:<port>/.well-known/jwks.json`. */
  get url(): string {
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}${TEST_JWKS_PATH}`;
  }

  /** JWKS requests received so far, answered or not. */
  get requests(): number {
    return this.served;
  }

  /**
   * Replaces the published key set: a rotation is publishing the new key, with or without the old one.
   * Takes any `{publicJwk}`, so a test can publish a key it built by hand.
   */
  publish(...keys: readonly Pick<TestSigningKey, 'publicJwk'>[]): void {
    this.keys = keys.map((key) => key.publicJwk);
  }

  /** How to answer from now on (default `'keys'`). */
  answerWith(answer: JwksAnswer): void {
    this.answer = answer;
  }

  /** Stops listening and drops every connection, keep-alive and stalled ones included: the provider is down. */
  async stop(): Promise<void> {
    const closed = new Promise<void>((resolve, reject) =>
      this.server.close((err) => (err ? reject(err) : resolve())),
    );
    this.server.closeAllConnections();
    await closed;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    if (req.method !== 'GET' || req.url !== TEST_JWKS_PATH) {
      res.writeHead(404).end();
      return;
    }
    this.served += 1;
    if (this.answer === 'stall') {
      return;
    }
    if (this.answer !== 'keys') {
      res.writeHead(this.answer.status, { 'content-type': 'text/plain' }).end('unavailable');
      return;
    }
    res
      .writeHead(200, { 'content-type': 'application/jwk-set+json', 'cache-control': 'no-store' })
      .end(JSON.stringify({ keys: this.keys }));
  }
}

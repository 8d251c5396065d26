import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import {
  destinationRefusal,
  DestinationRefusedError,
  guardedLookup,
  type DestinationPolicy,
  type Resolver,
} from './destination-guard';

/** How {@link guardedFetch} guards and bounds its requests. */
export interface GuardedFetchOptions {
  /** Reserved destinations that may be reached anyway (loopback for a local identity provider); default none. */
  readonly allows?: DestinationPolicy;
  /** Response body bytes accepted at most; a longer body fails the request. */
  readonly bodyLimitBytes: number;
  /** The whole request, from name resolution to the last body byte; the caller's signal may end it sooner. */
  readonly timeoutMs: number;
  /**
   * Called with the address and port right before a socket connects to it (tests prove refused destinations
   * never get here); if it throws, nothing connects and the request fails.
   */
  readonly onDial?: (address: string, port: number) => void;
  /** Host name resolution; default `dns.lookup`. */
  readonly resolve?: Resolver;
}

/** What a guarded fetch takes of `fetch`'s init; redirects are never followed, whatever the caller asks. */
export interface GuardedFetchInit {
  readonly method?: string;
  readonly headers?: Headers | Readonly<Record<string, string>>;
  /** A request body (e.g. the form of an OAuth 2 token request). */
  readonly body?: string;
  readonly signal?: AbortSignal | null;
}

/** A `fetch` for URLs someone other than the operator chose (e.g. an OIDC issuer's JWKS URL). */
export type GuardedFetch = (url: string, init?: GuardedFetchInit) => Promise<Response>;

/** Statuses whose response has no body (the Response constructor refuses one). */
const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

/**
 * A `fetch` behind the webhook SSRF guard (ADR 0010 decision 8): only `http` and `https`; a host name is
 * resolved once, refused if any address is reserved and not admitted by `allows`, and the socket connects to
 * exactly the addresses checked; an IP literal is checked before anything connects. A refused destination
 * rejects with a {@link DestinationRefusedError} (`code` DESTINATION_REFUSED). Redirects are returned, never
 * followed; the body is read whole, up to `bodyLimitBytes`; one timeout covers the whole request. One
 * connection per request, closed after it: for rare fetches such as a JWK Set, not for traffic.
 */
export function guardedFetch(options: GuardedFetchOptions): GuardedFetch {
  const allows: DestinationPolicy = options.allows ?? (() => false);
  return async (url, init = {}) => {
    const target = new URL(url);
    if (target.protocol !== 'http:' && target.protocol !== 'https:') {
      throw new TypeError(`only http and https URLs are fetched, not ${target.protocol}`);
    }
    const host = target.hostname.replace(/^\[(.*)\]$/, '$1');
    const port = Number(target.port) || (target.protocol === 'https:' ? 443 : 80);
    if (isIP(host) !== 0) {
      // Node resolves nothing for an IP literal, so the guarded lookup never sees it: check it here.
      const refusal = destinationRefusal(host, host, allows);
      if (refusal !== undefined) {
        throw new DestinationRefusedError(refusal);
      }
      options.onDial?.(host, port);
    }
    const signals = [AbortSignal.timeout(options.timeoutMs)];
    if (init.signal) {
      signals.push(init.signal);
    }
    const signal = AbortSignal.any(signals);
    signal.throwIfAborted();
    const headers = Object.fromEntries(new Headers(init.headers).entries());
    const transport = target.protocol === 'https:' ? https : http;
    const lookup = guardedLookup({
      allows,
      onAddress: (address) => options.onDial?.(address, port),
      resolve: options.resolve,
    });
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = transport.request(target, {
        method: init.method ?? 'GET',
        headers,
        lookup,
        agent: false,
      });
      const abort = (): void => {
        req.destroy(signal.reason as Error);
      };
      signal.addEventListener('abort', abort, { once: true });
      req.once('response', (res) => {
        res.once('close', () => signal.removeEventListener('abort', abort));
        resolve(res);
      });
      // `on`, not `once`: a request can fail again after its response (an abort, the body cap).
      req.on('error', (error) => {
        signal.removeEventListener('abort', abort);
        reject(signal.aborted ? (signal.reason as Error) : error);
      });
      req.end(init.body);
    });
    const body = await readCapped(response, options.bodyLimitBytes, signal);
    const status = response.statusCode ?? 0;
    return new Response(NULL_BODY_STATUSES.has(status) ? null : body, {
      status,
      statusText: response.statusMessage ?? '',
      headers: headersOf(response),
    });
  };
}

/** The whole body, or a rejection when it exceeds `limit` bytes, fails, or the signal ends the request. */
function readCapped(res: IncomingMessage, limit: number, signal: AbortSignal): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        res.destroy(new Error(`the response body exceeds ${limit} bytes`));
      } else {
        chunks.push(chunk);
      }
    });
    res.once('end', () => resolve(Buffer.concat(chunks)));
    res.on('error', (error) => reject(signal.aborted ? (signal.reason as Error) : error));
    res.once('close', () => {
      if (!res.complete) {
        reject(signal.aborted ? (signal.reason as Error) : new Error('the response ended early'));
      }
    });
  });
}

function headersOf(res: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(res.headers)) {
    for (const item of Array.isArray(value) ? value : [value ?? '']) {
      headers.append(name, item);
    }
  }
  return headers;
}

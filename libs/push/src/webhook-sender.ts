import { signDetached, type SigningKey } from '@lib/signing';
import http, {
  type ClientRequest,
  type ClientRequestArgs,
  type OutgoingHttpHeaders,
} from 'node:http';
import https from 'node:https';
import { isIP, Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Duplex } from 'node:stream';
import { TLSSocket } from 'node:tls';
import { statusVerdict, type DeliveryResult, type DeliveryVerdict } from './delivery-result';
import {
  checkWebhookUrl,
  DESTINATION_REFUSED,
  destinationRefusal,
  guardedLookup,
  type DestinationPolicy,
  type Resolver,
} from './destination-guard';
import type { PushAllowlist } from './push-allowlist';

/** Media type of webhook bodies: one `StreamResponse` in ProtoJSON (spec digest §10.10). */
export const A2A_CONTENT_TYPE = 'application/a2a+json';

/**
 * Header carrying the detached JWS over the body bytes (RFC 7515 Appendix F, `<protected>..<signature>`,
 * ADR 0010 decision 7). The key id travels only in the protected header, where it is signed.
 */
export const SIGNATURE_HEADER = 'X-A2A-Signature';

/** Headers the sender owns: a caller's values for them are dropped. */
const SENDER_HEADERS = new Set([
  'content-type',
  'content-length',
  SIGNATURE_HEADER.toLowerCase(),
  'host',
  'connection',
  'transfer-encoding',
]);

/** One webhook POST. */
export interface WebhookRequest {
  /** Whose allowlist (PUSH_ALLOWLIST) applies. */
  readonly tenant: string;
  /** The config's URL, as registered (checked again here). */
  readonly url: string;
  /** The body exactly as signed and sent. */
  readonly body: Buffer;
  /**
   * A2A headers built by the caller (`Authorization`, `X-A2A-Notification-Token`, `X-A2A-Delivery-Id`, …).
   * `Content-Type`, `Content-Length` and the signature are the sender's.
   */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * Facts signed with the body, in the signature's protected header as `a2a` (the delivery id, task id and
   * generation of a webhook): a receiver reads them from the verified header, not from headers anyone could
   * change on a replayed request.
   */
  readonly signed?: Readonly<Record<string, string | number>>;
}

/** How the sender signs, guards and times its requests; the push dispatcher maps its PUSH_* config onto it. */
export interface WebhookSenderOptions {
  /** Signs every body; receivers verify against the ingress JWK Set. */
  readonly signingKey: SigningKey;
  /** Reserved destinations each tenant may reach anyway. */
  readonly allowlist: PushAllowlist;
  /** Name resolution, TCP and TLS of a new connection (PUSH_CONNECT_TIMEOUT_MS). */
  readonly connectTimeoutMs: number;
  /** From the connection being ready to the response headers (PUSH_RESPONSE_TIMEOUT_MS). */
  readonly responseTimeoutMs: number;
  /** From the response headers to the end of the body; the verdict stands, the connection is closed. */
  readonly bodyTimeoutMs: number;
  /** Response bytes read at most; past them the connection is closed (PUSH_RESPONSE_BODY_LIMIT_BYTES). */
  readonly responseBodyLimitBytes: number;
  /** Longest `Retry-After` honoured (PUSH_BACKOFF_CAP_MS). */
  readonly retryAfterCapMs: number;
  /**
   * Called with the address and port right before a socket connects to it (tests prove refused destinations
   * never get here); if it throws, nothing connects and the send fails like a connection error.
   */
  readonly onDial?: (address: string, port: number) => void;
  /** Host name resolution; default `dns.lookup`. */
  readonly resolve?: Resolver;
}

/**
 * Sends webhook POSTs (ADR 0010 decisions 7 and 8): signed, to checked destinations only, one keep-alive
 * connection pool per destination origin, redirects not followed, the response body capped, and connect,
 * response and body timeouts apart. `send` never rejects: every failure is a verdict.
 */
export class WebhookSender {
  private readonly agents = new Map<string, http.Agent>();

  constructor(private readonly options: WebhookSenderOptions) {}

  /** POSTs once and classifies the outcome. */
  async send(request: WebhookRequest): Promise<DeliveryResult> {
    const started = performance.now();
    const verdict = await this.attempt(request);
    return { ...verdict, durationMs: Math.round(performance.now() - started) };
  }

  /** Closes every pooled connection; sends in flight fail as connection errors. */
  close(): void {
    for (const agent of this.agents.values()) {
      agent.destroy();
    }
    this.agents.clear();
  }

  private attempt(request: WebhookRequest): DeliveryVerdict | Promise<DeliveryVerdict> {
    const checked = checkWebhookUrl(request.url);
    if (!checked.ok) {
      return { outcome: 'rejected', error: `invalid webhook URL: ${checked.reason}` };
    }
    const { url } = checked;
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const { allowlist } = this.options;
    // Tenants without entries share one policy, hence one pool per origin; a tenant with entries gets its own,
    // so that a connection its allowlist admitted is never reused for another tenant.
    const scope = allowlist.has(request.tenant) ? request.tenant : undefined;
    const allows: DestinationPolicy =
      scope === undefined
        ? () => false
        : (name, address) => allowlist.allowed(scope, name, address);
    if (isIP(host) !== 0) {
      // Node resolves nothing for an IP literal, so the guarded lookup never sees it: check it here.
      const refusal = destinationRefusal(host, host, allows);
      if (refusal !== undefined) {
        return { outcome: 'rejected', error: `destination refused: ${refusal}` };
      }
    }
    const key = scope === undefined ? url.origin : `${url.origin} ${scope}`;
    return this.post(url, this.agents.get(key) ?? this.newAgent(key, url, host, allows), request);
  }

  private post(url: URL, agent: http.Agent, request: WebhookRequest): Promise<DeliveryVerdict> {
    const { connectTimeoutMs, responseTimeoutMs, bodyTimeoutMs, responseBodyLimitBytes } =
      this.options;
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      let settled = false;
      const settle = (verdict: DeliveryVerdict): void => {
        if (!settled) {
          settled = true;
          clearTimeout(timer);
          resolve(verdict);
        }
      };
      // One timer for the phase in progress: connect, then response headers, then body.
      const within = (ms: number, onExpiry: () => void): void => {
        clearTimeout(timer);
        if (!settled) {
          timer = setTimeout(onExpiry, ms);
        }
      };
      let req: ClientRequest;
      try {
        const headers = this.headers(request);
        req = (url.protocol === 'https:' ? https : http).request(url, {
          method: 'POST',
          agent,
          headers,
        });
      } catch (err) {
        // An invalid header value (e.g. a control character in a token): the same on every attempt.
        settle({ outcome: 'rejected', error: (err as Error).message });
        return;
      }
      req.on('error', (err) => settle(failureVerdict(err)));
      req.on('socket', (socket: Socket) => {
        const awaitResponse = (): void =>
          within(responseTimeoutMs, () =>
            req.destroy(new Error(`no response within ${responseTimeoutMs} ms`)),
          );
        if (socket.connecting) {
          within(connectTimeoutMs, () =>
            req.destroy(new Error(`not connected within ${connectTimeoutMs} ms`)),
          );
          socket.once(socket instanceof TLSSocket ? 'secureConnect' : 'connect', awaitResponse);
        } else {
          awaitResponse();
        }
      });
      req.on('response', (res) => {
        const verdict = statusVerdict(
          res.statusCode ?? 0,
          res.headers['retry-after'],
          Date.now(),
          this.options.retryAfterCapMs,
        );
        // The status decides; the body is only drained (for the connection's reuse) up to the cap.
        const stop = (): void => {
          settle(verdict);
          res.destroy();
        };
        within(bodyTimeoutMs, stop);
        let received = 0;
        res.on('data', (chunk: Buffer) => {
          received += chunk.length;
          if (received > responseBodyLimitBytes) {
            stop();
          }
        });
        res.on('error', () => settle(verdict));
        res.on('close', () => settle(verdict));
      });
      req.end(request.body);
    });
  }

  private headers(request: WebhookRequest): OutgoingHttpHeaders {
    const headers: OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(request.headers ?? {})) {
      if (!SENDER_HEADERS.has(name.toLowerCase())) {
        headers[name] = value;
      }
    }
    headers['Content-Type'] = A2A_CONTENT_TYPE;
    headers['Content-Length'] = request.body.length;
    headers[SIGNATURE_HEADER] = signDetached(
      request.body,
      this.options.signingKey,
      request.signed ? { a2a: request.signed } : {},
    );
    return headers;
  }

  private newAgent(key: string, url: URL, host: string, allows: DestinationPolicy): http.Agent {
    const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
    const dial = (address: string): void => this.options.onDial?.(address, port);
    const hooks: ConnectionHooks = {
      beforeConnect: isIP(host) !== 0 ? () => dial(host) : () => undefined,
      // After the agent's own close handler has taken the socket out of its lists.
      onClose: () => setImmediate(() => this.evictIfIdle(key, agent)),
    };
    const options: http.AgentOptions = {
      keepAlive: true,
      lookup: guardedLookup({ allows, onAddress: dial, resolve: this.options.resolve }),
    };
    const agent =
      url.protocol === 'https:'
        ? new GuardedHttpsAgent(options, hooks)
        : new GuardedHttpAgent(options, hooks);
    this.agents.set(key, agent);
    return agent;
  }

  /** Forgets an origin's pool once its last connection closed, so destinations seen once do not pile up. */
  private evictIfIdle(key: string, agent: http.Agent): void {
    const empty = (byName: NodeJS.ReadOnlyDict<readonly unknown[]>): boolean =>
      Object.values(byName).every((list) => list === undefined || list.length === 0);
    const idle = empty(agent.sockets) && empty(agent.freeSockets) && empty(agent.requests);
    if (idle && this.agents.get(key) === agent) {
      this.agents.delete(key);
      agent.destroy();
    }
  }
}

function failureVerdict(err: NodeJS.ErrnoException): DeliveryVerdict {
  if (err.code === DESTINATION_REFUSED) {
    return { outcome: 'rejected', error: err.message };
  }
  const error =
    err.code !== undefined && !err.message.includes(err.code)
      ? `${err.code}: ${err.message}`
      : err.message;
  return { outcome: 'retry', error };
}

interface ConnectionHooks {
  /** Right before a socket to an IP literal connects (a host name is reported by the guarded lookup). */
  beforeConnect: () => void;
  onClose: () => void;
}

function connectGuarded(hooks: ConnectionHooks, connect: () => Duplex): Duplex {
  let socket: Duplex;
  try {
    hooks.beforeConnect();
    socket = connect();
  } catch (err) {
    // The agent takes whatever socket it is given: hand it one that fails without connecting.
    const failed = new Socket();
    process.nextTick(() => failed.destroy(err as Error));
    socket = failed;
  }
  socket.once('close', hooks.onClose);
  return socket;
}

class GuardedHttpAgent extends http.Agent {
  constructor(
    options: http.AgentOptions,
    private readonly hooks: ConnectionHooks,
  ) {
    super(options);
  }

  override createConnection(
    options: ClientRequestArgs,
    callback?: (err: Error | null, stream: Duplex) => void,
  ): Duplex {
    return connectGuarded(this.hooks, () => super.createConnection(options, callback));
  }
}

class GuardedHttpsAgent extends https.Agent {
  constructor(
    options: https.AgentOptions,
    private readonly hooks: ConnectionHooks,
  ) {
    super(options);
  }

  override createConnection(
    options: ClientRequestArgs,
    callback?: (err: Error | null, stream: Duplex) => void,
  ): Duplex {
    return connectGuarded(this.hooks, () => super.createConnection(options, callback));
  }
}

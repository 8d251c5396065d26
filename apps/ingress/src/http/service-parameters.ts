import { A2aError } from '@lib/a2a-protocol';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { API_KEY_HEADER } from '../auth/api-key.authenticator';
import { bearerOf } from '../auth/bearer.authenticator';
import type { A2aSession, InboundRequest } from '../gateway/a2a-gateway';
import { requestedExtensions } from '../streaming/resumable-streams';

/**
 * The service parameters of an HTTP request (spec digest §3.6, §10.1, §10.2): A2A-Version from the header,
 * else from the `A2A-Version` query parameter; A2A-Extensions, and its 0.3 name X-A2A-Extensions (which A2UI
 * clients send; both are read when both are present); the API key; the trace context.
 */
export function serviceParameters(
  req: IncomingMessage,
): Pick<
  InboundRequest,
  'apiKey' | 'bearer' | 'version' | 'extensions' | 'traceparent' | 'origin' | 'sourceAddress'
> {
  return {
    apiKey: headerOf(req, API_KEY_HEADER),
    ...bearerOf(headerOf(req, 'authorization')),
    version: headerOf(req, 'A2A-Version') ?? versionQuery(req.url),
    extensions: extensionsHeader(req),
    traceparent: headerOf(req, 'traceparent'),
    origin: {
      protocol: (req.socket as Partial<TLSSocket>).encrypted ? 'https' : 'http',
      host: headerOf(req, 'host'),
    },
    ...(req.socket.remoteAddress ? { sourceAddress: req.socket.remoteAddress } : {}),
  };
}

/** A request header; several of one name (which Node keeps apart only for a few) joined by commas. */
export function headerOf(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** The `A2A-Version` query parameter, when the request target has it once. */
function versionQuery(url: string | undefined): string | undefined {
  const query = url?.indexOf('?') ?? -1;
  if (url === undefined || query === -1) {
    return undefined;
  }
  const values = new URLSearchParams(url.slice(query + 1)).getAll('A2A-Version');
  return values.length === 1 ? values[0] : undefined;
}

/** Both names' URIs, each once; undefined when neither header is present. */
function extensionsHeader(req: IncomingMessage): string | undefined {
  const headers = [headerOf(req, 'A2A-Extensions'), headerOf(req, 'X-A2A-Extensions')];
  if (headers.every((value) => value === undefined)) {
    return undefined;
  }
  return [...new Set(headers.flatMap((value) => requestedExtensions(value)))].join(',');
}

/**
 * `A2A-Extensions` listing the activated extensions, when there are any (spec digest §10.2): under its v1.0
 * name also when the request used the 0.3 one.
 */
export function extensionHeaders(session: A2aSession): Record<string, string> {
  return session.activatedExtensions.length > 0
    ? { 'A2A-Extensions': session.activatedExtensions.join(', ') }
    : {};
}

/** Seconds a client is asked to wait before retrying an UNAVAILABLE answer (HTTP 503 `Retry-After`). */
export const RETRY_AFTER_SECONDS = 2;

/**
 * Headers of an error response: the activated extensions once the request was opened; for UNAUTHENTICATED
 * the challenge naming the API-key header (RFC 9110 §11.6.1); for UNAVAILABLE when to retry (§10.2.4).
 */
export function errorHeaders(error: A2aError, session: A2aSession | null): Record<string, string> {
  return {
    ...(session ? extensionHeaders(session) : {}),
    ...(error.reason === 'UNAUTHENTICATED'
      ? { 'WWW-Authenticate': `ApiKey header="${API_KEY_HEADER}", Bearer realm="a2a"` }
      : {}),
    ...(error.reason === 'UNAVAILABLE' ? { 'Retry-After': String(RETRY_AFTER_SECONDS) } : {}),
    ...(error.reason === 'QUOTA_EXCEEDED'
      ? { 'Retry-After': error.metadata['retryAfterSeconds'] ?? '1' }
      : {}),
  };
}

/**
 * The error that ends a stream abnormally: the client fell behind, or the task's events could not be read
 * (the database is away). Both are retryable: the client resumes where it was.
 */
export function streamError(reason: 'overflow' | 'error'): A2aError {
  return reason === 'overflow'
    ? new A2aError(
        'UNAVAILABLE',
        'the client did not keep up with the stream; resume with SubscribeToTask and Last-Event-ID',
      )
    : new A2aError(
        'UNAVAILABLE',
        'the stream was interrupted (the platform database is unavailable); resume with SubscribeToTask and Last-Event-ID',
      );
}

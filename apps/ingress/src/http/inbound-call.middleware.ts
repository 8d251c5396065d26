import { Injectable, type NestMiddleware } from '@nestjs/common';
import { ATTR_HTTP_REQUEST_METHOD } from '@opentelemetry/semantic-conventions';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { handleInbound, REQUEST_ID_HEADER, requestIdOf } from '../gateway/inbound-call';
import { headerOf } from './service-parameters';

/**
 * The start of every A2A call over HTTP: its request id (the client's `X-Request-Id` when sane, else a new
 * one) is answered in `X-Request-Id` and names every log line of the call; its span (tracing on) lasts until
 * the response is over, a stream's included. `next` runs the binding in the call's context.
 */
export function startInboundCall(
  req: IncomingMessage,
  res: ServerResponse,
  binding: 'JSONRPC' | 'HTTP+JSON',
  next: () => void,
): void {
  const requestId = requestIdOf(headerOf(req, REQUEST_ID_HEADER));
  res.setHeader('X-Request-Id', requestId);
  const call = {
    binding,
    requestId,
    traceparent: headerOf(req, 'traceparent'),
    attributes: { [ATTR_HTTP_REQUEST_METHOD]: req.method },
  };
  handleInbound(call, (answered) => {
    res.once('close', () => answered(res.statusCode));
    next();
  });
}

/** {@link startInboundCall} for the HTTP+JSON binding's routes. */
@Injectable()
export class InboundCallMiddleware implements NestMiddleware {
  use(req: IncomingMessage, res: ServerResponse, next: () => void): void {
    startInboundCall(req, res, 'HTTP+JSON', next);
  }
}

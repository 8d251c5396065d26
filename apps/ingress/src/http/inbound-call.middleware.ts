import { Injectable, type NestMiddleware } from '@nestjs/common';
import { ATTR_HTTP_REQUEST_METHOD } from '@opentelemetry/semantic-conventions';
import type { NextFunction, Request, Response } from 'express';
import { handleInbound, REQUEST_ID_HEADER, requestIdOf } from '../gateway/inbound-call';

/**
 * The start of every A2A call over HTTP (JSON-RPC and HTTP+JSON): its request id (the client's
 * `X-Request-Id` when sane, else a new one) is answered in `X-Request-Id` and names every log line of the
 * call; its span (tracing on) lasts until the response is over, a stream's included.
 */
@Injectable()
export class InboundCallMiddleware implements NestMiddleware {
  use(req: Request, res: Response, next: NextFunction): void {
    const requestId = requestIdOf(req.header(REQUEST_ID_HEADER));
    res.setHeader('X-Request-Id', requestId);
    const call = {
      binding: /\/jsonrpc$/.test(req.path) ? 'JSONRPC' : 'HTTP+JSON',
      requestId,
      traceparent: req.header('traceparent'),
      attributes: { [ATTR_HTTP_REQUEST_METHOD]: req.method },
    };
    handleInbound(call, (answered) => {
      res.once('close', () => answered(res.statusCode));
      next();
    });
  }
}

import { Injectable, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { handleInbound, REQUEST_ID_HEADER, requestIdOf } from '../gateway/inbound-call';

/**
 * The start of every A2A call over HTTP (JSON-RPC and HTTP+JSON): its request id (the client's
 * `X-Request-Id` when sane, else a new one) is answered in `X-Request-Id` and names every log line of the
 * call.
 */
@Injectable()
export class InboundCallMiddleware implements NestMiddleware {
  use(req: Request, res: Response, next: NextFunction): void {
    const requestId = requestIdOf(req.header(REQUEST_ID_HEADER));
    res.setHeader('X-Request-Id', requestId);
    handleInbound({ requestId, traceparent: req.header('traceparent') }, (answered) => {
      res.once('close', () => answered(res.statusCode));
      next();
    });
  }
}

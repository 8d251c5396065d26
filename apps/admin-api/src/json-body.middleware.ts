import { InvalidInput } from '@lib/tenancy';
import { Injectable, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { adminError } from './admin-errors.filter';

/** Largest admin request body (an agent definition with many skills fits easily). */
const MAX_BODY_BYTES = 1 << 20;

/**
 * Reads a JSON request body into `req.body` for the admin routes. The processes that serve them parse no
 * bodies globally (the A2A bindings read their own), so the admin API does it here, with a size limit and
 * its own error form.
 */
@Injectable()
export class JsonBodyMiddleware implements NestMiddleware {
  use(req: Request, res: Response, next: NextFunction): void {
    if (req.method === 'GET' || req.method === 'HEAD' || req.method === 'DELETE') {
      next();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    const refuse = (message: string) => {
      refused = true;
      const { status, body } = adminError(new InvalidInput(message));
      res.status(status).json(body);
    };
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES && !refused) {
        refuse(`the request body exceeds ${MAX_BODY_BYTES} bytes`);
        req.destroy();
      } else if (!refused) {
        chunks.push(chunk);
      }
    });
    req.on('end', () => {
      if (refused) {
        return;
      }
      const text = Buffer.concat(chunks).toString('utf8');
      if (text.trim() === '') {
        req.body = {};
        next();
        return;
      }
      if (!/^application\/json\b/i.test(req.header('content-type') ?? '')) {
        refuse('the request body must be application/json');
        return;
      }
      try {
        req.body = JSON.parse(text) as unknown;
      } catch {
        refuse('the request body is not valid JSON');
        return;
      }
      next();
    });
    req.on('error', (error) => next(error));
  }
}

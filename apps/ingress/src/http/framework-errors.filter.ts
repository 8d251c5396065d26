import { A2aError, toRestErrorBody, type ErrorReason } from '@lib/a2a-protocol';
import { isTransientDatabaseError } from '@lib/event-store';
import {
  Catch,
  HttpException,
  Logger,
  type ArgumentsHost,
  type ExceptionFilter,
} from '@nestjs/common';
import type { Response } from 'express';
import { databaseUnavailable } from '../gateway/a2a-gateway';
import { errorHeaders } from './service-parameters';

/** Framework statuses and the catalogue reason that describes each. */
const REASONS: Readonly<Record<number, ErrorReason>> = {
  400: 'INVALID_REQUEST',
  404: 'METHOD_NOT_FOUND',
  413: 'PAYLOAD_TOO_LARGE',
};

/**
 * Errors raised before any binding sees the request (an unknown path, a path with a malformed %-escape,
 * which Express refuses while routing) get the same google.rpc.Status body as the HTTP+JSON binding
 * (spec digest §8.3) instead of the framework's own shape, and so do the card routes' failures (a database
 * that cannot be reached is 503 UNAVAILABLE). The bindings catch everything else themselves.
 */
@Catch()
export class FrameworkErrorsFilter implements ExceptionFilter {
  private readonly logger = new Logger(FrameworkErrorsFilter.name);

  catch(exception: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    if (res.headersSent) {
      return;
    }
    if (isTransientDatabaseError(exception)) {
      const error = databaseUnavailable();
      const body = toRestErrorBody(error);
      res
        .status(body.error.code)
        .set(errorHeaders(error, null))
        .type('application/a2a+json')
        .json(body);
      return;
    }
    const status = statusOf(exception);
    const reason = REASONS[status ?? 500] ?? 'INTERNAL';
    if (reason === 'INTERNAL') {
      this.logger.error(
        exception instanceof Error ? (exception.stack ?? exception.message) : String(exception),
      );
    }
    const message =
      reason === 'METHOD_NOT_FOUND'
        ? 'no A2A endpoint at this path'
        : exception instanceof Error
          ? exception.message
          : String(exception);
    const body = toRestErrorBody(new A2aError(reason, message));
    res.status(body.error.code).type('application/a2a+json').json(body);
  }
}

function statusOf(exception: unknown): number | undefined {
  if (exception instanceof HttpException) {
    return exception.getStatus();
  }
  const status = (exception as { status?: unknown } | null)?.status;
  return typeof status === 'number' ? status : undefined;
}

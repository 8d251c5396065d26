import { InvalidAuditQuery } from '@lib/audit';
import { InvalidDeliveryQuery } from '@lib/push';
import { Conflict, InvalidInput, NotFound } from '@lib/tenancy';
import {
  Catch,
  HttpException,
  Logger,
  type ArgumentsHost,
  type ExceptionFilter,
} from '@nestjs/common';
import type { Response } from 'express';
import { AdminUnauthenticated } from './admin-auth';
import { AdminForbidden } from './admin.guard';

/** The body of every admin API error: `{ error: { code, status, message, fields? } }`. */
export interface AdminErrorBody {
  error: {
    code: number;
    status: string;
    message: string;
    fields?: { field: string; description: string }[];
  };
}

/** The HTTP form of an admin API error (the statuses of google.rpc.Code, as the A2A REST binding uses). */
export function adminError(thrown: unknown): { status: number; body: AdminErrorBody } {
  const answer = (code: number, status: string, message: string) => ({
    status: code,
    body: { error: { code, status, message } },
  });
  if (thrown instanceof InvalidInput) {
    const body = answer(400, 'INVALID_ARGUMENT', thrown.message).body;
    return { status: 400, body: { error: { ...body.error, fields: [...thrown.fields] } } };
  }
  if (thrown instanceof InvalidAuditQuery) {
    return answer(400, 'INVALID_ARGUMENT', thrown.message);
  }
  if (thrown instanceof InvalidDeliveryQuery) {
    const fields = [{ field: thrown.field, description: thrown.description }];
    const body = answer(400, 'INVALID_ARGUMENT', thrown.message).body;
    return { status: 400, body: { error: { ...body.error, fields } } };
  }
  if (thrown instanceof AdminUnauthenticated) {
    return answer(401, 'UNAUTHENTICATED', thrown.message);
  }
  if (thrown instanceof AdminForbidden) {
    return answer(403, 'PERMISSION_DENIED', thrown.message);
  }
  if (thrown instanceof NotFound) {
    return answer(404, 'NOT_FOUND', thrown.message);
  }
  if (thrown instanceof Conflict) {
    return answer(409, 'FAILED_PRECONDITION', thrown.message);
  }
  if (thrown instanceof HttpException) {
    // The framework's own refusals: an unparsable JSON body, an unknown route.
    const status = thrown.getStatus();
    return answer(status, status === 404 ? 'NOT_FOUND' : 'INVALID_ARGUMENT', thrown.message);
  }
  return answer(500, 'INTERNAL', 'internal error');
}

/** Writes every admin API error in one form; unexpected ones are logged with their cause. */
@Catch()
export class AdminErrorsFilter implements ExceptionFilter {
  private readonly logger = new Logger(AdminErrorsFilter.name);

  catch(thrown: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    const { status, body } = adminError(thrown);
    if (status === 500) {
      this.logger.error(
        thrown instanceof Error ? (thrown.stack ?? thrown.message) : String(thrown),
      );
    }
    if (status === 401) {
      res.setHeader('WWW-Authenticate', 'Bearer realm="a2a-admin"');
    }
    res.status(status).json(body);
  }
}

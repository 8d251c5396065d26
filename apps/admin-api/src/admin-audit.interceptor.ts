import {
  Injectable,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { catchError, from, mergeMap, type Observable } from 'rxjs';
import { AdminAudit } from './admin-audit';
import { adminError } from './admin-errors.filter';
import type { AdminRequest } from './admin.guard';
import { StreamingAnswer } from './streaming-answer';

/**
 * Records the outcome of every admin call that passed the guard (the guard records those it refused):
 * `ok`, or `failed` with the error's status as the reason. The answer waits for the record (a streaming
 * answer starts after it).
 */
@Injectable()
export class AdminAuditInterceptor implements NestInterceptor {
  constructor(private readonly audit: AdminAudit) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const req = context.switchToHttp().getRequest<AdminRequest>();
    const operation = req.adminCall?.spec.operation ?? 'admin.unknown';
    return next.handle().pipe(
      mergeMap((value: unknown) =>
        from(
          this.audit.record(req, operation, 'ok', null).then(() => {
            if (value instanceof StreamingAnswer) {
              value.start();
            }
            return value;
          }),
        ),
      ),
      catchError((thrown: unknown) =>
        from(
          this.audit
            .record(req, operation, 'failed', adminError(thrown).body.error.status)
            .then(() => {
              throw thrown;
            }),
        ),
      ),
    );
  }
}

import {
  AUDIT_OUTCOMES,
  AuditLog,
  MAX_PAGE_SIZE,
  type AuditPage,
  type VerifyResult,
} from '@lib/audit';
import type { TenantId } from '@lib/ids';
import {
  Controller,
  Get,
  HttpCode,
  Param,
  Post,
  Query,
  UseFilters,
  UseGuards,
  UseInterceptors,
} from '@nestjs/common';
import { z } from 'zod';
import { AdminAuditInterceptor } from './admin-audit.interceptor';
import { AdminErrorsFilter } from './admin-errors.filter';
import { AdminRoute } from './admin-route';
import { AdminGuard } from './admin.guard';
import { parseQuery, queryInteger, queryText, queryTime, TenantIdPipe } from './params';

/** The query of the audit trail; filters combine with AND, time is `from ≤ t < to`. */
export const auditQuery = z.object({
  from: queryTime.optional(),
  to: queryTime.optional(),
  principal: queryText.optional(),
  operation: queryText.optional(),
  outcome: z.enum(AUDIT_OUTCOMES).optional(),
  resource: queryText.optional(),
  limit: queryInteger(1, MAX_PAGE_SIZE).optional(),
  cursor: queryText.optional(),
});

/**
 * A tenant's audit trail (the platform's own under the tenant id `_platform`): records newest first with
 * filters and cursor pagination, and the verification of its hash chain.
 */
@Controller('admin/v1/tenants/:tenantId/audit')
@UseGuards(AdminGuard)
@UseFilters(AdminErrorsFilter)
@UseInterceptors(AdminAuditInterceptor)
export class AuditController {
  constructor(private readonly log: AuditLog) {}

  @Get()
  @AdminRoute('admin.audit.query', 'tenant:admin')
  query(
    @Param('tenantId', TenantIdPipe) tenantId: TenantId,
    @Query() query: Record<string, unknown>,
  ): Promise<AuditPage> {
    const { principal, ...filters } = parseQuery(auditQuery, query);
    return this.log.query({ tenantId, principalId: principal, ...filters });
  }

  /** Recomputes the tenant's chain; names the first broken record when there is one. */
  @Post('verify')
  @HttpCode(200)
  @AdminRoute('admin.audit.verify', 'tenant:admin')
  verify(@Param('tenantId', TenantIdPipe) tenantId: TenantId): Promise<VerifyResult> {
    return this.log.verify(tenantId);
  }
}

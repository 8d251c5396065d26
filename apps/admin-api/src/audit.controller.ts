import {
  AUDIT_OUTCOMES,
  AuditLog,
  type AuditOutcome,
  type AuditPage,
  type VerifyResult,
} from '@lib/audit';
import { InvalidInput } from '@lib/tenancy';
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
import { AdminAuditInterceptor } from './admin-audit.interceptor';
import { AdminErrorsFilter } from './admin-errors.filter';
import { AdminRoute } from './admin-route';
import { AdminGuard } from './admin.guard';
import { queryText, tenantParam } from './params';

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
    @Param('tenantId') tenantId: string,
    @Query() query: Record<string, unknown>,
  ): Promise<AuditPage> {
    const text = (name: string): string | undefined => queryText(query, name);
    const time = (name: string): Date | undefined => {
      const value = text(name);
      if (value === undefined) {
        return undefined;
      }
      const at = new Date(value);
      if (Number.isNaN(at.getTime())) {
        throw new InvalidInput(`query parameter ${name} must be an RFC 3339 time`, [
          { field: name, description: 'must be an RFC 3339 time' },
        ]);
      }
      return at;
    };
    const outcome = text('outcome');
    if (outcome !== undefined && !(AUDIT_OUTCOMES as readonly string[]).includes(outcome)) {
      throw new InvalidInput(
        `query parameter outcome must be one of ${AUDIT_OUTCOMES.join(', ')}`,
        [{ field: 'outcome', description: `one of ${AUDIT_OUTCOMES.join(', ')}` }],
      );
    }
    const limit = text('limit');
    const from = time('from');
    const to = time('to');
    const principalId = text('principal');
    const operation = text('operation');
    const resource = text('resource');
    const cursor = text('cursor');
    return this.log.query({
      tenantId: tenantParam(tenantId),
      ...(from ? { from } : {}),
      ...(to ? { to } : {}),
      ...(principalId ? { principalId } : {}),
      ...(operation ? { operation } : {}),
      ...(outcome ? { outcome: outcome as AuditOutcome } : {}),
      ...(resource ? { resource } : {}),
      ...(limit !== undefined ? { limit: Number(limit) } : {}),
      ...(cursor ? { cursor } : {}),
    });
  }

  /** Recomputes the tenant's chain; names the first broken record when there is one. */
  @Post('verify')
  @HttpCode(200)
  @AdminRoute('admin.audit.verify', 'tenant:admin')
  verify(@Param('tenantId') tenantId: string): Promise<VerifyResult> {
    return this.log.verify(tenantParam(tenantId));
  }
}

import type { TenantId } from '@lib/ids';
import { Conflict, InvalidInput, parseInput, TenantStore, type TenantRecord } from '@lib/tenancy';
import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Patch,
  Post,
  UseFilters,
  UseGuards,
  UseInterceptors,
} from '@nestjs/common';
import { z } from 'zod';
import { AdminAuditInterceptor } from './admin-audit.interceptor';
import { AdminErrorsFilter } from './admin-errors.filter';
import { AdminRoute } from './admin-route';
import { AdminGuard } from './admin.guard';
import { TenantIdPipe } from './params';
import { TenantUsageReader, type UsageReport } from './tenant-usage';

/** The body of a purge: the tenant id again, so that a purge is never sent by mistake. */
export const purgeConfirmationSchema = z.object({
  confirm: z.string().describe('the tenant id again'),
});

/** Tenants: create, list, read, change quotas, suspend, resume, and delete in two steps. */
@Controller('admin/v1/tenants')
@UseGuards(AdminGuard)
@UseFilters(AdminErrorsFilter)
@UseInterceptors(AdminAuditInterceptor)
export class TenantsController {
  constructor(
    private readonly tenants: TenantStore,
    private readonly usageReader: TenantUsageReader,
  ) {}

  @Post()
  @AdminRoute('admin.tenant.create', 'platform:admin')
  create(@Body() body: unknown): Promise<TenantRecord> {
    return this.tenants.create(body);
  }

  @Get()
  @AdminRoute('admin.tenant.list', 'platform:admin')
  async list(): Promise<{ tenants: TenantRecord[] }> {
    return { tenants: await this.tenants.list() };
  }

  @Get(':tenantId')
  @AdminRoute('admin.tenant.get', 'tenant:admin')
  get(@Param('tenantId', TenantIdPipe) tenantId: TenantId): Promise<TenantRecord> {
    return this.tenants.get(tenantId);
  }

  @Patch(':tenantId')
  @AdminRoute('admin.tenant.update', 'platform:admin')
  update(
    @Param('tenantId', TenantIdPipe) tenantId: TenantId,
    @Body() body: unknown,
  ): Promise<TenantRecord> {
    return this.tenants.update(tenantId, body);
  }

  /** What the tenant uses of its quotas now (requests this second, tasks not yet terminal). */
  @Get(':tenantId/usage')
  @AdminRoute('admin.tenant.usage', 'tenant:admin')
  async usage(@Param('tenantId', TenantIdPipe) tenantId: TenantId): Promise<UsageReport> {
    const tenant = await this.tenants.get(tenantId);
    return this.usageReader.report(tenant.tenantId, tenant.quotas);
  }

  /** Refuses the tenant's calls (PERMISSION_DENIED) and hides its cards; its data stays. */
  @Post(':tenantId/suspend')
  @HttpCode(200)
  @AdminRoute('admin.tenant.suspend', 'platform:admin')
  suspend(@Param('tenantId', TenantIdPipe) tenantId: TenantId): Promise<TenantRecord> {
    return this.tenants.setStatus(tenantId, 'suspended');
  }

  @Post(':tenantId/resume')
  @HttpCode(200)
  @AdminRoute('admin.tenant.resume', 'platform:admin')
  resume(@Param('tenantId', TenantIdPipe) tenantId: TenantId): Promise<TenantRecord> {
    return this.tenants.setStatus(tenantId, 'active');
  }

  /** The first step of a deletion: the tenant is `deleting` (its calls refused) until purged or resumed. */
  @Delete(':tenantId')
  @HttpCode(202)
  @AdminRoute('admin.tenant.delete', 'platform:admin')
  remove(@Param('tenantId', TenantIdPipe) tenantId: TenantId): Promise<TenantRecord> {
    return this.tenants.setStatus(tenantId, 'deleting');
  }

  /** The second step: `{"confirm": "<tenantId>"}` removes everything the tenant owns. */
  @Post(':tenantId/purge')
  @HttpCode(200)
  @AdminRoute('admin.tenant.purge', 'platform:admin')
  async purge(
    @Param('tenantId', TenantIdPipe) tenantId: TenantId,
    @Body() body: unknown,
  ): Promise<{ tenantId: TenantId; deleted: Record<string, number> }> {
    const { confirm } = parseInput(purgeConfirmationSchema, body, 'purge confirmation');
    if (confirm !== tenantId) {
      throw new InvalidInput('a purge must be confirmed with the tenant id', [
        { field: 'confirm', description: `must be "${tenantId}"` },
      ]);
    }
    const status = (await this.tenants.get(tenantId)).status;
    if (status !== 'deleting') {
      throw new Conflict(`tenant ${tenantId} is ${status}: DELETE it first, then purge`);
    }
    return { tenantId, deleted: await this.tenants.purge(tenantId) };
  }
}

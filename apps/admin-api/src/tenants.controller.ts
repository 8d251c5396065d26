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
import { tenantParam } from './params';
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
  get(@Param('tenantId') tenantId: string): Promise<TenantRecord> {
    return this.tenants.get(tenantParam(tenantId));
  }

  @Patch(':tenantId')
  @AdminRoute('admin.tenant.update', 'platform:admin')
  update(@Param('tenantId') tenantId: string, @Body() body: unknown): Promise<TenantRecord> {
    return this.tenants.update(tenantParam(tenantId), body);
  }

  /** What the tenant uses of its quotas now (requests this second, tasks not yet terminal). */
  @Get(':tenantId/usage')
  @AdminRoute('admin.tenant.usage', 'tenant:admin')
  async usage(@Param('tenantId') tenantId: string): Promise<UsageReport> {
    const tenant = await this.tenants.get(tenantParam(tenantId));
    return this.usageReader.report(tenant.tenantId, tenant.quotas);
  }

  /** Refuses the tenant's calls (PERMISSION_DENIED) and hides its cards; its data stays. */
  @Post(':tenantId/suspend')
  @HttpCode(200)
  @AdminRoute('admin.tenant.suspend', 'platform:admin')
  suspend(@Param('tenantId') tenantId: string): Promise<TenantRecord> {
    return this.tenants.setStatus(tenantParam(tenantId), 'suspended');
  }

  @Post(':tenantId/resume')
  @HttpCode(200)
  @AdminRoute('admin.tenant.resume', 'platform:admin')
  resume(@Param('tenantId') tenantId: string): Promise<TenantRecord> {
    return this.tenants.setStatus(tenantParam(tenantId), 'active');
  }

  /** The first step of a deletion: the tenant is `deleting` (its calls refused) until purged or resumed. */
  @Delete(':tenantId')
  @HttpCode(202)
  @AdminRoute('admin.tenant.delete', 'platform:admin')
  remove(@Param('tenantId') tenantId: string): Promise<TenantRecord> {
    return this.tenants.setStatus(tenantParam(tenantId), 'deleting');
  }

  /** The second step: `{"confirm": "<tenantId>"}` removes everything the tenant owns. */
  @Post(':tenantId/purge')
  @HttpCode(200)
  @AdminRoute('admin.tenant.purge', 'platform:admin')
  async purge(
    @Param('tenantId') tenantId: string,
    @Body() body: unknown,
  ): Promise<{ tenantId: string; deleted: Record<string, number> }> {
    const tenant = tenantParam(tenantId);
    const { confirm } = parseInput(purgeConfirmationSchema, body, 'purge confirmation');
    if (confirm !== tenant) {
      throw new InvalidInput('a purge must be confirmed with the tenant id', [
        { field: 'confirm', description: `must be "${tenant}"` },
      ]);
    }
    const status = (await this.tenants.get(tenant)).status;
    if (status !== 'deleting') {
      throw new Conflict(`tenant ${tenant} is ${status}: DELETE it first, then purge`);
    }
    return { tenantId: tenant, deleted: await this.tenants.purge(tenant) };
  }
}

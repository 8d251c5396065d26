import type { TenantId } from '@lib/ids';
import { IssuerStore, type IssuerRecord } from '@lib/tenancy';
import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Put,
  Res,
  UseFilters,
  UseGuards,
  UseInterceptors,
} from '@nestjs/common';
import type { Response } from 'express';
import { AdminAuditInterceptor } from './admin-audit.interceptor';
import { AdminErrorsFilter } from './admin-errors.filter';
import { AdminRoute } from './admin-route';
import { AdminGuard } from './admin.guard';
import { TenantIdPipe } from './params';

/**
 * The OIDC issuers a tenant trusts: their bearer tokens authenticate its clients, and its agents' cards
 * declare the bearer scheme, on every replica within a second.
 */
@Controller('admin/v1/tenants/:tenantId/oidc-issuers')
@UseGuards(AdminGuard)
@UseFilters(AdminErrorsFilter)
@UseInterceptors(AdminAuditInterceptor)
export class IssuersController {
  constructor(private readonly issuers: IssuerStore) {}

  @Put(':issuerId')
  @AdminRoute('admin.oidc-issuer.put', 'tenant:admin')
  async put(
    @Param('tenantId', TenantIdPipe) tenantId: TenantId,
    @Param('issuerId') issuerId: string,
    @Body() body: unknown,
    @Res({ passthrough: true }) res: Response,
  ): Promise<IssuerRecord> {
    const { issuer, created } = await this.issuers.put(tenantId, issuerId, body);
    res.status(created ? 201 : 200);
    return issuer;
  }

  @Get()
  @AdminRoute('admin.oidc-issuer.list', 'tenant:admin')
  async list(
    @Param('tenantId', TenantIdPipe) tenantId: TenantId,
  ): Promise<{ issuers: IssuerRecord[] }> {
    return { issuers: await this.issuers.list(tenantId) };
  }

  @Delete(':issuerId')
  @HttpCode(204)
  @AdminRoute('admin.oidc-issuer.delete', 'tenant:admin')
  async remove(
    @Param('tenantId', TenantIdPipe) tenantId: TenantId,
    @Param('issuerId') issuerId: string,
  ): Promise<void> {
    await this.issuers.remove(tenantId, issuerId);
  }
}

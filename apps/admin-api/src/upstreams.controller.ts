import type { UpstreamSummary } from '@lib/upstream';
import {
  Body,
  Controller,
  Get,
  HttpCode,
  Param,
  Post,
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
import { agentParam, tenantParam } from './params';
import { UpstreamImporter, type ImportedAgent } from './upstream-importer';

/**
 * Agents imported from existing A2A servers (docs/upstream.md): import one from its card, read its card again,
 * see where it forwards to. The upstream's headers are write-only: only their names are ever answered.
 */
@Controller('admin/v1/tenants/:tenantId/agents')
@UseGuards(AdminGuard)
@UseFilters(AdminErrorsFilter)
@UseInterceptors(AdminAuditInterceptor)
export class UpstreamsController {
  constructor(private readonly importer: UpstreamImporter) {}

  @Post(':agentId/import')
  @AdminRoute('admin.agent.import', 'tenant:admin')
  async import(
    @Param('tenantId') tenantId: string,
    @Param('agentId') agentId: string,
    @Body() body: unknown,
    @Res({ passthrough: true }) res: Response,
  ): Promise<ImportedAgent> {
    const imported = await this.importer.import(tenantParam(tenantId), agentId, body);
    res.status(imported.created ? 201 : 200);
    return imported;
  }

  @Post(':agentId/sync')
  @HttpCode(200)
  @AdminRoute('admin.agent.sync', 'tenant:admin')
  sync(
    @Param('tenantId') tenantId: string,
    @Param('agentId') agentId: string,
  ): Promise<ImportedAgent> {
    return this.importer.sync(agentParam(tenantId, agentId));
  }

  @Get(':agentId/upstream')
  @AdminRoute('admin.agent.upstream', 'tenant:admin')
  upstream(
    @Param('tenantId') tenantId: string,
    @Param('agentId') agentId: string,
  ): Promise<UpstreamSummary> {
    return this.importer.get(agentParam(tenantId, agentId));
  }
}

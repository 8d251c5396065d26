import type { AgentId, TenantId } from '@lib/ids';
import type { UpstreamSummary } from '@lib/upstream';
import {
  Body,
  Controller,
  Get,
  HttpCode,
  Param,
  Post,
  Req,
  Res,
  UseFilters,
  UseGuards,
  UseInterceptors,
} from '@nestjs/common';
import type { Response } from 'express';
import { AdminAudit } from './admin-audit';
import { AdminAuditInterceptor } from './admin-audit.interceptor';
import { AdminErrorsFilter } from './admin-errors.filter';
import { AdminRoute } from './admin-route';
import { AdminGuard, type AdminRequest } from './admin.guard';
import { AgentIdPipe, TenantIdPipe } from './params';
import { EXTENDED_CARD_OPERATION, UpstreamImporter, type ImportedAgent } from './upstream-importer';

/**
 * Agents imported from existing A2A servers (docs/upstream.md): import one from its card, read its card again,
 * see where it forwards to. The upstream's headers are write-only: only their names are ever answered. What
 * an import or sync could not do (its warnings) is audited besides the call itself, as failed.
 */
@Controller('admin/v1/tenants/:tenantId/agents')
@UseGuards(AdminGuard)
@UseFilters(AdminErrorsFilter)
@UseInterceptors(AdminAuditInterceptor)
export class UpstreamsController {
  constructor(
    private readonly importer: UpstreamImporter,
    private readonly audit: AdminAudit,
  ) {}

  @Post(':agentId/import')
  @AdminRoute('admin.agent.import', 'tenant:admin')
  async import(
    @Param('tenantId', TenantIdPipe) tenantId: TenantId,
    @Param('agentId') agentId: string,
    @Body() body: unknown,
    @Req() req: AdminRequest,
    @Res({ passthrough: true }) res: Response,
  ): Promise<ImportedAgent> {
    const imported = await this.importer.import(tenantId, agentId, body);
    await this.auditWarnings(req, imported);
    res.status(imported.created ? 201 : 200);
    return imported;
  }

  @Post(':agentId/sync')
  @HttpCode(200)
  @AdminRoute('admin.agent.sync', 'tenant:admin')
  async sync(
    @Param('tenantId', TenantIdPipe) tenantId: TenantId,
    @Param('agentId', AgentIdPipe) agentId: AgentId,
    @Req() req: AdminRequest,
  ): Promise<ImportedAgent> {
    const synced = await this.importer.sync({ tenantId, agentId });
    await this.auditWarnings(req, synced);
    return synced;
  }

  @Get(':agentId/upstream')
  @AdminRoute('admin.agent.upstream', 'tenant:admin')
  upstream(
    @Param('tenantId', TenantIdPipe) tenantId: TenantId,
    @Param('agentId', AgentIdPipe) agentId: AgentId,
  ): Promise<UpstreamSummary> {
    return this.importer.get({ tenantId, agentId });
  }

  private async auditWarnings(req: AdminRequest, imported: ImportedAgent): Promise<void> {
    for (const warning of imported.warnings) {
      await this.audit.record(req, EXTENDED_CARD_OPERATION, 'failed', warning.code);
    }
  }
}

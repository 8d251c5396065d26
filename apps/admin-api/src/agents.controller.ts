import type { AgentId, TenantId } from '@lib/ids';
import { AgentStore, type AgentRecord } from '@lib/tenancy';
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
import { AgentIdPipe, TenantIdPipe } from './params';

/**
 * A tenant's agents: the card definition and the worker policy. A change is served by every ingress and
 * task-service replica within a second, and the card's ETag follows it.
 */
@Controller('admin/v1/tenants/:tenantId/agents')
@UseGuards(AdminGuard)
@UseFilters(AdminErrorsFilter)
@UseInterceptors(AdminAuditInterceptor)
export class AgentsController {
  constructor(private readonly agents: AgentStore) {}

  @Put(':agentId')
  @AdminRoute('admin.agent.put', 'tenant:admin')
  async put(
    @Param('tenantId', TenantIdPipe) tenantId: TenantId,
    @Param('agentId') agentId: string,
    @Body() body: unknown,
    @Res({ passthrough: true }) res: Response,
  ): Promise<AgentRecord> {
    const { agent, created } = await this.agents.put(tenantId, agentId, body);
    res.status(created ? 201 : 200);
    return agent;
  }

  @Get()
  @AdminRoute('admin.agent.list', 'tenant:admin')
  async list(
    @Param('tenantId', TenantIdPipe) tenantId: TenantId,
  ): Promise<{ agents: AgentRecord[] }> {
    return { agents: await this.agents.list(tenantId) };
  }

  @Get(':agentId')
  @AdminRoute('admin.agent.get', 'tenant:admin')
  get(
    @Param('tenantId', TenantIdPipe) tenantId: TenantId,
    @Param('agentId', AgentIdPipe) agentId: AgentId,
  ): Promise<AgentRecord> {
    return this.agents.get({ tenantId, agentId });
  }

  @Delete(':agentId')
  @HttpCode(204)
  @AdminRoute('admin.agent.delete', 'tenant:admin')
  async remove(
    @Param('tenantId', TenantIdPipe) tenantId: TenantId,
    @Param('agentId', AgentIdPipe) agentId: AgentId,
  ): Promise<void> {
    await this.agents.remove({ tenantId, agentId });
  }
}

import type { TenantId } from '@lib/ids';
import { TenantStore } from '@lib/tenancy';
import { WorkerSessionStore, WorkQueue, type ConnectedWorker } from '@lib/work-queue';
import {
  Controller,
  Get,
  Param,
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
import { parseQuery, queryText, TenantIdPipe } from './params';

/** The query of the workers' listing. */
export const workerQuery = z.object({ agentId: queryText.optional() });

/**
 * The worker sessions connected to the task-service replicas, per tenant (docs/admin.md "Workers"): each with
 * its replica, capacity, leases and heartbeats, as its replica last wrote it (every few seconds).
 */
@Controller('admin/v1/tenants/:tenantId/workers')
@UseGuards(AdminGuard)
@UseFilters(AdminErrorsFilter)
@UseInterceptors(AdminAuditInterceptor)
export class WorkersController {
  constructor(
    private readonly tenants: TenantStore,
    private readonly sessions: WorkerSessionStore,
    private readonly work: WorkQueue,
  ) {}

  @Get()
  @AdminRoute('admin.worker.list', 'tenant:admin')
  async list(
    @Param('tenantId', TenantIdPipe) tenantId: TenantId,
    @Query() query: Record<string, unknown>,
  ): Promise<{ workers: ConnectedWorker[] }> {
    const tenant = (await this.tenants.get(tenantId)).tenantId;
    const { agentId } = parseQuery(workerQuery, query);
    const [sessions, leases] = await Promise.all([
      this.sessions.list(tenant, agentId),
      this.work.leasesBySession(tenant, agentId),
    ]);
    return {
      workers: sessions.map((session) => ({
        ...session,
        leases: leases.get(session.sessionId) ?? [],
      })),
    };
  }
}

import type { TenantId } from '@lib/ids';
import {
  DELIVERY_STATES,
  MAX_DELIVERY_PAGE_SIZE,
  PushDeliveryStore,
  type DeliveryPage,
  type DeliveryRecord,
} from '@lib/push';
import { NotFound } from '@lib/tenancy';
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
import { parseQuery, queryInteger, queryText, TenantIdPipe } from './params';
import { PushLanes } from './push-lanes';

/** The query of the deliveries' listing; filters combine with AND. */
export const deliveryQuery = z.object({
  task: queryText.optional(),
  state: z.enum(DELIVERY_STATES).optional(),
  limit: queryInteger(1, MAX_DELIVERY_PAGE_SIZE).optional(),
  cursor: queryText.optional(),
});

/**
 * A tenant's webhook deliveries (docs/push.md "Operating"): each with its state, attempts, last outcome and
 * next attempt, newest first with filters and cursor pagination; and the redrive of a dead one, which sends
 * it again from its first attempt at once.
 */
@Controller('admin/v1/tenants/:tenantId/push-deliveries')
@UseGuards(AdminGuard)
@UseFilters(AdminErrorsFilter)
@UseInterceptors(AdminAuditInterceptor)
export class PushDeliveriesController {
  constructor(
    private readonly deliveries: PushDeliveryStore,
    private readonly lanes: PushLanes,
  ) {}

  @Get()
  @AdminRoute('admin.push-delivery.list', 'tenant:admin')
  list(
    @Param('tenantId', TenantIdPipe) tenantId: TenantId,
    @Query() query: Record<string, unknown>,
  ): Promise<DeliveryPage> {
    const { task, ...filters } = parseQuery(deliveryQuery, query);
    return this.deliveries.list({ tenantId, taskId: task, ...filters });
  }

  /** Only a dead delivery is redriven; any other, like an unknown one, is not found (nothing changes). */
  @Post(':deliveryId/redrive')
  @HttpCode(200)
  @AdminRoute('admin.push-delivery.redrive', 'tenant:admin')
  async redrive(
    @Param('tenantId', TenantIdPipe) tenantId: TenantId,
    @Param('deliveryId') deliveryId: string,
  ): Promise<{ delivery: DeliveryRecord }> {
    const delivery = await this.deliveries.redrive(tenantId, deliveryId);
    if (!delivery) {
      throw new NotFound(`no dead delivery ${deliveryId.slice(0, 140)} in tenant ${tenantId}`);
    }
    await this.lanes.wake(delivery);
    return { delivery };
  }
}

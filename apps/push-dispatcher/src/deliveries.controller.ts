import type { PushDispatcherConfig } from '@lib/config';
import { isTransientDatabaseError } from '@lib/event-store';
import { Controller, Get, Inject, Logger, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { createHash, timingSafeEqual } from 'node:crypto';
import { DeliveryStore, type DeliveryState } from './delivery-store';
import { attemptJobId, LaneQueue } from './lane-queue';
import { PUSH_CONFIG } from './tokens';

const STATES: readonly DeliveryState[] = ['pending', 'sending', 'delivered', 'dead'];
const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1_000;

/**
 * The operator's view of webhook deliveries (docs/push.md "Operating"): list a tenant's or a task's
 * deliveries with their state, attempts, last error and next attempt, and redrive dead ones. Authenticated
 * with `Authorization: Bearer <PUSH_ADMIN_TOKEN>`; without a configured token the routes refuse everyone.
 * The admin API (issue 12) takes these routes over.
 */
@Controller('admin/push')
export class DeliveriesController {
  private readonly logger = new Logger(DeliveriesController.name);
  private readonly token: Buffer | null;

  constructor(
    @Inject(PUSH_CONFIG) config: PushDispatcherConfig,
    private readonly store: DeliveryStore,
    private readonly lanes: LaneQueue,
  ) {
    this.token = config.PUSH_ADMIN_TOKEN ? digest(config.PUSH_ADMIN_TOKEN) : null;
  }

  @Get('deliveries')
  async list(
    @Req() req: Request,
    @Res() res: Response,
    @Query('tenant') tenant: unknown,
    @Query('task') task: unknown,
    @Query('state') state: unknown,
    @Query('limit') limit: unknown,
  ): Promise<void> {
    const tenantId = this.tenantOf(req, res, tenant);
    if (tenantId === null) {
      return;
    }
    if (task !== undefined && (typeof task !== 'string' || task === '')) {
      refuse(res, 400, 'query parameter task must be a task id');
      return;
    }
    if (state !== undefined && !STATES.includes(state as DeliveryState)) {
      refuse(res, 400, `query parameter state must be one of ${STATES.join(', ')}`);
      return;
    }
    const size = limit === undefined ? DEFAULT_LIMIT : Number(limit);
    if (!Number.isInteger(size) || size < 1 || size > MAX_LIMIT) {
      refuse(res, 400, `query parameter limit must be an integer from 1 to ${MAX_LIMIT}`);
      return;
    }
    await this.answer(res, async () => ({
      deliveries: await this.store.list({
        tenantId,
        ...(typeof task === 'string' ? { taskId: task } : {}),
        ...(state !== undefined ? { state: state as DeliveryState } : {}),
        limit: size,
      }),
    }));
  }

  @Post('deliveries/:id/redrive')
  async redrive(
    @Req() req: Request,
    @Res() res: Response,
    @Param('id') id: string,
    @Query('tenant') tenant: unknown,
  ): Promise<void> {
    const tenantId = this.tenantOf(req, res, tenant);
    if (tenantId === null) {
      return;
    }
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id)) {
      refuse(res, 404, `no dead delivery ${id} in tenant ${tenantId}`);
      return;
    }
    await this.answer(
      res,
      async () => {
        const delivery = await this.store.redrive(tenantId, id);
        if (!delivery) {
          return null;
        }
        const lane = { tenantId, taskId: delivery.taskId, configId: delivery.configId };
        await this.lanes.schedule([{ lane, jobId: `${attemptJobId(id, 0)}-r${Date.now()}` }]);
        this.logger.log(`delivery ${id} of tenant ${tenantId} redriven`);
        return { delivery };
      },
      `no dead delivery ${id} in tenant ${tenantId}`,
    );
  }

  /** The request's tenant when the caller is an operator and names one; else refused (and null). */
  private tenantOf(req: Request, res: Response, tenant: unknown): string | null {
    if (!this.authorized(req, res)) {
      return null;
    }
    if (typeof tenant !== 'string' || tenant === '') {
      refuse(res, 400, 'query parameter tenant is required');
      return null;
    }
    return tenant;
  }

  private authorized(req: Request, res: Response): boolean {
    const header = req.headers.authorization ?? '';
    const presented = /^Bearer (.+)$/.exec(header)?.[1];
    if (this.token && presented && timingSafeEqual(digest(presented), this.token)) {
      return true;
    }
    res.setHeader('WWW-Authenticate', 'Bearer realm="a2a-push-admin"');
    refuse(
      res,
      401,
      this.token
        ? 'an operator token is required (Authorization: Bearer <PUSH_ADMIN_TOKEN>)'
        : 'the push admin routes are off: PUSH_ADMIN_TOKEN is not configured',
    );
    return false;
  }

  private async answer(
    res: Response,
    work: () => Promise<object | null>,
    notFound = 'not found',
  ): Promise<void> {
    try {
      const body = await work();
      if (body === null) {
        refuse(res, 404, notFound);
      } else {
        res.status(200).json(body);
      }
    } catch (error) {
      if (isTransientDatabaseError(error)) {
        refuse(res, 503, 'the platform database is unavailable; retry shortly');
        return;
      }
      this.logger.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
      refuse(res, 500, 'internal error');
    }
  }
}

function refuse(res: Response, status: number, message: string): void {
  res.status(status).json({ error: { code: status, message } });
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

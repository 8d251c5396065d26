import { TASK_STATES } from '@lib/a2a-protocol';
import type { TenantId } from '@lib/ids';
import { NotFound, TenantStore } from '@lib/tenancy';
import {
  Controller,
  Get,
  Param,
  Query,
  Res,
  UseFilters,
  UseGuards,
  UseInterceptors,
} from '@nestjs/common';
import type { Response } from 'express';
import { z } from 'zod';
import { AdminAuditInterceptor } from './admin-audit.interceptor';
import { AdminErrorsFilter } from './admin-errors.filter';
import { AdminRoute } from './admin-route';
import { AdminGuard } from './admin.guard';
import { parseQuery, queryInteger, queryText, TenantIdPipe } from './params';
import { StreamingAnswer } from './streaming-answer';
import {
  MAX_TASK_PAGE_SIZE,
  TaskAdminStore,
  type TaskChange,
  type TaskDetail,
  type TaskPage,
  type TimelinePage,
} from './task-admin.store';
import { TaskChangeFeed } from './task-changes';

/** A comment line on every open change stream this often, so that proxies and clients see it alive. */
export const CHANGES_HEARTBEAT_MS = 15_000;
/** A change stream whose client reads slower than this much output is behind is cut off (it reconnects). */
const MAX_UNSENT_BYTES = 1 << 20;

/** What the listing and the change stream filter on. */
const taskFilters = {
  agentId: queryText.optional(),
  state: z.enum(TASK_STATES).optional(),
  contextId: queryText.optional(),
};
/** The query of the listing. */
export const taskListQuery = z.object({
  ...taskFilters,
  limit: queryInteger(1, MAX_TASK_PAGE_SIZE).default(50),
  cursor: queryText.optional().describe('nextCursor of the previous page, same filters'),
});
/** The query of the change stream. */
export const taskChangesQuery = z.object(taskFilters);
/** The query of a task's timeline. */
export const taskEventsQuery = z.object({
  after: queryInteger(0, 2 ** 31 - 1)
    .default(0)
    .describe('events after this generation (nextAfter of the previous page)'),
  limit: queryInteger(1, MAX_TASK_PAGE_SIZE).default(200),
});

/**
 * A tenant's tasks for operators (docs/admin.md "Tasks"): the listing, one task as stored, its event timeline
 * from the log, and the live stream of task changes.
 */
@Controller('admin/v1/tenants/:tenantId/tasks')
@UseGuards(AdminGuard)
@UseFilters(AdminErrorsFilter)
@UseInterceptors(AdminAuditInterceptor)
export class TasksController {
  constructor(
    private readonly tenants: TenantStore,
    private readonly tasks: TaskAdminStore,
    private readonly feed: TaskChangeFeed,
  ) {}

  @Get()
  @AdminRoute('admin.task.list', 'tenant:admin')
  async list(
    @Param('tenantId', TenantIdPipe) tenantId: TenantId,
    @Query() query: Record<string, unknown>,
  ): Promise<TaskPage> {
    const tenant = await this.tenant(tenantId);
    return this.tasks.list({ tenantId: tenant, ...parseQuery(taskListQuery, query) });
  }

  /**
   * `text/event-stream`: an `event: task` with a {@link TaskChange} for every change of one of the tenant's
   * tasks (matching the filters) from now on, a comment line every {@link CHANGES_HEARTBEAT_MS}. Declared
   * before `:taskId`, which would otherwise take the path.
   */
  @Get('changes')
  @AdminRoute('admin.task.changes', 'tenant:admin')
  async changes(
    @Param('tenantId', TenantIdPipe) tenantId: TenantId,
    @Query() query: Record<string, unknown>,
    @Res() res: Response,
  ): Promise<StreamingAnswer> {
    const tenant = await this.tenant(tenantId);
    const { agentId, contextId, state } = parseQuery(taskChangesQuery, query);
    const matches = (change: TaskChange): boolean =>
      (agentId === undefined || change.agentId === agentId) &&
      (contextId === undefined || change.contextId === contextId) &&
      (state === undefined || change.state === state);
    return new StreamingAnswer(() => this.stream(tenant, matches, res));
  }

  @Get(':taskId')
  @AdminRoute('admin.task.get', 'tenant:admin')
  async get(
    @Param('tenantId', TenantIdPipe) tenantId: TenantId,
    @Param('taskId') taskId: string,
  ): Promise<TaskDetail> {
    const tenant = await this.tenant(tenantId);
    const task = await this.tasks.get(tenant, taskId);
    if (!task) {
      throw new NotFound(`no task ${taskId.slice(0, 140)} in tenant ${tenant}`);
    }
    return task;
  }

  /** The task stream's events after generation `after` (default 0), oldest first. */
  @Get(':taskId/events')
  @AdminRoute('admin.task.events', 'tenant:admin')
  async events(
    @Param('tenantId', TenantIdPipe) tenantId: TenantId,
    @Param('taskId') taskId: string,
    @Query() query: Record<string, unknown>,
  ): Promise<TimelinePage> {
    const tenant = await this.tenant(tenantId);
    const { after, limit } = parseQuery(taskEventsQuery, query);
    const page = await this.tasks.timeline(tenant, taskId, after, limit);
    if (!page) {
      throw new NotFound(`no task ${taskId.slice(0, 140)} in tenant ${tenant}`);
    }
    return page;
  }

  /** The tenant a path names, if it exists (404 otherwise). */
  private async tenant(tenantId: TenantId): Promise<TenantId> {
    return (await this.tenants.get(tenantId)).tenantId;
  }

  private stream(
    tenantId: TenantId,
    matches: (change: TaskChange) => boolean,
    res: Response,
  ): void {
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      'X-Accel-Buffering': 'no',
    });
    res.write(': task changes\n\n');
    let stop = (): void => undefined;
    const end = (): void => {
      clearInterval(heartbeat);
      stop();
      if (!res.writableEnded) {
        res.end();
      }
    };
    const write = (text: string): void => {
      if (res.writableLength > MAX_UNSENT_BYTES) {
        end();
      } else {
        res.write(text);
      }
    };
    const heartbeat = setInterval(() => write(': heartbeat\n\n'), CHANGES_HEARTBEAT_MS);
    stop = this.feed.watch({
      tenantId,
      matches,
      send: (change) => write(`event: task\ndata: ${JSON.stringify(change)}\n\n`),
      end,
    });
    // The client went away (or the connection broke): stop watching.
    res.on('close', end);
  }
}

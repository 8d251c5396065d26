import type { ListTasksRequest, ListTasksResponse } from '@lib/a2a-protocol';
import { Injectable } from '@nestjs/common';
import type { CallContext, Versioned } from '../call-context';
import { TaskViews } from './task-views';

/** ListTasks (spec digest §10.7). */
@Injectable()
export class ListTasksQuery {
  constructor(private readonly views: TaskViews) {}

  async execute(
    request: ListTasksRequest,
    ctx: CallContext,
  ): Promise<Versioned<ListTasksResponse>> {
    return { result: await this.views.list(ctx, request), version: 0 };
  }
}

import { applyHistoryLength, type GetTaskRequest, type Task } from '@lib/a2a-protocol';
import { taskIdOf } from '@lib/tenancy';
import { Injectable } from '@nestjs/common';
import type { CallContext, Versioned } from '../call-context';
import { TaskViews } from './task-views';

/** GetTask (spec digest §10.5 for historyLength). */
@Injectable()
export class GetTaskQuery {
  constructor(private readonly views: TaskViews) {}

  async execute(request: GetTaskRequest, ctx: CallContext): Promise<Versioned<Task>> {
    const record = await this.views.get(ctx, taskIdOf(request.id), 'read');
    return {
      result: applyHistoryLength(record.task, request.historyLength),
      version: record.version,
    };
  }
}

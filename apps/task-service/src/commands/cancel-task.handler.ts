import {
  isTerminalState,
  type CancelTaskRequest,
  type Task,
  type TaskStateName,
} from '@lib/a2a-protocol';
import type { TaskServiceConfig } from '@lib/config';
import { noteTask } from '@lib/observability';
import { decide } from '@lib/task-domain';
import { Inject, Injectable } from '@nestjs/common';
import {
  callAudit,
  callerMetadata,
  callerTask,
  type CallContext,
  type Versioned,
} from '../call-context';
import { TaskViews } from '../queries/task-views';
import { TASK_SERVICE_CONFIG } from '../tokens';
import { TaskDecisions } from '../write/task-decisions';
import { TaskWatch } from '../write/task-watch';

/**
 * CancelTask (spec digest §10.8). A queued or interrupted task is canceled at once; a running one is asked
 * to stop through its worker and ends CANCELED when the worker confirms or the grace deadline passes.
 * Returns the task after that (normally CANCELED).
 */
@Injectable()
export class CancelTaskHandler {
  constructor(
    private readonly tasks: TaskDecisions,
    private readonly views: TaskViews,
    private readonly watch: TaskWatch,
    @Inject(TASK_SERVICE_CONFIG) private readonly config: TaskServiceConfig,
  ) {}

  async execute(request: CancelTaskRequest, ctx: CallContext): Promise<Versioned<Task>> {
    const task = callerTask(ctx, request.id);
    noteTask(task.taskId);
    await this.views.get(ctx, task.taskId);
    const command = {
      type: 'RequestCancel' as const,
      requestedBy: ctx.principalId,
      ...(request.metadata ? { metadata: request.metadata } : {}),
      cancelGraceMs: this.config.CANCEL_GRACE_MS,
      now: new Date(),
    };
    await this.tasks.execute(
      task,
      (s) => decide(command, s),
      callerMetadata(ctx),
      callAudit(ctx, 'CancelTask', task),
    );
    // The sweeper enforces the deadline within one sweep interval; wait a little beyond that.
    const waitMs = this.config.CANCEL_GRACE_MS + 2 * this.config.SWEEP_INTERVAL_MS + 1_000;
    const record = await this.watch.waitFor(
      ctx,
      task.taskId,
      (r) => isTerminalState(r.state as TaskStateName),
      waitMs,
    );
    return { result: record.task, version: record.version };
  }
}

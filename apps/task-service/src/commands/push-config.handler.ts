import {
  A2aError,
  decodeConfigPageToken,
  encodeConfigPageToken,
  invalidParams,
  type DeleteTaskPushNotificationConfigRequest,
  type GetTaskPushNotificationConfigRequest,
  type ListTaskPushNotificationConfigsRequest,
  type ListTaskPushNotificationConfigsResponse,
  type TaskPushNotificationConfig,
} from '@lib/a2a-protocol';
import { decide } from '@lib/task-domain';
import { Injectable } from '@nestjs/common';
import {
  callAudit,
  callerMetadata,
  callerTask,
  type CallContext,
  type Versioned,
} from '../call-context';
import { IdGenerator } from '../clock';
import { PushConfigs } from '../queries/push-configs';
import { TaskViews } from '../queries/task-views';
import { TaskWriter } from '../write/task-writer';
import { pushConfigSpec } from './push-config-spec';

/** Configs per page of ListTaskPushNotificationConfigs when the request asks for none, and at most. */
const CONFIG_PAGE_SIZE = 100;

/**
 * The four push-config operations (spec digest §6 rows 7–11, §10.10), for tasks the caller may see: another
 * tenant's or principal's task, an exchange not shown as a task, and an unknown config id are all
 * TASK_NOT_FOUND. Registrations and removals are events of the task's stream; the config itself (URL and
 * secrets) is written beside them (docs/adr/0010-push-notifications.md). Whether the agent allows push at
 * all is the ingress's capability check.
 */
@Injectable()
export class PushConfigHandler {
  constructor(
    private readonly writer: TaskWriter,
    private readonly views: TaskViews,
    private readonly configs: PushConfigs,
    private readonly ids: IdGenerator,
  ) {}

  /** CreateTaskPushNotificationConfig: a client-chosen `id` is honoured (and replaces that config). */
  async create(
    request: TaskPushNotificationConfig,
    ctx: CallContext,
  ): Promise<Versioned<TaskPushNotificationConfig>> {
    if (!request.taskId) {
      throw invalidParams([{ field: 'taskId', description: 'is required' }]);
    }
    const task = callerTask(ctx, request.taskId);
    const { spec, origin } = pushConfigSpec(request, request.id || this.ids.randomId());
    await this.views.get(ctx, task.taskId);
    await this.writer.write({
      ...task,
      decide: (state) =>
        decide({ type: 'RegisterPushConfig', configId: spec.configId, origin }, state),
      metadata: callerMetadata(ctx),
      pushConfigs: [spec],
      audit: callAudit(ctx, 'CreateTaskPushNotificationConfig', task),
    });
    const { configId, ...config } = spec;
    return { result: { id: configId, taskId: task.taskId, ...config }, version: 0 };
  }

  /** GetTaskPushNotificationConfig: an unknown config is TASK_NOT_FOUND (spec digest §6). */
  async get(
    { taskId, id }: GetTaskPushNotificationConfigRequest,
    ctx: CallContext,
  ): Promise<Versioned<TaskPushNotificationConfig>> {
    const task = callerTask(ctx, taskId);
    await this.views.get(ctx, task.taskId);
    const config = await this.configs.find(task, id);
    if (!config) {
      throw new A2aError('TASK_NOT_FOUND', `task ${taskId} has no push notification config ${id}`, {
        taskId,
        configId: id,
      });
    }
    return { result: config, version: 0 };
  }

  /** ListTaskPushNotificationConfigs: by config id, `pageSize` (at most 100) at a time. */
  async list(
    request: ListTaskPushNotificationConfigsRequest,
    ctx: CallContext,
  ): Promise<Versioned<ListTaskPushNotificationConfigsResponse>> {
    const after = request.pageToken ? decodeConfigPageToken(request.pageToken) : null;
    const pageSize = Math.min(request.pageSize || CONFIG_PAGE_SIZE, CONFIG_PAGE_SIZE);
    const task = callerTask(ctx, request.taskId);
    await this.views.get(ctx, task.taskId);
    const rows = await this.configs.page(task, after, pageSize + 1);
    const configs = rows.slice(0, pageSize);
    const last = configs[configs.length - 1];
    return {
      result: {
        configs,
        ...(rows.length > pageSize && last?.id
          ? { nextPageToken: encodeConfigPageToken(last.id) }
          : {}),
      },
      version: 0,
    };
  }

  /** DeleteTaskPushNotificationConfig: idempotent, an unknown config id included (spec digest §6). */
  async delete(
    { taskId, id }: DeleteTaskPushNotificationConfigRequest,
    ctx: CallContext,
  ): Promise<Versioned<Record<string, never>>> {
    const task = callerTask(ctx, taskId);
    await this.views.get(ctx, task.taskId);
    await this.writer.write({
      ...task,
      decide: (state) => decide({ type: 'RemovePushConfig', configId: id }, state),
      metadata: callerMetadata(ctx),
      audit: callAudit(ctx, 'DeleteTaskPushNotificationConfig', task),
    });
    return { result: {}, version: 0 };
  }
}

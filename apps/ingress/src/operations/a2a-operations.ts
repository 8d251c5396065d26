import type {
  ListTaskPushNotificationConfigsResponse,
  ListTasksResponse,
  SendMessageResponse,
  Task,
  TaskCommandMethod,
  TaskPushNotificationConfig,
} from '@lib/a2a-protocol';
import type { CallContext } from '@lib/tenancy';

/** An operation's result and, when it shows a task, that task's generation (streams resume after it). */
export interface Versioned<T> {
  result: T;
  version: number;
}

/** The operations of the port, by their name in the internal contract (TaskCommandService). */
export type OperationName = TaskCommandMethod;

/**
 * The one port every A2A binding calls. Requests are the ProtoJSON documents of the A2A request messages;
 * implementations validate them and throw `A2aError` on failure. An implementation only says how an
 * operation reaches the task-service ({@link call}); the typed methods are the same for all.
 */
export abstract class A2aOperations {
  sendMessage(params: unknown, ctx: CallContext): Promise<Versioned<SendMessageResponse>> {
    return this.call('sendMessage', params, ctx) as Promise<Versioned<SendMessageResponse>>;
  }

  getTask(params: unknown, ctx: CallContext): Promise<Versioned<Task>> {
    return this.call('getTask', params, ctx) as Promise<Versioned<Task>>;
  }

  listTasks(params: unknown, ctx: CallContext): Promise<Versioned<ListTasksResponse>> {
    return this.call('listTasks', params, ctx) as Promise<Versioned<ListTasksResponse>>;
  }

  cancelTask(params: unknown, ctx: CallContext): Promise<Versioned<Task>> {
    return this.call('cancelTask', params, ctx) as Promise<Versioned<Task>>;
  }

  createTaskPushNotificationConfig(
    params: unknown,
    ctx: CallContext,
  ): Promise<Versioned<TaskPushNotificationConfig>> {
    return this.call('createTaskPushNotificationConfig', params, ctx) as Promise<
      Versioned<TaskPushNotificationConfig>
    >;
  }

  getTaskPushNotificationConfig(
    params: unknown,
    ctx: CallContext,
  ): Promise<Versioned<TaskPushNotificationConfig>> {
    return this.call('getTaskPushNotificationConfig', params, ctx) as Promise<
      Versioned<TaskPushNotificationConfig>
    >;
  }

  listTaskPushNotificationConfigs(
    params: unknown,
    ctx: CallContext,
  ): Promise<Versioned<ListTaskPushNotificationConfigsResponse>> {
    return this.call('listTaskPushNotificationConfigs', params, ctx) as Promise<
      Versioned<ListTaskPushNotificationConfigsResponse>
    >;
  }

  deleteTaskPushNotificationConfig(
    params: unknown,
    ctx: CallContext,
  ): Promise<Versioned<Record<string, never>>> {
    return this.call('deleteTaskPushNotificationConfig', params, ctx) as Promise<
      Versioned<Record<string, never>>
    >;
  }

  protected abstract call(
    operation: OperationName,
    params: unknown,
    ctx: CallContext,
  ): Promise<Versioned<unknown>>;
}

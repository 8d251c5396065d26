import type { ListTasksResponse, SendMessageResponse, Task } from '@lib/a2a-protocol';
import type { CallContext } from './call-context';

/** An operation's result and, when it shows a task, that task's generation (streams resume after it). */
export interface Versioned<T> {
  result: T;
  version: number;
}

/** The operations of the port, by their name in the internal contract (TaskCommandService). */
export type OperationName = 'sendMessage' | 'getTask' | 'listTasks' | 'cancelTask';

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

  protected abstract call(
    operation: OperationName,
    params: unknown,
    ctx: CallContext,
  ): Promise<Versioned<unknown>>;
}

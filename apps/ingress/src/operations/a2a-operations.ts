import type { ListTasksResponse, SendMessageResponse, Task } from '@lib/a2a-protocol';
import type { CallContext } from './call-context';

/** An operation's result and, when it shows a task, that task's generation (streams resume after it). */
export interface Versioned<T> {
  result: T;
  version: number;
}

/**
 * The one port every A2A binding calls. Requests are the ProtoJSON documents of the A2A request messages;
 * implementations validate them and throw `A2aError` on failure.
 */
export abstract class A2aOperations {
  abstract sendMessage(params: unknown, ctx: CallContext): Promise<Versioned<SendMessageResponse>>;
  abstract getTask(params: unknown, ctx: CallContext): Promise<Versioned<Task>>;
  abstract listTasks(params: unknown, ctx: CallContext): Promise<Versioned<ListTasksResponse>>;
  abstract cancelTask(params: unknown, ctx: CallContext): Promise<Versioned<Task>>;
}

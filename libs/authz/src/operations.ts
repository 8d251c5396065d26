import { A2aError, type A2aJsonRpcMethod } from '@lib/a2a-protocol';
import type { Scope } from './scopes';

/** What authorization reads of a call: the scopes its credential grants (a `CallContext` is one). */
export interface Scoped {
  readonly scopes: readonly string[];
}

/**
 * The scopes that allow each A2A operation, any one of them sufficing; an empty list: any authenticated
 * principal. Keyed by every method, so a new operation does not compile until it is given its permission.
 */
export const OPERATION_SCOPES: Readonly<Record<A2aJsonRpcMethod, readonly Scope[]>> = {
  SendMessage: ['a2a:message:send'],
  SendStreamingMessage: ['a2a:message:send'],
  GetTask: ['a2a:tasks:read', 'a2a:tasks:read-all'],
  ListTasks: ['a2a:tasks:read', 'a2a:tasks:read-all'],
  SubscribeToTask: ['a2a:tasks:read', 'a2a:tasks:read-all'],
  CancelTask: ['a2a:tasks:cancel'],
  CreateTaskPushNotificationConfig: ['a2a:push-config'],
  GetTaskPushNotificationConfig: ['a2a:push-config'],
  ListTaskPushNotificationConfigs: ['a2a:push-config'],
  DeleteTaskPushNotificationConfig: ['a2a:push-config'],
  GetExtendedAgentCard: [],
};

/**
 * Checks that the caller may run the operation at all, before anything about tasks is read: a missing scope
 * is PERMISSION_DENIED whatever the request names (so the answer reveals nothing about it).
 */
export function authorizeOperation(ctx: Scoped, method: A2aJsonRpcMethod): void {
  const allowed = OPERATION_SCOPES[method];
  if (allowed.length > 0 && !allowed.some((scope) => ctx.scopes.includes(scope))) {
    throw new A2aError(
      'PERMISSION_DENIED',
      `${method} needs one of the scopes ${allowed.join(', ')}; the credential does not grant it`,
      { requiredScopes: allowed.join(' ') },
    );
  }
}

/**
 * Whose tasks a read may see: every principal's of the tenant's agent with `a2a:tasks:read-all`, otherwise
 * only the caller's own. Writes (send, cancel, push configs) always act on the caller's own tasks only.
 */
export function readsAllTasks(ctx: Scoped): boolean {
  return ctx.scopes.includes('a2a:tasks:read-all');
}

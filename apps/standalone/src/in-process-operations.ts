// The standalone process is the one place that composes other apps' code (ARCHITECTURE.md).
import type {
  TaskCommandMethod,
  TaskCommandRequests,
  TaskCommandResponses,
  Versioned,
} from '@lib/a2a-protocol';
import type { CallContext } from '@lib/tenancy';
import { A2aOperations } from '../../ingress/src/operations/a2a-operations';
import type { TaskCommands } from '../../task-service/src/task-commands';

/**
 * The ingress's operations port served by the task-service of the same process: a method call with the
 * request the binding decoded, no gRPC hop and no re-encoding.
 */
export class InProcessOperations extends A2aOperations {
  constructor(private readonly commands: TaskCommands) {
    super();
  }

  invoke<M extends TaskCommandMethod>(
    method: M,
    request: TaskCommandRequests[M],
    ctx: CallContext,
  ): Promise<Versioned<TaskCommandResponses[M]>> {
    return this.commands.invoke(method, request, ctx);
  }
}

// The standalone process is the one place that composes other apps' code (ARCHITECTURE.md).
import type { CallContext } from '@lib/tenancy';
import { A2aOperations, type Versioned } from '../../ingress/src/operations/a2a-operations';
import {
  type TaskCommandController,
  type TaskOperation,
} from '../../task-service/src/grpc/task-command.controller';

/**
 * The ingress's operations port served by the task-service of the same process: a method call, no gRPC hop
 * and no JSON re-encoding; the request document the binding parsed is validated once, by the task-service.
 */
export class InProcessOperations extends A2aOperations {
  constructor(private readonly commands: TaskCommandController) {
    super();
  }

  protected async call(
    operation: TaskOperation,
    params: unknown,
    ctx: CallContext,
  ): Promise<Versioned<unknown>> {
    const { result, version } = await this.commands.invoke(operation, params, ctx);
    return { result, version: version ?? 0 };
  }
}

import type {
  TaskCommandMethod,
  TaskCommandRequests,
  TaskCommandResponses,
  Versioned,
} from '@lib/a2a-protocol';
import type { CallContext } from '@lib/tenancy';

export type { Versioned };

/**
 * The one port every A2A binding calls: one operation of the internal contract, with its decoded request
 * (the binding decoded it once) and its typed response. Implementations throw `A2aError` on failure and
 * differ only in how the operation reaches the task-service: a gRPC call to a replica
 * (`TaskServiceOperations`) or a method call in the same process (the standalone's).
 */
export abstract class A2aOperations {
  abstract invoke<M extends TaskCommandMethod>(
    method: M,
    request: TaskCommandRequests[M],
    ctx: CallContext,
  ): Promise<Versioned<TaskCommandResponses[M]>>;
}

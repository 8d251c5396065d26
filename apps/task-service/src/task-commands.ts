import type { Metadata, sendUnaryData, ServerUnaryCall } from '@grpc/grpc-js';
import {
  A2aError,
  asA2aError,
  taskCommandFailure,
  taskCommandFromWire,
  taskPb,
  type A2aJsonRpcMethod,
  type TaskCommandInvoke,
  type TaskCommandMethod,
  type TaskCommandRequests,
  type TaskCommandResponses,
} from '@lib/a2a-protocol';
import { traceIdOf } from '@lib/audit';
import { authorizeOperation } from '@lib/authz';
import { isTransientDatabaseError } from '@lib/event-store';
import { contextOf, withLogContext } from '@lib/observability';
import { callContextFromWire } from '@lib/tenancy';
import { Injectable, Logger } from '@nestjs/common';
import { inCommandSpan, type CallContext, type Versioned } from './call-context';
import { CancelTaskHandler } from './commands/cancel-task.handler';
import { PushConfigHandler } from './commands/push-config.handler';
import { SendMessageHandler } from './commands/send-message.handler';
import { GetTaskQuery } from './queries/get-task.query';
import { ListTasksQuery } from './queries/list-tasks.query';

/** Each operation's handler, typed by its request and response. */
type Operations = {
  readonly [M in TaskCommandMethod]: (
    request: TaskCommandRequests[M],
    ctx: CallContext,
  ) => Promise<Versioned<TaskCommandResponses[M]>>;
};

/** Each operation's A2A method, whose permission it needs. */
const OPERATION_METHODS: Readonly<Record<TaskCommandMethod, A2aJsonRpcMethod>> = {
  sendMessage: 'SendMessage',
  getTask: 'GetTask',
  listTasks: 'ListTasks',
  cancelTask: 'CancelTask',
  createTaskPushNotificationConfig: 'CreateTaskPushNotificationConfig',
  getTaskPushNotificationConfig: 'GetTaskPushNotificationConfig',
  listTaskPushNotificationConfigs: 'ListTaskPushNotificationConfigs',
  deleteTaskPushNotificationConfig: 'DeleteTaskPushNotificationConfig',
};

/**
 * The internal contract the ingress calls: in-process through {@link invoke} when both run in one process
 * (requests and results stay objects), or over gRPC as TaskCommandService
 * (proto/platform/task/v1/task_service.proto) from ingress replicas elsewhere, where requests arrive as
 * protobuf, A2A errors travel as values in the result and only transport failures become gRPC errors.
 */
@Injectable()
export class TaskCommands {
  private readonly logger = new Logger(TaskCommands.name);
  /** Calls answered UNAVAILABLE since the database was last seen working. */
  private unavailable = 0;

  constructor(
    private readonly sendMessage: SendMessageHandler,
    private readonly cancelTask: CancelTaskHandler,
    private readonly getTask: GetTaskQuery,
    private readonly listTasks: ListTasksQuery,
    private readonly pushConfigs: PushConfigHandler,
  ) {}

  /**
   * A database that cannot be reached is UNAVAILABLE (the client may retry the same request: SendMessage is
   * idempotent by messageId, the rest read or are idempotent), reported once per outage, not per call.
   */
  private operationError(thrown: unknown): A2aError {
    if (!isTransientDatabaseError(thrown)) {
      return asA2aError(thrown);
    }
    if (this.unavailable++ === 0) {
      this.logger.warn(`answering UNAVAILABLE, the database is unreachable: ${String(thrown)}`);
    }
    return new A2aError('UNAVAILABLE', 'the task store is unavailable; retry shortly');
  }

  handlers(): taskPb.TaskCommandServiceServer {
    return {
      sendMessage: this.unary('sendMessage'),
      getTask: this.unary('getTask'),
      listTasks: this.unary('listTasks'),
      cancelTask: this.unary('cancelTask'),
      createTaskPushNotificationConfig: this.unary('createTaskPushNotificationConfig'),
      getTaskPushNotificationConfig: this.unary('getTaskPushNotificationConfig'),
      listTaskPushNotificationConfigs: this.unary('listTaskPushNotificationConfigs'),
      deleteTaskPushNotificationConfig: this.unary('deleteTaskPushNotificationConfig'),
    };
  }

  /**
   * One operation called in-process, with the request its binding decoded; throws the A2aError a client
   * sees.
   */
  readonly invoke: TaskCommandInvoke<CallContext> = async (method, request, ctx) => {
    try {
      const result = await this.execute(method, request, ctx);
      this.unavailable = 0;
      return result;
    } catch (thrown) {
      throw this.reported(thrown);
    }
  };

  /**
   * The ingress authorized the call already; the check is repeated here so that no other caller of this
   * contract can skip it (it costs a lookup in a short list).
   */
  private execute<M extends TaskCommandMethod>(
    operation: M,
    request: TaskCommandRequests[M],
    ctx: CallContext,
    metadata?: Metadata,
  ): Promise<Versioned<TaskCommandResponses[M]>> {
    const method = OPERATION_METHODS[operation];
    authorizeOperation(ctx, method);
    const traceId = traceIdOf(ctx.traceparent);
    const call = {
      requestId: ctx.requestId,
      tenant: ctx.tenantId,
      agent: ctx.agentId,
      ...(traceId ? { traceId } : {}),
    };
    // Over gRPC the ingress's span arrives in the metadata; in-process it is the active one.
    const remote = metadata ? contextOf(traceparentIn(metadata)) : undefined;
    return withLogContext(call, () =>
      inCommandSpan(method, ctx, remote, (traced) => this.operations[operation](request, traced)),
    );
  }

  private readonly operations: Operations = {
    sendMessage: (request, ctx) => this.sendMessage.execute(request, ctx),
    getTask: (request, ctx) => this.getTask.execute(request, ctx),
    listTasks: (request, ctx) => this.listTasks.execute(request, ctx),
    cancelTask: (request, ctx) => this.cancelTask.execute(request, ctx),
    createTaskPushNotificationConfig: (request, ctx) => this.pushConfigs.create(request, ctx),
    getTaskPushNotificationConfig: (request, ctx) => this.pushConfigs.get(request, ctx),
    listTaskPushNotificationConfigs: (request, ctx) => this.pushConfigs.list(request, ctx),
    deleteTaskPushNotificationConfig: (request, ctx) => this.pushConfigs.delete(request, ctx),
  };

  /** The error a client is told, with an unexpected one logged once. */
  private reported(thrown: unknown): A2aError {
    const error = this.operationError(thrown);
    if (error.reason === 'INTERNAL') {
      this.logger.error(
        `operation failed: ${thrown instanceof Error ? (thrown.stack ?? thrown.message) : String(thrown)}`,
      );
    }
    return error;
  }

  private unary(operation: TaskCommandMethod) {
    return (
      call: ServerUnaryCall<taskPb.OperationCall, taskPb.OperationResult>,
      callback: sendUnaryData<taskPb.OperationResult>,
    ): void => {
      this.run(operation, call.request, call.metadata).then(
        (result) => callback(null, result),
        callback,
      );
    };
  }

  private async run(
    operation: TaskCommandMethod,
    call: taskPb.OperationCall,
    metadata: Metadata,
  ): Promise<taskPb.OperationResult> {
    const ctx = callContextFromWire(call.context);
    if (!ctx) {
      return taskCommandFailure(new A2aError('INVALID_REQUEST', 'call context missing'));
    }
    try {
      const request = taskCommandFromWire(operation, call);
      const { result, version } = await this.execute(operation, request, ctx, metadata);
      this.unavailable = 0;
      return { responseJson: JSON.stringify(result), version };
    } catch (thrown) {
      return taskCommandFailure(this.reported(thrown));
    }
  }
}

function traceparentIn(metadata: Metadata): string | undefined {
  const value = metadata.get('traceparent')[0];
  return typeof value === 'string' ? value : undefined;
}

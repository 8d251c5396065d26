import type { sendUnaryData, ServerUnaryCall } from '@grpc/grpc-js';
import { A2aError, asA2aError, taskPb, type TaskCommandMethod } from '@lib/a2a-protocol';
import { isTransientDatabaseError } from '@lib/event-store';
import { Injectable, Logger } from '@nestjs/common';
import type { CallContext, Versioned } from '../call-context';
import { CancelTaskHandler } from '../commands/cancel-task.handler';
import { PushConfigHandler } from '../commands/push-config.handler';
import { SendMessageHandler } from '../commands/send-message.handler';
import { GetTaskQuery } from '../queries/get-task.query';
import { ListTasksQuery } from '../queries/list-tasks.query';

type Operation = (input: unknown, ctx: CallContext) => Promise<Versioned<unknown>>;

/** The operations of the internal contract, by their TaskCommandService method name. */
export type TaskOperation = TaskCommandMethod;

/**
 * The internal contract the ingress calls: in-process through {@link invoke} when both run in one process
 * (requests and results stay objects), or over gRPC as TaskCommandService
 * (proto/platform/task/v1/task_service.proto) from ingress replicas elsewhere, where A2A errors travel as
 * values in the result and only transport failures become gRPC errors.
 */
@Injectable()
export class TaskCommandController {
  private readonly logger = new Logger(TaskCommandController.name);
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
      sendMessage: this.unary(this.operations.sendMessage),
      getTask: this.unary(this.operations.getTask),
      listTasks: this.unary(this.operations.listTasks),
      cancelTask: this.unary(this.operations.cancelTask),
      createTaskPushNotificationConfig: this.unary(
        this.operations.createTaskPushNotificationConfig,
      ),
      getTaskPushNotificationConfig: this.unary(this.operations.getTaskPushNotificationConfig),
      listTaskPushNotificationConfigs: this.unary(this.operations.listTaskPushNotificationConfigs),
      deleteTaskPushNotificationConfig: this.unary(
        this.operations.deleteTaskPushNotificationConfig,
      ),
    };
  }

  /**
   * One operation called in-process: `input` is the request's ProtoJSON document as the binding decoded it
   * from the wire (validated here, once); throws the A2aError a client sees.
   */
  async invoke(
    operation: TaskOperation,
    input: unknown,
    ctx: CallContext,
  ): Promise<Versioned<unknown>> {
    try {
      const result = await this.operations[operation](input ?? {}, ctx);
      this.unavailable = 0;
      return result;
    } catch (thrown) {
      throw this.reported(thrown);
    }
  }

  private readonly operations: Record<TaskOperation, Operation> = {
    sendMessage: (input, ctx) => this.sendMessage.execute(input, ctx),
    getTask: (input, ctx) => this.getTask.execute(input, ctx),
    listTasks: (input, ctx) => this.listTasks.execute(input, ctx),
    cancelTask: (input, ctx) => this.cancelTask.execute(input, ctx),
    createTaskPushNotificationConfig: (input, ctx) => this.pushConfigs.create(input, ctx),
    getTaskPushNotificationConfig: (input, ctx) => this.pushConfigs.get(input, ctx),
    listTaskPushNotificationConfigs: (input, ctx) => this.pushConfigs.list(input, ctx),
    deleteTaskPushNotificationConfig: (input, ctx) => this.pushConfigs.delete(input, ctx),
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

  private unary(operation: Operation) {
    return (
      call: ServerUnaryCall<taskPb.OperationCall, taskPb.OperationResult>,
      callback: sendUnaryData<taskPb.OperationResult>,
    ): void => {
      this.run(operation, call.request).then((result) => callback(null, result), callback);
    };
  }

  private async run(
    operation: Operation,
    call: taskPb.OperationCall,
  ): Promise<taskPb.OperationResult> {
    const context = call.context;
    if (!context?.tenantId || !context.agentId || !context.principalId) {
      return {
        version: 0,
        error: {
          reason: 'INVALID_REQUEST',
          message: 'call context missing',
          metadata: {},
          fieldViolations: [],
        },
      };
    }
    const ctx: CallContext = {
      tenantId: context.tenantId,
      agentId: context.agentId,
      principalId: context.principalId,
      binding: context.binding,
      ...(context.traceparent ? { traceparent: context.traceparent } : {}),
      ...(context.requestId ? { requestId: context.requestId } : {}),
    };
    try {
      const input: unknown = call.requestJson ? JSON.parse(call.requestJson) : {};
      const { result, version } = await operation(input, ctx);
      this.unavailable = 0;
      return { responseJson: JSON.stringify(result), version: version ?? 0 };
    } catch (thrown) {
      const error = this.reported(thrown);
      return {
        version: 0,
        error: {
          reason: error.reason,
          message: error.message,
          metadata: error.metadata,
          fieldViolations: [...error.fieldViolations],
        },
      };
    }
  }
}

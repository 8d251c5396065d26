import type { Metadata, sendUnaryData, ServerUnaryCall } from '@grpc/grpc-js';
import {
  A2aError,
  asA2aError,
  taskPb,
  type A2aJsonRpcMethod,
  type TaskCommandMethod,
} from '@lib/a2a-protocol';
import { traceIdOf } from '@lib/audit';
import { authorizeOperation } from '@lib/authz';
import { isTransientDatabaseError } from '@lib/event-store';
import { contextOf, withLogContext } from '@lib/observability';
import { agentIdOf, credentialIdOf, principalIdOf, tenantIdOf } from '@lib/tenancy';
import { Injectable, Logger } from '@nestjs/common';
import { inCommandSpan, type CallContext, type Versioned } from '../call-context';
import { CancelTaskHandler } from '../commands/cancel-task.handler';
import { PushConfigHandler } from '../commands/push-config.handler';
import { SendMessageHandler } from '../commands/send-message.handler';
import { GetTaskQuery } from '../queries/get-task.query';
import { ListTasksQuery } from '../queries/list-tasks.query';

type Operation = (input: unknown, ctx: CallContext) => Promise<Versioned<unknown>>;

/** The operations of the internal contract, by their TaskCommandService method name. */
export type TaskOperation = TaskCommandMethod;

/** Each operation's A2A method, whose permission it needs. */
const OPERATION_METHODS: Readonly<Record<TaskOperation, A2aJsonRpcMethod>> = {
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
   * One operation called in-process: `input` is the request's ProtoJSON document as the binding decoded it
   * from the wire (validated here, once); throws the A2aError a client sees.
   */
  async invoke(
    operation: TaskOperation,
    input: unknown,
    ctx: CallContext,
  ): Promise<Versioned<unknown>> {
    try {
      const result = await this.execute(operation, input ?? {}, ctx);
      this.unavailable = 0;
      return result;
    } catch (thrown) {
      throw this.reported(thrown);
    }
  }

  /**
   * The ingress authorized the call already; the check is repeated here so that no other caller of this
   * contract can skip it (it costs a lookup in a short list).
   */
  private execute(
    operation: TaskOperation,
    input: unknown,
    ctx: CallContext,
    metadata?: Metadata,
  ): Promise<Versioned<unknown>> {
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
      inCommandSpan(method, ctx, remote, (traced) => this.operations[operation](input, traced)),
    );
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

  private unary(operation: TaskOperation) {
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
    operation: TaskOperation,
    call: taskPb.OperationCall,
    metadata: Metadata,
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
      tenantId: tenantIdOf(context.tenantId),
      agentId: agentIdOf(context.agentId),
      principalId: principalIdOf(context.principalId),
      credentialId: context.credentialId ? credentialIdOf(context.credentialId) : null,
      scopes: context.scopes,
      binding: context.binding,
      protocolVersion: context.protocolVersion,
      requestId: context.requestId,
      ...(context.traceparent ? { traceparent: context.traceparent } : {}),
      ...(context.sourceAddress ? { sourceAddress: context.sourceAddress } : {}),
      ...(context.method ? { method: context.method } : {}),
    };
    try {
      const input: unknown = call.requestJson ? JSON.parse(call.requestJson) : {};
      const { result, version } = await this.execute(operation, input, ctx, metadata);
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

function traceparentIn(metadata: Metadata): string | undefined {
  const value = metadata.get('traceparent')[0];
  return typeof value === 'string' ? value : undefined;
}

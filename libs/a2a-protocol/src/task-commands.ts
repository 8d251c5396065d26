import { A2aError, isErrorReason } from './errors';
import * as a2aPb from './generated/lf/a2a/v1/a2a';
import {
  OperationCall as OperationCallFns,
  type CallContext,
  type OperationCall,
  type OperationResult,
  type TaskCommandServiceService,
} from './generated/platform/task/v1/task_service';
import type {
  CancelTaskRequest,
  GetTaskRequest,
  ListTaskPushNotificationConfigsResponse,
  ListTasksRequest,
  ListTasksResponse,
  SendMessageRequest,
  SendMessageResponse,
  Task,
  TaskPushNotificationConfig,
} from './model';
import {
  decodeCancelTaskRequest,
  decodeDeleteTaskPushNotificationConfigRequest,
  decodeGetTaskPushNotificationConfigRequest,
  decodeGetTaskRequest,
  decodeListTaskPushNotificationConfigsRequest,
  decodeListTasksRequest,
  decodeSendMessageRequest,
  decodeTaskPushNotificationConfig,
  type DeleteTaskPushNotificationConfigRequest,
  type GetTaskPushNotificationConfigRequest,
  type ListTaskPushNotificationConfigsRequest,
} from './proto-json';

/**
 * The operations of the internal TaskCommandService (`proto/platform/task/v1/task_service.proto`) by their
 * method name, as the ingress calls them and the task-service serves them.
 */
export type TaskCommandMethod = keyof typeof TaskCommandServiceService;

/** Each operation's request, decoded (the A2A request message of its RPC). */
export interface TaskCommandRequests {
  sendMessage: SendMessageRequest;
  getTask: GetTaskRequest;
  listTasks: ListTasksRequest;
  cancelTask: CancelTaskRequest;
  createTaskPushNotificationConfig: TaskPushNotificationConfig;
  getTaskPushNotificationConfig: GetTaskPushNotificationConfigRequest;
  listTaskPushNotificationConfigs: ListTaskPushNotificationConfigsRequest;
  deleteTaskPushNotificationConfig: DeleteTaskPushNotificationConfigRequest;
}

/** Each operation's response (the A2A response message of its RPC; DeleteTaskPushNotificationConfig's is Empty). */
export interface TaskCommandResponses {
  sendMessage: SendMessageResponse;
  getTask: Task;
  listTasks: ListTasksResponse;
  cancelTask: Task;
  createTaskPushNotificationConfig: TaskPushNotificationConfig;
  getTaskPushNotificationConfig: TaskPushNotificationConfig;
  listTaskPushNotificationConfigs: ListTaskPushNotificationConfigsResponse;
  deleteTaskPushNotificationConfig: Record<string, never>;
}

/** An operation's result and the generation of the task it shows (streams resume after it); 0 when none. */
export interface Versioned<T> {
  result: T;
  version: number;
}

/** Every operation as one signature: what the ingress's port offers and the task-service implements. */
export type TaskCommandInvoke<Context> = <M extends TaskCommandMethod>(
  method: M,
  request: TaskCommandRequests[M],
  ctx: Context,
) => Promise<Versioned<TaskCommandResponses[M]>>;

/** The request's protobuf message as the field of {@link OperationCall} named like its RPC carries it. */
type WireRequest<M extends TaskCommandMethod> = NonNullable<OperationCall[M]>;

interface RequestCodec<M extends TaskCommandMethod> {
  /** Validates an untrusted ProtoJSON document: the request, or the client's INVALID_PARAMS error. */
  decode(input: unknown): TaskCommandRequests[M];
  wire: Pick<a2aPb.MessageFns<WireRequest<M>>, 'fromJSON' | 'toJSON'>;
}

const REQUESTS: { readonly [M in TaskCommandMethod]: RequestCodec<M> } = {
  sendMessage: { decode: decodeSendMessageRequest, wire: a2aPb.SendMessageRequest },
  getTask: { decode: decodeGetTaskRequest, wire: a2aPb.GetTaskRequest },
  listTasks: { decode: decodeListTasksRequest, wire: a2aPb.ListTasksRequest },
  cancelTask: { decode: decodeCancelTaskRequest, wire: a2aPb.CancelTaskRequest },
  createTaskPushNotificationConfig: {
    decode: decodeTaskPushNotificationConfig,
    wire: a2aPb.TaskPushNotificationConfig,
  },
  getTaskPushNotificationConfig: {
    decode: decodeGetTaskPushNotificationConfigRequest,
    wire: a2aPb.GetTaskPushNotificationConfigRequest,
  },
  listTaskPushNotificationConfigs: {
    decode: decodeListTaskPushNotificationConfigsRequest,
    wire: a2aPb.ListTaskPushNotificationConfigsRequest,
  },
  deleteTaskPushNotificationConfig: {
    decode: decodeDeleteTaskPushNotificationConfigRequest,
    wire: a2aPb.DeleteTaskPushNotificationConfigRequest,
  },
};

/**
 * An operation's request from a binding's ProtoJSON document (untrusted input): decoded once, at the binding;
 * throws the INVALID_PARAMS error the client gets.
 */
export function decodeTaskCommand<M extends TaskCommandMethod>(
  method: M,
  input: unknown,
): TaskCommandRequests[M] {
  return REQUESTS[method].decode(input);
}

/** A call of the internal contract between processes: the decoded request as its protobuf message. */
export function taskCommandCall<M extends TaskCommandMethod>(
  method: M,
  request: TaskCommandRequests[M],
  context: CallContext,
): OperationCall {
  const call = OperationCallFns.fromPartial({ context });
  call[method] = REQUESTS[method].wire.fromJSON(request);
  return call;
}

/**
 * The request a call carries, checked as the binding checked it (the task-service trusts no caller's
 * payload): the field named like the RPC, or, from an ingress of the previous release, `request_json`.
 */
export function taskCommandFromWire<M extends TaskCommandMethod>(
  method: M,
  call: OperationCall,
): TaskCommandRequests[M] {
  const codec = REQUESTS[method];
  const request = call[method];
  if (request !== undefined) {
    return codec.decode(codec.wire.toJSON(request));
  }
  return codec.decode(legacyRequestJson(call));
}

/** The request document of a call from an ingress of the previous release (empty params when none). */
function legacyRequestJson(call: OperationCall): unknown {
  const json = call.requestJson;
  return json ? (JSON.parse(json) as unknown) : {};
}

/**
 * An operation's response as the task-service wrote it (`response_json`, the ProtoJSON of a value of the
 * response type, JSON.stringify of it). The one place the internal contract's JSON is given its type: the
 * peer is this release's task-service, which built the document from that type.
 */
function parseTaskCommandResponse<M extends TaskCommandMethod>(
  _method: M,
  json: string,
): TaskCommandResponses[M] {
  return JSON.parse(json) as TaskCommandResponses[M];
}

/** An A2A error as a value of the result: the client's error, distinct from a transport failure. */
export function taskCommandFailure(error: A2aError): OperationResult {
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

/**
 * An operation's outcome as the task-service answered it: the response and the task's generation, or the
 * A2A error it carries, thrown.
 */
export function taskCommandOutcome<M extends TaskCommandMethod>(
  method: M,
  result: OperationResult,
): Versioned<TaskCommandResponses[M]> {
  if (result.error) {
    const { reason, message, metadata, fieldViolations } = result.error;
    throw new A2aError(
      isErrorReason(reason) ? reason : 'INTERNAL',
      message,
      metadata,
      fieldViolations,
    );
  }
  return {
    result: parseTaskCommandResponse(method, result.responseJson ?? 'null'),
    version: result.version,
  };
}

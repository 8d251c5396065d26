import type { ServiceDefinition } from '@grpc/grpc-js';
import {
  A2A_MESSAGE_DESCRIPTORS,
  A2aError,
  a2aPb,
  invalidParams,
  isA2aMethod,
  isPlainObject,
  type A2aJsonRpcMethod,
  type MessageDescriptor,
} from '@lib/a2a-protocol';

type Service = typeof a2aPb.A2AServiceService;
/** The keys of the generated service definition (`sendMessage`, …). */
export type ServiceKey = keyof Service;
/** Every RPC of the service, by its key in the generated definition. */
export const SERVICE_KEYS = Object.keys(a2aPb.A2AServiceService) as ServiceKey[];
type RequestOf<K extends ServiceKey> = ReturnType<Service[K]['requestDeserialize']>;
type ResponseOf<K extends ServiceKey> = Parameters<Service[K]['responseSerialize']>[0];

/** What one RPC needs to cross between protobuf and the gateway's ProtoJSON. */
interface RpcCodec<K extends ServiceKey> {
  /** The request message, named as in `A2A_MESSAGE_DESCRIPTORS`. */
  requestType: keyof typeof A2A_MESSAGE_DESCRIPTORS;
  request: Pick<a2aPb.MessageFns<RequestOf<K>>, 'decode' | 'toJSON'>;
  response: { fromJSON(json: unknown): ResponseOf<K> };
}

/** `google.protobuf.Empty` has no fields. */
const EMPTY = { fromJSON: (): Record<string, never> => ({}) };

/**
 * The generated message functions of every RPC, checked against the generated service definition: a request or
 * response type that does not match its RPC does not compile.
 */
const CODECS: { readonly [K in ServiceKey]: RpcCodec<K> } = {
  sendMessage: {
    requestType: 'SendMessageRequest',
    request: a2aPb.SendMessageRequest,
    response: a2aPb.SendMessageResponse,
  },
  sendStreamingMessage: {
    requestType: 'SendMessageRequest',
    request: a2aPb.SendMessageRequest,
    response: a2aPb.StreamResponse,
  },
  getTask: { requestType: 'GetTaskRequest', request: a2aPb.GetTaskRequest, response: a2aPb.Task },
  listTasks: {
    requestType: 'ListTasksRequest',
    request: a2aPb.ListTasksRequest,
    response: a2aPb.ListTasksResponse,
  },
  cancelTask: {
    requestType: 'CancelTaskRequest',
    request: a2aPb.CancelTaskRequest,
    response: a2aPb.Task,
  },
  subscribeToTask: {
    requestType: 'SubscribeToTaskRequest',
    request: a2aPb.SubscribeToTaskRequest,
    response: a2aPb.StreamResponse,
  },
  createTaskPushNotificationConfig: {
    requestType: 'TaskPushNotificationConfig',
    request: a2aPb.TaskPushNotificationConfig,
    response: a2aPb.TaskPushNotificationConfig,
  },
  getTaskPushNotificationConfig: {
    requestType: 'GetTaskPushNotificationConfigRequest',
    request: a2aPb.GetTaskPushNotificationConfigRequest,
    response: a2aPb.TaskPushNotificationConfig,
  },
  listTaskPushNotificationConfigs: {
    requestType: 'ListTaskPushNotificationConfigsRequest',
    request: a2aPb.ListTaskPushNotificationConfigsRequest,
    response: a2aPb.ListTaskPushNotificationConfigsResponse,
  },
  getExtendedAgentCard: {
    requestType: 'GetExtendedAgentCardRequest',
    request: a2aPb.GetExtendedAgentCardRequest,
    response: a2aPb.AgentCard,
  },
  deleteTaskPushNotificationConfig: {
    requestType: 'DeleteTaskPushNotificationConfigRequest',
    request: a2aPb.DeleteTaskPushNotificationConfigRequest,
    response: EMPTY,
  },
};

/**
 * A request as the deserializer hands it to the handler: its ProtoJSON, or the error its bytes deserve.
 * Decoding never throws inside grpc-js, which would answer INTERNAL; the handler reports the error instead.
 */
export type InboundMessage =
  | { params: { [field: string]: unknown }; error?: undefined }
  | { error: A2aError };

/** The A2A method (`SendMessage`, …) of a generated service entry, read from its path. */
export function methodOf(key: ServiceKey): A2aJsonRpcMethod {
  const path = a2aPb.A2AServiceService[key].path;
  const method = path.slice(path.lastIndexOf('/') + 1);
  if (!isA2aMethod(method)) {
    throw new Error(`${path} is not an A2A method`);
  }
  return method;
}

/**
 * `lf.a2a.v1.A2AService` for the server: the generated definition, except that requests deserialize to
 * {@link InboundMessage}.
 */
export function a2aServerDefinition(): ServiceDefinition {
  return Object.fromEntries(
    SERVICE_KEYS.map((key) => [
      key,
      {
        ...a2aPb.A2AServiceService[key],
        requestDeserialize: (bytes: Buffer): InboundMessage => readRequest(key, bytes),
      },
    ]),
  );
}

/**
 * Protobuf bytes to the ProtoJSON the gateway validates (spec digest §3): the generated `toJSON` emits enum
 * names, base64 bytes, RFC 3339 timestamps, Struct/Value as plain JSON, and omits default scalars, so a
 * missing required field is reported exactly as on the JSON bindings.
 */
export function readRequest(key: ServiceKey, bytes: Uint8Array): InboundMessage {
  const codec: RpcCodec<ServiceKey> = CODECS[key];
  let params: unknown;
  try {
    params = codec.request.toJSON(codec.request.decode(bytes));
  } catch (thrown) {
    return { error: unreadable(codec.requestType, thrown) };
  }
  return { params: params as { [field: string]: unknown } };
}

/** The generated code's message for an enum number the proto does not define. */
const UNKNOWN_ENUM = /^Unrecognized enum value (.+) for enum (\w+)$/;

/**
 * An enum number outside the proto is invalid params (the JSON bindings report it on the field); anything
 * else the decoder rejects (truncated input, a bad varint or wire type) is a parse error.
 */
function unreadable(requestType: keyof typeof A2A_MESSAGE_DESCRIPTORS, thrown: unknown): A2aError {
  const problem = thrown instanceof Error ? thrown.message : String(thrown);
  const unknownEnum = UNKNOWN_ENUM.exec(problem);
  if (unknownEnum) {
    const [, value = '', enumName = ''] = unknownEnum;
    const field = enumFieldPath(A2A_MESSAGE_DESCRIPTORS[requestType], enumName) ?? '';
    return invalidParams([{ field, description: `${value} is not a ${enumName} value` }]);
  }
  return new A2aError(
    'PARSE_ERROR',
    `the request is not a valid lf.a2a.v1.${requestType} protobuf message (${problem})`,
  );
}

/** The JSON path of the first field of type `enumName` in a request (requests hold each enum once). */
function enumFieldPath(descriptor: MessageDescriptor, enumName: string): string | undefined {
  for (const field of descriptor.fields) {
    if (field.kind.type === 'enum' && field.kind.name === enumName) {
      return field.json;
    }
    if (field.kind.type === 'message') {
      const nested = enumFieldPath(field.kind.descriptor, enumName);
      if (nested !== undefined) {
        return `${field.json}.${nested}`;
      }
    }
  }
  return undefined;
}

/** The gateway's ProtoJSON result as the generated message object the service definition encodes. */
export function responseMessage(key: ServiceKey, json: unknown): unknown {
  const codec: RpcCodec<ServiceKey> = CODECS[key];
  const message = codec.response.fromJSON(json);
  restoreNullData(json, message);
  return message;
}

/**
 * The generated `fromJSON` reads `"data": null` as an absent field, but JSON null is a valid
 * `google.protobuf.Value` and the only content of such a Part. Puts the null back wherever the JSON had it,
 * so the part is encoded with `data { null_value: NULL_VALUE }` instead of no content.
 */
function restoreNullData(json: unknown, message: unknown): void {
  if (Array.isArray(json) && Array.isArray(message)) {
    json.forEach((item, index) => restoreNullData(item, message[index]));
    return;
  }
  if (!isPlainObject(json) || !isPlainObject(message) || json === message) {
    return;
  }
  for (const [field, value] of Object.entries(json)) {
    if (field === 'data' && value === null && 'data' in message && message['data'] === undefined) {
      message['data'] = null;
    } else {
      restoreNullData(value, message[field]);
    }
  }
}

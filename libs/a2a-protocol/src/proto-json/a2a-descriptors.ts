/** The A2A request messages as descriptor tables (digest §4), and their typed decoders. */
import {
  type Artifact,
  type CancelTaskRequest,
  type GetExtendedAgentCardRequest,
  type GetTaskRequest,
  type ListTasksRequest,
  type Message,
  ROLES,
  type SendMessageRequest,
  type SubscribeToTaskRequest,
  TASK_STATES,
  type TaskPushNotificationConfig,
  type TaskStatus,
} from '../model';
import { decode } from './decoder';
import {
  fieldDescriptor as field,
  type FieldKind,
  type FieldOptions,
  messageKind as message,
  type MessageDescriptor,
  type MessageRule,
  type ProtoJsonLimits,
} from './descriptor';
import { isListPageToken } from './page-token';
import { isPlainObject } from './scalars';

/** `GetTaskPushNotificationConfigRequest` (digest §4.4); `id` is the config id. */
export interface GetTaskPushNotificationConfigRequest {
  tenant?: string;
  taskId: string;
  id: string;
}

/** `ListTaskPushNotificationConfigsRequest` (digest §4.4). */
export interface ListTaskPushNotificationConfigsRequest {
  tenant?: string;
  taskId: string;
  pageSize?: number;
  pageToken?: string;
}

/** `DeleteTaskPushNotificationConfigRequest` (digest §4.4); `id` is the config id. */
export interface DeleteTaskPushNotificationConfigRequest {
  tenant?: string;
  taskId: string;
  id: string;
}

// ---------------------------------------------------------------------------------------------------------
// Descriptors (digest §4). JSON names are the lowerCamelCase of the proto names (no json_name options in 1.0).

const STRING: FieldKind = { type: 'string' };
const INT32: FieldKind = { type: 'int32' };
const BOOL: FieldKind = { type: 'bool' };
const STRUCT: FieldKind = { type: 'struct' };
const VALUE: FieldKind = { type: 'value' };
const TIMESTAMP: FieldKind = { type: 'timestamp' };
const BYTES: FieldKind = { type: 'bytes' };
const TASK_STATE: FieldKind = { type: 'enum', name: 'TaskState', values: TASK_STATES };
const ROLE: FieldKind = { type: 'enum', name: 'Role', values: ROLES };
const metadataField = field('metadata', STRUCT, { limit: 'maxMetadataBytes' });
const tenantField = field('tenant', STRING);
/** A client-chosen identifier (see {@link ProtoJsonLimits.maxIdLength}). */
const idField = (proto: string, options: FieldOptions = {}) =>
  field(proto, STRING, { limit: 'maxIdLength', ...options });

const PART: MessageDescriptor = {
  name: 'Part',
  fields: [
    field('text', STRING, { oneof: 'content', limit: 'maxTextPartLength' }),
    field('raw', BYTES, { oneof: 'content' }),
    field('url', STRING, { oneof: 'content' }),
    field('data', VALUE, { oneof: 'content' }),
    metadataField,
    field('filename', STRING),
    field('media_type', STRING),
  ],
  requiredOneofs: ['content'],
};

const MESSAGE: MessageDescriptor = {
  name: 'Message',
  fields: [
    idField('message_id', { required: true }),
    idField('context_id'),
    idField('task_id'),
    field('role', ROLE, { required: true }),
    field('parts', message(PART), {
      cardinality: 'repeated',
      required: true,
      limit: 'maxPartsPerMessage',
    }),
    metadataField,
    field('extensions', STRING, { cardinality: 'repeated' }),
    idField('reference_task_ids', { cardinality: 'repeated' }),
  ],
};

const TASK_STATUS: MessageDescriptor = {
  name: 'TaskStatus',
  fields: [
    field('state', TASK_STATE, { required: true }),
    field('message', message(MESSAGE)),
    field('timestamp', TIMESTAMP),
  ],
};

const ARTIFACT: MessageDescriptor = {
  name: 'Artifact',
  fields: [
    idField('artifact_id', { required: true }),
    field('name', STRING),
    field('description', STRING),
    field('parts', message(PART), {
      cardinality: 'repeated',
      required: true,
      limit: 'maxPartsPerMessage',
    }),
    metadataField,
    field('extensions', STRING, { cardinality: 'repeated' }),
  ],
};

const AUTHENTICATION_INFO: MessageDescriptor = {
  name: 'AuthenticationInfo',
  fields: [field('scheme', STRING, { required: true }), field('credentials', STRING)],
};

const TASK_PUSH_NOTIFICATION_CONFIG: MessageDescriptor = {
  name: 'TaskPushNotificationConfig',
  fields: [
    tenantField,
    idField('id'),
    idField('task_id'),
    field('url', STRING, { required: true }),
    field('token', STRING),
    field('authentication', message(AUTHENTICATION_INFO)),
  ],
};

const historyLengthField = field('history_length', INT32, { presence: true, min: 0 });

const SEND_MESSAGE_CONFIGURATION: MessageDescriptor = {
  name: 'SendMessageConfiguration',
  fields: [
    field('accepted_output_modes', STRING, { cardinality: 'repeated' }),
    field('task_push_notification_config', message(TASK_PUSH_NOTIFICATION_CONFIG)),
    historyLengthField,
    field('return_immediately', BOOL),
  ],
};

/** A client sends user messages only (digest §4.1 Message.role); agent messages come from workers. */
const clientMessageRole: MessageRule = (value, report) => {
  const sent = value['message'];
  if (isPlainObject(sent) && sent['role'] === 'ROLE_AGENT') {
    report('message.role', 'a message sent by a client must have role ROLE_USER');
  }
};

const SEND_MESSAGE_REQUEST: MessageDescriptor = {
  name: 'SendMessageRequest',
  fields: [
    tenantField,
    field('message', message(MESSAGE), { required: true }),
    field('configuration', message(SEND_MESSAGE_CONFIGURATION)),
    metadataField,
  ],
  rules: [clientMessageRole],
};

const GET_TASK_REQUEST: MessageDescriptor = {
  name: 'GetTaskRequest',
  fields: [tenantField, idField('id', { required: true }), historyLengthField],
};

/** An invalid page token is invalid params (digest §10.7), so it is checked with the rest of the request. */
const validPageToken: MessageRule = (value, report) => {
  const token = value['pageToken'];
  if (typeof token === 'string' && !isListPageToken(token)) {
    report('pageToken', 'is not a page token issued by this server');
  }
};

const LIST_TASKS_REQUEST: MessageDescriptor = {
  name: 'ListTasksRequest',
  fields: [
    tenantField,
    idField('context_id'),
    field('status', TASK_STATE),
    field('page_size', INT32, { presence: true, min: 1, max: 100 }),
    field('page_token', STRING),
    historyLengthField,
    field('status_timestamp_after', TIMESTAMP),
    field('include_artifacts', BOOL, { presence: true }),
  ],
  rules: [validPageToken],
};

const CANCEL_TASK_REQUEST: MessageDescriptor = {
  name: 'CancelTaskRequest',
  fields: [tenantField, idField('id', { required: true }), metadataField],
};

const SUBSCRIBE_TO_TASK_REQUEST: MessageDescriptor = {
  name: 'SubscribeToTaskRequest',
  fields: [tenantField, idField('id', { required: true })],
};

const GET_EXTENDED_AGENT_CARD_REQUEST: MessageDescriptor = {
  name: 'GetExtendedAgentCardRequest',
  fields: [tenantField],
};

const GET_TASK_PUSH_NOTIFICATION_CONFIG_REQUEST: MessageDescriptor = {
  name: 'GetTaskPushNotificationConfigRequest',
  fields: [tenantField, idField('task_id', { required: true }), idField('id', { required: true })],
};

const LIST_TASK_PUSH_NOTIFICATION_CONFIGS_REQUEST: MessageDescriptor = {
  name: 'ListTaskPushNotificationConfigsRequest',
  fields: [
    idField('task_id', { required: true }),
    // The spec sets no bounds; a negative size is still meaningless, 0 means "server default".
    field('page_size', INT32, { min: 0 }),
    field('page_token', STRING),
    tenantField,
  ],
};

const DELETE_TASK_PUSH_NOTIFICATION_CONFIG_REQUEST: MessageDescriptor = {
  name: 'DeleteTaskPushNotificationConfigRequest',
  fields: [tenantField, idField('task_id', { required: true }), idField('id', { required: true })],
};

/** Every descriptor, keyed by proto message name. */
export const A2A_MESSAGE_DESCRIPTORS = {
  Part: PART,
  Message: MESSAGE,
  TaskStatus: TASK_STATUS,
  Artifact: ARTIFACT,
  AuthenticationInfo: AUTHENTICATION_INFO,
  TaskPushNotificationConfig: TASK_PUSH_NOTIFICATION_CONFIG,
  SendMessageConfiguration: SEND_MESSAGE_CONFIGURATION,
  SendMessageRequest: SEND_MESSAGE_REQUEST,
  GetTaskRequest: GET_TASK_REQUEST,
  ListTasksRequest: LIST_TASKS_REQUEST,
  CancelTaskRequest: CANCEL_TASK_REQUEST,
  SubscribeToTaskRequest: SUBSCRIBE_TO_TASK_REQUEST,
  GetExtendedAgentCardRequest: GET_EXTENDED_AGENT_CARD_REQUEST,
  GetTaskPushNotificationConfigRequest: GET_TASK_PUSH_NOTIFICATION_CONFIG_REQUEST,
  ListTaskPushNotificationConfigsRequest: LIST_TASK_PUSH_NOTIFICATION_CONFIGS_REQUEST,
  DeleteTaskPushNotificationConfigRequest: DELETE_TASK_PUSH_NOTIFICATION_CONFIG_REQUEST,
} as const satisfies Record<string, MessageDescriptor>;

// ---------------------------------------------------------------------------------------------------------
// Typed decoders. The descriptors above are the single source of the shapes; the unit tests pin them to the
// model types, which is why the one cast below is safe.

type Limits = Partial<ProtoJsonLimits>;

function decodeAs<T>(descriptor: MessageDescriptor, input: unknown, limits?: Limits): T {
  return decode(descriptor, input, '', limits) as unknown as T;
}

export const decodeSendMessageRequest = (input: unknown, limits?: Limits): SendMessageRequest =>
  decodeAs(SEND_MESSAGE_REQUEST, input, limits);

export const decodeGetTaskRequest = (input: unknown, limits?: Limits): GetTaskRequest =>
  decodeAs(GET_TASK_REQUEST, input, limits);

export const decodeListTasksRequest = (input: unknown, limits?: Limits): ListTasksRequest =>
  decodeAs(LIST_TASKS_REQUEST, input, limits);

export const decodeCancelTaskRequest = (input: unknown, limits?: Limits): CancelTaskRequest =>
  decodeAs(CANCEL_TASK_REQUEST, input, limits);

export const decodeSubscribeToTaskRequest = (
  input: unknown,
  limits?: Limits,
): SubscribeToTaskRequest => decodeAs(SUBSCRIBE_TO_TASK_REQUEST, input, limits);

/** Missing params are allowed here: the spec's own example sends none (digest §7.2). */
export const decodeGetExtendedAgentCardRequest = (
  input: unknown,
  limits?: Limits,
): GetExtendedAgentCardRequest =>
  input === undefined || input === null
    ? {}
    : decodeAs(GET_EXTENDED_AGENT_CARD_REQUEST, input, limits);

/** The CreateTaskPushNotificationConfig request (there is no wrapper type, digest §2 row 7). */
export const decodeTaskPushNotificationConfig = (
  input: unknown,
  limits?: Limits,
): TaskPushNotificationConfig => decodeAs(TASK_PUSH_NOTIFICATION_CONFIG, input, limits);

export const decodeGetTaskPushNotificationConfigRequest = (
  input: unknown,
  limits?: Limits,
): GetTaskPushNotificationConfigRequest =>
  decodeAs(GET_TASK_PUSH_NOTIFICATION_CONFIG_REQUEST, input, limits);

export const decodeListTaskPushNotificationConfigsRequest = (
  input: unknown,
  limits?: Limits,
): ListTaskPushNotificationConfigsRequest =>
  decodeAs(LIST_TASK_PUSH_NOTIFICATION_CONFIGS_REQUEST, input, limits);

export const decodeDeleteTaskPushNotificationConfigRequest = (
  input: unknown,
  limits?: Limits,
): DeleteTaskPushNotificationConfigRequest =>
  decodeAs(DELETE_TASK_PUSH_NOTIFICATION_CONFIG_REQUEST, input, limits);

/** A Message from an agent worker (any role). */
export const decodeMessage = (input: unknown, limits?: Limits): Message =>
  decodeAs(MESSAGE, input, limits);

export const decodeArtifact = (input: unknown, limits?: Limits): Artifact =>
  decodeAs(ARTIFACT, input, limits);

export const decodeTaskStatus = (input: unknown, limits?: Limits): TaskStatus =>
  decodeAs(TASK_STATUS, input, limits);

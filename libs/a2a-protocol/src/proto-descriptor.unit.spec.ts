import { describe, expect, it } from 'vitest';
import {
  describeField,
  enums,
  fieldsOf,
  messages,
  protoText,
  services,
} from '../test/support/a2a-proto';

/**
 * Checks proto/lf/a2a/v1/a2a.proto against the A2A v1.0.1 data model (digest §2, §4, §5) by parsing the
 * proto text. A field is written as "<number> <label> <type> <name>[ REQ]" where label is `singular`,
 * `optional` (proto3 explicit presence), `repeated`, `map` or `oneof:<name>`.
 */

const S = 'google.protobuf.Struct';
const TS = 'google.protobuf.Timestamp';

/** Expected fields per message, written from the digest's §4 tables. */
const EXPECTED: Record<string, string[]> = {
  Task: [
    '1 singular string id REQ',
    '2 singular string context_id',
    '3 singular TaskStatus status REQ',
    '4 repeated Artifact artifacts',
    '5 repeated Message history',
    `6 singular ${S} metadata`,
  ],
  TaskStatus: [
    '1 singular TaskState state REQ',
    '2 singular Message message',
    `3 singular ${TS} timestamp`,
  ],
  Message: [
    '1 singular string message_id REQ',
    '2 singular string context_id',
    '3 singular string task_id',
    '4 singular Role role REQ',
    '5 repeated Part parts REQ',
    `6 singular ${S} metadata`,
    '7 repeated string extensions',
    '8 repeated string reference_task_ids',
  ],
  Part: [
    '1 oneof:content string text',
    '2 oneof:content bytes raw',
    '3 oneof:content string url',
    '4 oneof:content google.protobuf.Value data',
    `5 singular ${S} metadata`,
    '6 singular string filename',
    '7 singular string media_type',
  ],
  Artifact: [
    '1 singular string artifact_id REQ',
    '2 singular string name',
    '3 singular string description',
    '4 repeated Part parts REQ',
    `5 singular ${S} metadata`,
    '6 repeated string extensions',
  ],
  TaskStatusUpdateEvent: [
    '1 singular string task_id REQ',
    '2 singular string context_id REQ',
    '3 singular TaskStatus status REQ',
    `4 singular ${S} metadata`,
  ],
  TaskArtifactUpdateEvent: [
    '1 singular string task_id REQ',
    '2 singular string context_id REQ',
    '3 singular Artifact artifact REQ',
    '4 singular bool append',
    '5 singular bool last_chunk',
    `6 singular ${S} metadata`,
  ],
  StreamResponse: [
    '1 oneof:payload Task task',
    '2 oneof:payload Message message',
    '3 oneof:payload TaskStatusUpdateEvent status_update',
    '4 oneof:payload TaskArtifactUpdateEvent artifact_update',
  ],
  SendMessageResponse: ['1 oneof:payload Task task', '2 oneof:payload Message message'],
  SendMessageRequest: [
    '1 singular string tenant',
    '2 singular Message message REQ',
    '3 singular SendMessageConfiguration configuration',
    `4 singular ${S} metadata`,
  ],
  SendMessageConfiguration: [
    '1 repeated string accepted_output_modes',
    '2 singular TaskPushNotificationConfig task_push_notification_config',
    '3 optional int32 history_length',
    '4 singular bool return_immediately',
  ],
  GetTaskRequest: [
    '1 singular string tenant',
    '2 singular string id REQ',
    '3 optional int32 history_length',
  ],
  ListTasksRequest: [
    '1 singular string tenant',
    '2 singular string context_id',
    '3 singular TaskState status',
    '4 optional int32 page_size',
    '5 singular string page_token',
    '6 optional int32 history_length',
    `7 singular ${TS} status_timestamp_after`,
    '8 optional bool include_artifacts',
  ],
  ListTasksResponse: [
    '1 repeated Task tasks REQ',
    '2 singular string next_page_token REQ',
    '3 singular int32 page_size REQ',
    '4 singular int32 total_size REQ',
  ],
  CancelTaskRequest: [
    '1 singular string tenant',
    '2 singular string id REQ',
    `3 singular ${S} metadata`,
  ],
  SubscribeToTaskRequest: ['1 singular string tenant', '2 singular string id REQ'],
  GetExtendedAgentCardRequest: ['1 singular string tenant'],
  TaskPushNotificationConfig: [
    '1 singular string tenant',
    '2 singular string id',
    '3 singular string task_id',
    '4 singular string url REQ',
    '5 singular string token',
    '6 singular AuthenticationInfo authentication',
  ],
  AuthenticationInfo: ['1 singular string scheme REQ', '2 singular string credentials'],
  GetTaskPushNotificationConfigRequest: [
    '1 singular string tenant',
    '2 singular string task_id REQ',
    '3 singular string id REQ',
  ],
  ListTaskPushNotificationConfigsRequest: [
    '1 singular string task_id REQ',
    '2 singular int32 page_size',
    '3 singular string page_token',
    '4 singular string tenant',
  ],
  ListTaskPushNotificationConfigsResponse: [
    '1 repeated TaskPushNotificationConfig configs',
    '2 singular string next_page_token',
  ],
  DeleteTaskPushNotificationConfigRequest: [
    '1 singular string tenant',
    '2 singular string task_id REQ',
    '3 singular string id REQ',
  ],
  AgentCard: [
    '1 singular string name REQ',
    '2 singular string description REQ',
    '3 repeated AgentInterface supported_interfaces REQ',
    '4 singular AgentProvider provider',
    '5 singular string version REQ',
    '6 optional string documentation_url',
    '7 singular AgentCapabilities capabilities REQ',
    '8 map map<string,SecurityScheme> security_schemes',
    '9 repeated SecurityRequirement security_requirements',
    '10 repeated string default_input_modes REQ',
    '11 repeated string default_output_modes REQ',
    '12 repeated AgentSkill skills REQ',
    '13 repeated AgentCardSignature signatures',
    '14 optional string icon_url',
  ],
  AgentInterface: [
    '1 singular string url REQ',
    '2 singular string protocol_binding REQ',
    '3 singular string tenant',
    '4 singular string protocol_version REQ',
  ],
  AgentProvider: ['1 singular string url REQ', '2 singular string organization REQ'],
  AgentCapabilities: [
    '1 optional bool streaming',
    '2 optional bool push_notifications',
    '3 repeated AgentExtension extensions',
    '4 optional bool extended_agent_card',
  ],
  AgentExtension: [
    '1 singular string uri',
    '2 singular string description',
    '3 singular bool required',
    `4 singular ${S} params`,
  ],
  AgentSkill: [
    '1 singular string id REQ',
    '2 singular string name REQ',
    '3 singular string description REQ',
    '4 repeated string tags REQ',
    '5 repeated string examples',
    '6 repeated string input_modes',
    '7 repeated string output_modes',
    '8 repeated SecurityRequirement security_requirements',
  ],
  AgentCardSignature: [
    '1 singular string protected REQ',
    '2 singular string signature REQ',
    `3 singular ${S} header`,
  ],
  SecurityRequirement: ['1 map map<string,StringList> schemes'],
  StringList: ['1 repeated string list'],
  SecurityScheme: [
    '1 oneof:scheme APIKeySecurityScheme api_key_security_scheme',
    '2 oneof:scheme HTTPAuthSecurityScheme http_auth_security_scheme',
    '3 oneof:scheme OAuth2SecurityScheme oauth2_security_scheme',
    '4 oneof:scheme OpenIdConnectSecurityScheme open_id_connect_security_scheme',
    '5 oneof:scheme MutualTlsSecurityScheme mtls_security_scheme',
  ],
  APIKeySecurityScheme: [
    '1 singular string description',
    '2 singular string location REQ',
    '3 singular string name REQ',
  ],
  HTTPAuthSecurityScheme: [
    '1 singular string description',
    '2 singular string scheme REQ',
    '3 singular string bearer_format',
  ],
  OAuth2SecurityScheme: [
    '1 singular string description',
    '2 singular OAuthFlows flows REQ',
    '3 singular string oauth2_metadata_url',
  ],
  OpenIdConnectSecurityScheme: [
    '1 singular string description',
    '2 singular string open_id_connect_url REQ',
  ],
  MutualTlsSecurityScheme: ['1 singular string description'],
  OAuthFlows: [
    '1 oneof:flow AuthorizationCodeOAuthFlow authorization_code',
    '2 oneof:flow ClientCredentialsOAuthFlow client_credentials',
    '3 oneof:flow ImplicitOAuthFlow implicit',
    '4 oneof:flow PasswordOAuthFlow password',
    '5 oneof:flow DeviceCodeOAuthFlow device_code',
  ],
  AuthorizationCodeOAuthFlow: [
    '1 singular string authorization_url REQ',
    '2 singular string token_url REQ',
    '3 singular string refresh_url',
    '4 map map<string,string> scopes REQ',
    '5 singular bool pkce_required',
  ],
  ClientCredentialsOAuthFlow: [
    '1 singular string token_url REQ',
    '2 singular string refresh_url',
    '3 map map<string,string> scopes REQ',
  ],
  DeviceCodeOAuthFlow: [
    '1 singular string device_authorization_url REQ',
    '2 singular string token_url REQ',
    '3 singular string refresh_url',
    '4 map map<string,string> scopes REQ',
  ],
  ImplicitOAuthFlow: [
    '1 singular string authorization_url',
    '2 singular string refresh_url',
    '3 map map<string,string> scopes',
  ],
  PasswordOAuthFlow: [
    '1 singular string token_url',
    '2 singular string refresh_url',
    '3 map map<string,string> scopes',
  ],
};

/** The messages the lead asked to check at minimum; all must be present in EXPECTED. */
const REQUIRED_COVERAGE = [
  'Task',
  'TaskStatus',
  'Message',
  'Part',
  'Artifact',
  'TaskStatusUpdateEvent',
  'TaskArtifactUpdateEvent',
  'StreamResponse',
  'SendMessageRequest',
  'SendMessageConfiguration',
  'GetTaskRequest',
  'ListTasksRequest',
  'ListTasksResponse',
  'CancelTaskRequest',
  'SubscribeToTaskRequest',
  'TaskPushNotificationConfig',
  'AgentCard',
  'AgentInterface',
  'AgentCapabilities',
  'AgentSkill',
];

function enumValues(name: string): Record<string, number> {
  const body = enums.get(name);
  if (body === undefined) {
    throw new Error(`enum ${name} not found in a2a.proto`);
  }
  const values: Record<string, number> = {};
  for (const m of body.matchAll(/(\w+)\s*=\s*(\d+)\s*;/g)) {
    values[m[1] as string] = Number(m[2]);
  }
  return values;
}

describe('a2a.proto matches the A2A v1.0.1 data model', () => {
  it('declares package lf.a2a.v1 in proto3', () => {
    expect(protoText).toMatch(/^\s*syntax\s*=\s*"proto3"\s*;/);
    expect(protoText).toMatch(/\npackage\s+lf\.a2a\.v1\s*;/);
  });

  it('covers at least the required message table', () => {
    for (const name of REQUIRED_COVERAGE) {
      expect(Object.keys(EXPECTED)).toContain(name);
    }
  });

  it('declares exactly the digest messages', () => {
    expect([...messages.keys()].sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  it.each(Object.entries(EXPECTED))(
    '%s fields (number, cardinality, type, name, REQUIRED)',
    (name, fields) => {
      const parsed = fieldsOf(name);
      expect(parsed.map(describeField)).toEqual(fields);
      // Field names and numbers are each unique within the message.
      expect(new Set(parsed.map((f) => f.number)).size).toBe(parsed.length);
      expect(new Set(parsed.map((f) => f.name)).size).toBe(parsed.length);
    },
  );

  it('has tenant at field 1 in every request, except ListTaskPushNotificationConfigsRequest (4)', () => {
    const tenantNumbers = Object.fromEntries(
      [
        'SendMessageRequest',
        'GetTaskRequest',
        'ListTasksRequest',
        'CancelTaskRequest',
        'SubscribeToTaskRequest',
        'GetTaskPushNotificationConfigRequest',
        'DeleteTaskPushNotificationConfigRequest',
        'ListTaskPushNotificationConfigsRequest',
        'GetExtendedAgentCardRequest',
        'TaskPushNotificationConfig',
      ].map((m) => [m, fieldsOf(m).find((f) => f.name === 'tenant')?.number]),
    );
    expect(tenantNumbers).toEqual({
      SendMessageRequest: 1,
      GetTaskRequest: 1,
      ListTasksRequest: 1,
      CancelTaskRequest: 1,
      SubscribeToTaskRequest: 1,
      GetTaskPushNotificationConfigRequest: 1,
      DeleteTaskPushNotificationConfigRequest: 1,
      ListTaskPushNotificationConfigsRequest: 4,
      GetExtendedAgentCardRequest: 1,
      TaskPushNotificationConfig: 1,
    });
  });

  it('marks only the implicit and password OAuth flows as deprecated', () => {
    const deprecated = [...messages.keys()].flatMap((m) =>
      fieldsOf(m)
        .filter((f) => f.deprecated)
        .map((f) => `${m}.${f.name}`),
    );
    expect(deprecated).toEqual(['OAuthFlows.implicit', 'OAuthFlows.password']);
  });

  it('TaskState enum numbers', () => {
    expect(enumValues('TaskState')).toEqual({
      TASK_STATE_UNSPECIFIED: 0,
      TASK_STATE_SUBMITTED: 1,
      TASK_STATE_WORKING: 2,
      TASK_STATE_COMPLETED: 3,
      TASK_STATE_FAILED: 4,
      TASK_STATE_CANCELED: 5,
      TASK_STATE_INPUT_REQUIRED: 6,
      TASK_STATE_REJECTED: 7,
      TASK_STATE_AUTH_REQUIRED: 8,
    });
  });

  it('Role enum numbers', () => {
    expect(enumValues('Role')).toEqual({ ROLE_UNSPECIFIED: 0, ROLE_USER: 1, ROLE_AGENT: 2 });
  });

  it('declares no other enums', () => {
    expect([...enums.keys()].sort()).toEqual(['Role', 'TaskState']);
  });

  it('declares A2AService with the 11 RPCs in digest order', () => {
    expect([...services.keys()]).toEqual(['A2AService']);
    const rpcs = [
      ...(services.get('A2AService') as string).matchAll(
        /rpc\s+(\w+)\s*\(\s*(\w+)\s*\)\s*returns\s*\(\s*(stream\s+)?([\w.]+)\s*\)/g,
      ),
    ].map((m) => `${m[1]}(${m[2]}) -> ${m[3] ? 'stream ' : ''}${m[4]}`);
    expect(rpcs).toEqual([
      'SendMessage(SendMessageRequest) -> SendMessageResponse',
      'SendStreamingMessage(SendMessageRequest) -> stream StreamResponse',
      'GetTask(GetTaskRequest) -> Task',
      'ListTasks(ListTasksRequest) -> ListTasksResponse',
      'CancelTask(CancelTaskRequest) -> Task',
      'SubscribeToTask(SubscribeToTaskRequest) -> stream StreamResponse',
      'CreateTaskPushNotificationConfig(TaskPushNotificationConfig) -> TaskPushNotificationConfig',
      'GetTaskPushNotificationConfig(GetTaskPushNotificationConfigRequest) -> TaskPushNotificationConfig',
      'ListTaskPushNotificationConfigs(ListTaskPushNotificationConfigsRequest) -> ListTaskPushNotificationConfigsResponse',
      'GetExtendedAgentCard(GetExtendedAgentCardRequest) -> AgentCard',
      'DeleteTaskPushNotificationConfig(DeleteTaskPushNotificationConfigRequest) -> google.protobuf.Empty',
    ]);
  });

  it('maps every RPC to its primary HTTP route and the /{tenant} variant', () => {
    const body = services.get('A2AService') as string;
    const routes = [...body.matchAll(/\b(get|post|delete):\s*"([^"]+)"/g)].map(
      (m) => `${m[1]?.toUpperCase()} ${m[2]}`,
    );
    expect(routes).toEqual([
      'POST /message:send',
      'POST /{tenant}/message:send',
      'POST /message:stream',
      'POST /{tenant}/message:stream',
      'GET /tasks/{id=*}',
      'GET /{tenant}/tasks/{id=*}',
      'GET /tasks',
      'GET /{tenant}/tasks',
      'POST /tasks/{id=*}:cancel',
      'POST /{tenant}/tasks/{id=*}:cancel',
      'GET /tasks/{id=*}:subscribe',
      'GET /{tenant}/tasks/{id=*}:subscribe',
      'POST /tasks/{task_id=*}/pushNotificationConfigs',
      'POST /{tenant}/tasks/{task_id=*}/pushNotificationConfigs',
      'GET /tasks/{task_id=*}/pushNotificationConfigs/{id=*}',
      'GET /{tenant}/tasks/{task_id=*}/pushNotificationConfigs/{id=*}',
      'GET /tasks/{task_id=*}/pushNotificationConfigs',
      'GET /{tenant}/tasks/{task_id=*}/pushNotificationConfigs',
      'GET /extendedAgentCard',
      'GET /{tenant}/extendedAgentCard',
      'DELETE /tasks/{task_id=*}/pushNotificationConfigs/{id=*}',
      'DELETE /{tenant}/tasks/{task_id=*}/pushNotificationConfigs/{id=*}',
    ]);
    const signatures = [...body.matchAll(/\(google\.api\.method_signature\)\s*=\s*"([^"]*)"/g)].map(
      (m) => m[1],
    );
    expect(signatures).toEqual(['id', 'task_id,config', 'task_id,id', 'task_id', 'task_id,id']);
  });
});

import { TASK_STATES } from '@lib/a2a-protocol';
import { TENANT_SCOPES } from '@lib/authz';
import { DELIVERY_STATES, MAX_DELIVERY_PAGE_SIZE } from '@lib/push';
import type { AdminPermission } from './admin-route';
import { MAX_TASK_PAGE_SIZE } from './task-admin.store';
import { CHANGES_HEARTBEAT_MS } from './tasks.controller';

/** An operation of the document: what the route-consistency test compares with the controllers. */
interface Operation {
  operationId: string;
  summary: string;
  'x-permission': AdminPermission;
  requestBody?: object;
  responses: Record<string, object>;
  parameters?: object[];
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: object) => ({ content: { 'application/json': { schema } } });
const body = (name: string) => ({ required: true, ...json(ref(name)) });
const ok = (schema: object, description = 'OK') => ({ description, ...json(schema) });
const listOf = (field: string, item: string) => ({
  type: 'object',
  required: [field],
  properties: { [field]: { type: 'array', items: ref(item) } },
});
const path = (...names: string[]) =>
  names.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } }));
const errors = (...codes: number[]) =>
  Object.fromEntries(
    [401, 403, ...codes].map((code) => [
      code,
      { description: ERROR_TEXT[code] ?? 'error', ...json(ref('Error')) },
    ]),
  );
const ERROR_TEXT: Record<number, string> = {
  400: 'invalid input: nothing changed; `fields` names each bad field',
  401: 'missing, unknown, revoked or expired credential (`WWW-Authenticate: Bearer`)',
  403: 'the credential may not do this',
  404: 'no such tenant, agent, credential, delivery or task (also for another tenant’s)',
  409: 'the operation does not fit the current state',
};

const op = (
  operationId: string,
  permission: AdminPermission,
  summary: string,
  responses: Record<string, object>,
  extra: Partial<Operation> = {},
): Operation => ({ operationId, summary, 'x-permission': permission, responses, ...extra });

const tenant = path('tenantId');
const agent = path('tenantId', 'agentId');
const query = (name: string, schema: object, description?: string) => ({
  name,
  in: 'query',
  schema,
  ...(description ? { description } : {}),
});
const taskFilters = [
  query('agentId', { type: 'string' }),
  query('state', { enum: [...TASK_STATES] }),
  query('contextId', { type: 'string' }),
];
const nullable = (type: string, format?: string) => ({
  type: [type, 'null'],
  ...(format ? { format } : {}),
});
const time = { type: 'string', format: 'date-time' };

/**
 * The admin API's OpenAPI 3.1 document, served at `/admin/v1/openapi.json` and checked in as
 * `docs/admin-api.openapi.json` (`npm run gen:check` fails when it is stale). `operationId` is the audit
 * record's operation; `x-permission` the permission the route checks. A test compares both, and every
 * path and method, with the controllers.
 */
export const ADMIN_OPENAPI = {
  openapi: '3.1.0',
  info: {
    title: 'A2A platform admin API',
    version: '1.0.0',
    description:
      'Operate the platform: tenants, their agents, API keys, worker credentials, OIDC issuers, the audit ' +
      'trail, webhook deliveries, connected workers and tasks (with their event timeline and a live stream ' +
      'of changes). Authenticate with ' +
      '`Authorization: Bearer <token>`: ADMIN_BOOTSTRAP_TOKEN or an admin key (platform admin), or a ' +
      'tenant API key with the scope tenant:admin (that tenant only).',
  },
  security: [{ bearer: [] }],
  paths: {
    '/admin/v1/tenants': {
      post: op(
        'admin.tenant.create',
        'platform:admin',
        'Create a tenant',
        {
          201: ok(ref('Tenant'), 'created'),
          ...errors(400, 409),
        },
        { requestBody: body('TenantCreate') },
      ),
      get: op('admin.tenant.list', 'platform:admin', 'List tenants', {
        200: ok(listOf('tenants', 'Tenant')),
        ...errors(),
      }),
    },
    '/admin/v1/tenants/{tenantId}': {
      get: op(
        'admin.tenant.get',
        'tenant:admin',
        'Read a tenant',
        {
          200: ok(ref('Tenant')),
          ...errors(404),
        },
        { parameters: tenant },
      ),
      patch: op(
        'admin.tenant.update',
        'platform:admin',
        'Change a tenant’s name or quotas',
        {
          200: ok(ref('Tenant')),
          ...errors(400, 404),
        },
        { parameters: tenant, requestBody: body('TenantUpdate') },
      ),
      delete: op(
        'admin.tenant.delete',
        'platform:admin',
        'Start deleting a tenant (its calls are refused until purged or resumed)',
        {
          202: ok(ref('Tenant'), 'marked deleting'),
          ...errors(404, 409),
        },
        { parameters: tenant },
      ),
    },
    '/admin/v1/tenants/{tenantId}/usage': {
      get: op(
        'admin.tenant.usage',
        'tenant:admin',
        'What the tenant uses of its quotas now',
        { 200: ok(ref('Usage')), ...errors(404) },
        { parameters: tenant },
      ),
    },
    '/admin/v1/tenants/{tenantId}/suspend': {
      post: op(
        'admin.tenant.suspend',
        'platform:admin',
        'Suspend a tenant (calls answer 403 / PERMISSION_DENIED)',
        {
          200: ok(ref('Tenant')),
          ...errors(404, 409),
        },
        { parameters: tenant },
      ),
    },
    '/admin/v1/tenants/{tenantId}/resume': {
      post: op(
        'admin.tenant.resume',
        'platform:admin',
        'Resume a suspended or deleting tenant',
        {
          200: ok(ref('Tenant')),
          ...errors(404),
        },
        { parameters: tenant },
      ),
    },
    '/admin/v1/tenants/{tenantId}/purge': {
      post: op(
        'admin.tenant.purge',
        'platform:admin',
        'Remove everything a deleting tenant owns',
        {
          200: ok({
            type: 'object',
            required: ['tenantId', 'deleted'],
            properties: {
              tenantId: { type: 'string' },
              deleted: { type: 'object', additionalProperties: { type: 'integer' } },
            },
          }),
          ...errors(400, 404, 409),
        },
        {
          parameters: tenant,
          requestBody: body('PurgeConfirmation'),
        },
      ),
    },
    '/admin/v1/tenants/{tenantId}/agents': {
      get: op(
        'admin.agent.list',
        'tenant:admin',
        'List a tenant’s agents',
        {
          200: ok(listOf('agents', 'Agent')),
          ...errors(404),
        },
        { parameters: tenant },
      ),
    },
    '/admin/v1/tenants/{tenantId}/agents/{agentId}': {
      put: op(
        'admin.agent.put',
        'tenant:admin',
        'Define an agent (card and worker policy); served within a second',
        {
          200: ok(ref('Agent'), 'replaced'),
          201: ok(ref('Agent'), 'created'),
          ...errors(400, 404),
        },
        { parameters: agent, requestBody: body('AgentDefinition') },
      ),
      get: op(
        'admin.agent.get',
        'tenant:admin',
        'Read an agent',
        {
          200: ok(ref('Agent')),
          ...errors(404),
        },
        { parameters: agent },
      ),
      delete: op(
        'admin.agent.delete',
        'tenant:admin',
        'Remove an agent and its worker credentials',
        {
          204: { description: 'removed' },
          ...errors(404),
        },
        { parameters: agent },
      ),
    },
    '/admin/v1/tenants/{tenantId}/agents/{agentId}/import': {
      post: op(
        'admin.agent.import',
        'tenant:admin',
        'Import an existing A2A server as a hosted agent, from its card (docs/upstream.md)',
        {
          200: ok(ref('ImportedAgent'), 'imported again over the existing agent'),
          201: ok(ref('ImportedAgent'), 'created'),
          ...errors(400, 404, 409),
        },
        { parameters: agent, requestBody: body('AgentImport') },
      ),
    },
    '/admin/v1/tenants/{tenantId}/agents/{agentId}/sync': {
      post: op(
        'admin.agent.sync',
        'tenant:admin',
        'Read an imported agent’s card again; a change is a new version of its definition',
        {
          200: ok(ref('ImportedAgent')),
          ...errors(400, 404, 409),
        },
        { parameters: agent },
      ),
    },
    '/admin/v1/tenants/{tenantId}/agents/{agentId}/upstream': {
      get: op(
        'admin.agent.upstream',
        'tenant:admin',
        'Where an imported agent forwards to (header names only, never their values)',
        {
          200: ok(ref('Upstream')),
          ...errors(404),
        },
        { parameters: agent },
      ),
    },
    '/admin/v1/tenants/{tenantId}/api-keys': {
      post: op(
        'admin.api-key.issue',
        'tenant:admin',
        'Issue an API key (the secret is in this answer only)',
        {
          201: ok(ref('IssuedApiKey'), 'issued'),
          ...errors(400, 404),
        },
        { parameters: tenant, requestBody: body('ApiKeyIssue') },
      ),
      get: op(
        'admin.api-key.list',
        'tenant:admin',
        'List a tenant’s API keys (no secrets)',
        {
          200: ok(listOf('apiKeys', 'ApiKey')),
          ...errors(404),
        },
        { parameters: tenant },
      ),
    },
    '/admin/v1/tenants/{tenantId}/api-keys/{keyId}': {
      delete: op(
        'admin.api-key.revoke',
        'tenant:admin',
        'Revoke an API key (every replica within a second)',
        {
          200: ok(ref('ApiKey')),
          ...errors(404),
        },
        { parameters: path('tenantId', 'keyId') },
      ),
    },
    '/admin/v1/tenants/{tenantId}/agents/{agentId}/worker-credentials': {
      post: op(
        'admin.worker-credential.issue',
        'tenant:admin',
        'Issue a worker credential bound to the agent',
        {
          201: ok(ref('IssuedWorkerCredential'), 'issued'),
          ...errors(400, 404),
        },
        {
          parameters: agent,
          requestBody: { required: false, ...json(ref('WorkerCredentialIssue')) },
        },
      ),
      get: op(
        'admin.worker-credential.list',
        'tenant:admin',
        'List the agent’s worker credentials',
        {
          200: ok(listOf('workerCredentials', 'WorkerCredential')),
          ...errors(404),
        },
        { parameters: agent },
      ),
    },
    '/admin/v1/tenants/{tenantId}/agents/{agentId}/worker-credentials/{credentialId}': {
      delete: op(
        'admin.worker-credential.revoke',
        'tenant:admin',
        'Revoke a worker credential',
        {
          200: ok(ref('WorkerCredential')),
          ...errors(404),
        },
        { parameters: path('tenantId', 'agentId', 'credentialId') },
      ),
    },
    '/admin/v1/tenants/{tenantId}/oidc-issuers': {
      get: op(
        'admin.oidc-issuer.list',
        'tenant:admin',
        'List the OIDC issuers the tenant trusts',
        { 200: ok(listOf('issuers', 'OidcIssuer')), ...errors(404) },
        { parameters: tenant },
      ),
    },
    '/admin/v1/tenants/{tenantId}/oidc-issuers/{issuerId}': {
      put: op(
        'admin.oidc-issuer.put',
        'tenant:admin',
        'Trust an OIDC issuer’s bearer tokens (or change how)',
        {
          200: ok(ref('OidcIssuer'), 'replaced'),
          201: ok(ref('OidcIssuer'), 'created'),
          ...errors(400, 404),
        },
        { parameters: path('tenantId', 'issuerId'), requestBody: body('OidcIssuerDefinition') },
      ),
      delete: op(
        'admin.oidc-issuer.delete',
        'tenant:admin',
        'Stop trusting an issuer',
        { 204: { description: 'removed' }, ...errors(404) },
        { parameters: path('tenantId', 'issuerId') },
      ),
    },
    '/admin/v1/tenants/{tenantId}/audit': {
      get: op(
        'admin.audit.query',
        'tenant:admin',
        'Query the audit trail (newest first; `_platform`: the platform’s own)',
        { 200: ok(ref('AuditPage')), ...errors(400, 404) },
        {
          parameters: [
            ...tenant,
            ...['from', 'to'].map((name) => ({
              name,
              in: 'query',
              schema: { type: 'string', format: 'date-time' },
            })),
            ...['principal', 'operation', 'resource', 'cursor'].map((name) => ({
              name,
              in: 'query',
              schema: { type: 'string' },
            })),
            {
              name: 'outcome',
              in: 'query',
              schema: { enum: ['ok', 'denied', 'unauthenticated', 'failed'] },
            },
            { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 500 } },
          ],
        },
      ),
    },
    '/admin/v1/tenants/{tenantId}/audit/verify': {
      post: op(
        'admin.audit.verify',
        'tenant:admin',
        'Verify the hash chain; names the first broken record',
        { 200: ok(ref('AuditVerification')), ...errors(404) },
        { parameters: tenant },
      ),
    },
    '/admin/v1/tenants/{tenantId}/push-deliveries': {
      get: op(
        'admin.push-delivery.list',
        'tenant:admin',
        'List the tenant’s webhook deliveries (newest first)',
        { 200: ok(ref('PushDeliveryPage')), ...errors(400, 404) },
        {
          parameters: [
            ...tenant,
            { name: 'task', in: 'query', schema: { type: 'string' } },
            { name: 'state', in: 'query', schema: { enum: [...DELIVERY_STATES] } },
            {
              name: 'limit',
              in: 'query',
              schema: { type: 'integer', minimum: 1, maximum: MAX_DELIVERY_PAGE_SIZE },
            },
            { name: 'cursor', in: 'query', schema: { type: 'string' } },
          ],
        },
      ),
    },
    '/admin/v1/tenants/{tenantId}/push-deliveries/{deliveryId}/redrive': {
      post: op(
        'admin.push-delivery.redrive',
        'tenant:admin',
        'Send a dead delivery again, from its first attempt (any other delivery: 404)',
        {
          200: ok({
            type: 'object',
            required: ['delivery'],
            properties: { delivery: ref('PushDelivery') },
          }),
          ...errors(404),
        },
        { parameters: path('tenantId', 'deliveryId') },
      ),
    },
    '/admin/v1/whoami': {
      get: op('admin.whoami', 'authenticated', 'What the presented credential is and may do', {
        200: ok(ref('WhoAmI')),
        ...errors(),
      }),
    },
    '/admin/v1/tenants/{tenantId}/workers': {
      get: op(
        'admin.worker.list',
        'tenant:admin',
        'The worker sessions connected to the task-service replicas (refreshed every few seconds)',
        { 200: ok(listOf('workers', 'ConnectedWorker')), ...errors(400, 404) },
        { parameters: [...tenant, query('agentId', { type: 'string' })] },
      ),
    },
    '/admin/v1/tenants/{tenantId}/tasks': {
      get: op(
        'admin.task.list',
        'tenant:admin',
        'List the tenant’s tasks, every principal’s (newest status first)',
        { 200: ok(ref('TaskPage')), ...errors(400, 404) },
        {
          parameters: [
            ...tenant,
            ...taskFilters,
            query('limit', {
              type: 'integer',
              minimum: 1,
              maximum: MAX_TASK_PAGE_SIZE,
              default: 50,
            }),
            query('cursor', { type: 'string' }, 'nextCursor of the previous page, same filters'),
          ],
        },
      ),
    },
    '/admin/v1/tenants/{tenantId}/tasks/changes': {
      get: op(
        'admin.task.changes',
        'tenant:admin',
        'Live task changes (Server-Sent Events): one `task` event per change from now on',
        {
          200: {
            description:
              'An endless `text/event-stream`: `event: task` with a TaskChange as `data` for each ' +
              'change of a matching task (each version once; a change whose notice was lost within a ' +
              `second), and a comment line every ${CHANGES_HEARTBEAT_MS / 1000} s. Open it before ` +
              'reading the list, so that no change falls in between.',
            content: { 'text/event-stream': { schema: ref('TaskChange') } },
          },
          ...errors(400, 404),
        },
        { parameters: [...tenant, ...taskFilters] },
      ),
    },
    '/admin/v1/tenants/{tenantId}/tasks/{taskId}': {
      get: op(
        'admin.task.get',
        'tenant:admin',
        'Read a task as stored: status, history, artifacts, agent, owner, version and its work',
        { 200: ok(ref('TaskDetail')), ...errors(404) },
        { parameters: path('tenantId', 'taskId') },
      ),
    },
    '/admin/v1/tenants/{tenantId}/tasks/{taskId}/events': {
      get: op(
        'admin.task.events',
        'tenant:admin',
        'The task’s event timeline from the log, oldest first',
        { 200: ok(ref('TimelinePage')), ...errors(400, 404) },
        {
          parameters: [
            ...path('tenantId', 'taskId'),
            query(
              'after',
              { type: 'integer', minimum: 0, default: 0 },
              'events after this generation (nextAfter of the previous page)',
            ),
            query('limit', {
              type: 'integer',
              minimum: 1,
              maximum: MAX_TASK_PAGE_SIZE,
              default: 200,
            }),
          ],
        },
      ),
    },
    '/admin/v1/admin-keys': {
      post: op(
        'admin.admin-key.issue',
        'platform:admin',
        'Issue a platform admin key',
        {
          201: ok(ref('IssuedAdminKey'), 'issued'),
          ...errors(400),
        },
        { requestBody: body('AdminKeyIssue') },
      ),
      get: op('admin.admin-key.list', 'platform:admin', 'List admin keys (no secrets)', {
        200: ok(listOf('adminKeys', 'AdminKey')),
        ...errors(),
      }),
    },
    '/admin/v1/admin-keys/{keyId}': {
      delete: op(
        'admin.admin-key.revoke',
        'platform:admin',
        'Revoke an admin key',
        {
          200: ok(ref('AdminKey')),
          ...errors(404),
        },
        { parameters: path('keyId') },
      ),
    },
  },
  components: {
    securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
    schemas: {
      Error: {
        type: 'object',
        required: ['error'],
        properties: {
          error: {
            type: 'object',
            required: ['code', 'status', 'message'],
            properties: {
              code: { type: 'integer' },
              status: { type: 'string' },
              message: { type: 'string' },
              fields: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['field', 'description'],
                  properties: { field: { type: 'string' }, description: { type: 'string' } },
                },
              },
            },
          },
        },
      },
      Quotas: {
        type: 'object',
        properties: {
          requestsPerSecond: { type: ['integer', 'null'], minimum: 1 },
          maxActiveTasks: { type: ['integer', 'null'], minimum: 1 },
        },
        additionalProperties: false,
      },
      Tenant: {
        type: 'object',
        required: ['tenantId', 'displayName', 'status', 'quotas', 'createdAt', 'statusChangedAt'],
        properties: {
          tenantId: { type: 'string' },
          displayName: { type: 'string' },
          status: { enum: ['active', 'suspended', 'deleting'] },
          quotas: ref('Quotas'),
          createdAt: { type: 'string', format: 'date-time' },
          statusChangedAt: { type: ['string', 'null'], format: 'date-time' },
        },
      },
      TenantCreate: {
        type: 'object',
        required: ['tenantId', 'displayName'],
        properties: {
          tenantId: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]{0,62}$' },
          displayName: { type: 'string', minLength: 1, maxLength: 256 },
          quotas: ref('Quotas'),
        },
        additionalProperties: false,
      },
      TenantUpdate: {
        type: 'object',
        properties: {
          displayName: { type: 'string', minLength: 1, maxLength: 256 },
          quotas: ref('Quotas'),
        },
        additionalProperties: false,
      },
      PurgeConfirmation: {
        type: 'object',
        required: ['confirm'],
        properties: { confirm: { type: 'string', description: 'the tenant id again' } },
      },
      AgentCard: {
        type: 'object',
        description:
          'The card fields the agent contributes (A2A AgentCard ProtoJSON names); the platform adds ' +
          'interfaces, provider, streaming and security.',
        required: ['name', 'description', 'version'],
        properties: {
          name: { type: 'string' },
          description: { type: 'string' },
          version: { type: 'string' },
          defaultInputModes: { type: 'array', items: { type: 'string' } },
          defaultOutputModes: { type: 'array', items: { type: 'string' } },
          skills: { type: 'array', items: { type: 'object' } },
          documentationUrl: { type: 'string', format: 'uri' },
          iconUrl: { type: 'string', format: 'uri' },
          extensions: { type: 'array', items: { type: 'object' } },
          pushNotifications: { type: 'boolean' },
          extendedAgentCard: { type: 'boolean' },
          extendedCard: { type: 'object' },
          messageReplies: { type: 'boolean' },
          a2ui: {
            type: 'boolean',
            description:
              'The card declares the A2UI extension (https://a2ui.org/a2a-extension/a2ui/v0.9 and /v0.9.1) ' +
              'with the v0.9 basic catalog; docs/a2ui.md.',
          },
        },
        additionalProperties: false,
      },
      WorkerPolicy: {
        type: 'object',
        properties: {
          onLeaseLost: { enum: ['redispatch', 'fail'], default: 'redispatch' },
          maxAttempts: { type: 'integer', minimum: 1, maximum: 100, default: 3 },
          leaseTtlMs: { type: ['integer', 'null'], minimum: 1000, maximum: 3600000 },
          maxConcurrency: { type: ['integer', 'null'], minimum: 1 },
        },
        additionalProperties: false,
      },
      AgentDefinition: {
        type: 'object',
        required: ['card'],
        properties: { card: ref('AgentCard'), policy: ref('WorkerPolicy') },
        additionalProperties: false,
      },
      Agent: {
        type: 'object',
        required: ['tenantId', 'agentId', 'card', 'policy', 'imported', 'createdAt', 'updatedAt'],
        properties: {
          tenantId: { type: 'string' },
          agentId: { type: 'string' },
          card: ref('AgentCard'),
          policy: ref('WorkerPolicy'),
          imported: {
            type: 'boolean',
            description: 'imported from an A2A server (its upstream: GET …/upstream)',
          },
          createdAt: { type: 'string', format: 'date-time' },
          updatedAt: { type: 'string', format: 'date-time' },
        },
      },
      AgentImport: {
        type: 'object',
        required: ['cardUrl'],
        properties: {
          cardUrl: { type: 'string', format: 'uri', maxLength: 2048 },
          headers: {
            type: 'object',
            description:
              'Sent with the card request and every call upstream (an API key, `Authorization`); stored ' +
              'sealed, never answered. Omitted: no headers.',
            additionalProperties: { type: 'string', maxLength: 8192 },
          },
          binding: { enum: ['JSONRPC', 'HTTP+JSON', 'GRPC'] },
          oauth2: {
            type: 'object',
            description:
              'OAuth 2 client credentials (RFC 6749 §4.4): the bridge gets a bearer token at tokenUrl and ' +
              'sends it upstream, cached until it expires; the secret is stored sealed, never answered.',
            required: ['tokenUrl', 'clientId', 'clientSecret'],
            properties: {
              tokenUrl: { type: 'string', format: 'uri' },
              clientId: { type: 'string' },
              clientSecret: { type: 'string', writeOnly: true },
              scope: { type: 'string' },
            },
            additionalProperties: false,
          },
        },
        additionalProperties: false,
      },
      Upstream: {
        type: 'object',
        required: [
          'cardUrl',
          'binding',
          'endpoint',
          'streaming',
          'cardSigned',
          'cardVerified',
          'headerNames',
          'workerCredentialId',
          'version',
          'importedAt',
          'syncedAt',
        ],
        properties: {
          cardUrl: { type: 'string' },
          binding: { enum: ['JSONRPC', 'HTTP+JSON', 'GRPC'] },
          endpoint: { type: 'string' },
          streaming: { type: 'boolean' },
          cardSigned: { type: 'boolean' },
          cardVerified: { type: 'boolean' },
          headerNames: { type: 'array', items: { type: 'string' } },
          headersSetAt: { type: ['string', 'null'], format: 'date-time' },
          oauth2: {
            type: ['object', 'null'],
            properties: {
              tokenUrl: { type: 'string' },
              clientId: { type: 'string' },
              scope: { type: 'string' },
            },
          },
          workerCredentialId: { type: 'string' },
          version: { type: 'integer' },
          importedAt: { type: 'string', format: 'date-time' },
          syncedAt: { type: 'string', format: 'date-time' },
        },
      },
      ImportedAgent: {
        type: 'object',
        required: ['agent', 'upstream', 'changed', 'created', 'warnings'],
        properties: {
          agent: ref('Agent'),
          upstream: ref('Upstream'),
          changed: { type: 'boolean' },
          created: { type: 'boolean' },
          warnings: {
            type: 'array',
            description:
              'What the import or sync could not do although the agent is imported: an extended card the ' +
              'upstream declares that could not be read (the agent is served without it, or with the one ' +
              'read before); each is also audited as a failed admin.agent.extended-card.',
            items: {
              type: 'object',
              required: ['code', 'message'],
              properties: {
                code: { enum: ['EXTENDED_CARD_NOT_READ'] },
                message: { type: 'string' },
              },
            },
          },
        },
      },
      ApiKeyIssue: {
        type: 'object',
        required: ['principalId'],
        properties: {
          principalId: { type: 'string' },
          scopes: {
            type: 'array',
            items: { enum: [...TENANT_SCOPES] },
          },
          label: { type: 'string', maxLength: 256 },
          expiresAt: { type: 'string', format: 'date-time' },
        },
        additionalProperties: false,
      },
      ApiKey: {
        type: 'object',
        required: ['keyId', 'tenantId', 'principalId', 'scopes', 'label', 'prefix', 'createdAt'],
        properties: {
          keyId: { type: 'string' },
          tenantId: { type: 'string' },
          principalId: { type: 'string' },
          scopes: { type: 'array', items: { type: 'string' } },
          label: { type: 'string' },
          prefix: { type: 'string' },
          createdAt: { type: 'string', format: 'date-time' },
          expiresAt: { type: ['string', 'null'], format: 'date-time' },
          revokedAt: { type: ['string', 'null'], format: 'date-time' },
        },
      },
      IssuedApiKey: {
        type: 'object',
        required: ['credential', 'secret'],
        properties: { credential: ref('ApiKey'), secret: { type: 'string' } },
      },
      WorkerCredentialIssue: {
        type: 'object',
        properties: { label: { type: 'string', maxLength: 256 } },
        additionalProperties: false,
      },
      WorkerCredential: {
        type: 'object',
        required: ['credentialId', 'tenantId', 'agentId', 'label', 'prefix', 'createdAt'],
        properties: {
          credentialId: { type: 'string' },
          tenantId: { type: 'string' },
          agentId: { type: 'string' },
          label: { type: 'string' },
          prefix: { type: 'string' },
          createdAt: { type: 'string', format: 'date-time' },
          revokedAt: { type: ['string', 'null'], format: 'date-time' },
        },
      },
      IssuedWorkerCredential: {
        type: 'object',
        required: ['credential', 'secret'],
        properties: { credential: ref('WorkerCredential'), secret: { type: 'string' } },
      },
      AdminKeyIssue: {
        type: 'object',
        required: ['principalId'],
        properties: {
          principalId: { type: 'string' },
          label: { type: 'string', maxLength: 256 },
          expiresAt: { type: 'string', format: 'date-time' },
        },
        additionalProperties: false,
      },
      AdminKey: {
        type: 'object',
        required: ['keyId', 'principalId', 'label', 'prefix', 'createdAt'],
        properties: {
          keyId: { type: 'string' },
          principalId: { type: 'string' },
          label: { type: 'string' },
          prefix: { type: 'string' },
          createdAt: { type: 'string', format: 'date-time' },
          expiresAt: { type: ['string', 'null'], format: 'date-time' },
          revokedAt: { type: ['string', 'null'], format: 'date-time' },
        },
      },
      OidcIssuerDefinition: {
        type: 'object',
        required: ['issuer', 'audience', 'jwksUrl'],
        properties: {
          issuer: { type: 'string', format: 'uri', description: 'the exact iss of its tokens' },
          audience: { type: 'string', description: 'the aud its tokens must carry' },
          jwksUrl: { type: 'string', format: 'uri' },
          principalClaim: { type: 'string', default: 'sub' },
          scopesClaim: { type: 'string', default: 'scope' },
          scopeMap: {
            type: 'object',
            description: 'external scope → platform scopes (unmapped scopes grant nothing)',
            additionalProperties: { type: 'array', items: { type: 'string' } },
          },
        },
        additionalProperties: false,
      },
      OidcIssuer: {
        allOf: [
          ref('OidcIssuerDefinition'),
          {
            type: 'object',
            required: ['tenantId', 'issuerId', 'createdAt'],
            properties: {
              tenantId: { type: 'string' },
              issuerId: { type: 'string' },
              createdAt: { type: 'string', format: 'date-time' },
            },
          },
        ],
      },
      Usage: {
        type: 'object',
        required: ['tenantId', 'requestsPerSecond', 'activeTasks'],
        properties: {
          tenantId: { type: 'string' },
          requestsPerSecond: {
            type: 'object',
            properties: {
              limit: { type: ['integer', 'null'] },
              current: { type: ['integer', 'null'], description: 'null while Redis is away' },
            },
          },
          activeTasks: {
            type: 'object',
            properties: { limit: { type: ['integer', 'null'] }, current: { type: 'integer' } },
          },
        },
      },
      AuditRecord: {
        type: 'object',
        required: [
          'tenantId',
          'seq',
          'recordId',
          'occurredAt',
          'operation',
          'binding',
          'outcome',
          'hashVersion',
          'prevHash',
          'hash',
        ],
        properties: {
          tenantId: { type: 'string' },
          seq: { type: 'integer' },
          recordId: { type: 'string', format: 'uuid' },
          occurredAt: { type: 'string', format: 'date-time' },
          principalId: { type: ['string', 'null'] },
          credentialId: { type: ['string', 'null'] },
          sourceAddress: { type: ['string', 'null'] },
          operation: { type: 'string' },
          binding: { enum: ['JSONRPC', 'HTTP+JSON', 'GRPC', 'ADMIN', 'WORKER'] },
          resource: { type: ['string', 'null'] },
          outcome: { enum: ['ok', 'denied', 'unauthenticated', 'failed'] },
          reason: { type: ['string', 'null'] },
          traceId: { type: ['string', 'null'] },
          hashVersion: {
            enum: [1, 2],
            description:
              'how hash is defined: 1 = SHA-256(prevHash ‖ RFC 8785 JSON of the fields with seq), ' +
              '2 = SHA-256(prevHash ‖ seq as 8-byte big-endian ‖ SHA-256(RFC 8785 JSON of the fields without seq))',
          },
          prevHash: { type: 'string' },
          hash: { type: 'string' },
        },
      },
      AuditPage: {
        type: 'object',
        required: ['records'],
        properties: {
          records: { type: 'array', items: ref('AuditRecord') },
          nextCursor: { type: 'string' },
        },
      },
      AuditVerification: {
        type: 'object',
        required: ['ok', 'records'],
        properties: {
          ok: { type: 'boolean' },
          records: { type: 'integer', description: 'records checked' },
          head: { type: 'object' },
          firstBroken: {
            type: 'object',
            properties: {
              seq: { type: 'integer' },
              recordId: { type: 'string' },
              problem: {
                enum: ['missing record', 'hash mismatch', 'broken link', 'head mismatch'],
              },
            },
          },
        },
      },
      PushDelivery: {
        type: 'object',
        required: [
          'deliveryId',
          'tenantId',
          'taskId',
          'configId',
          'generation',
          'state',
          'attempts',
          'nextAttemptAt',
          'lastStatus',
          'lastError',
          'createdAt',
          'finishedAt',
        ],
        properties: {
          deliveryId: {
            type: 'string',
            format: 'uuid',
            description: 'X-A2A-Delivery-Id: the same on every attempt and redrive',
          },
          tenantId: { type: 'string' },
          taskId: { type: 'string' },
          configId: { type: 'string' },
          generation: { type: 'integer', description: 'the event’s generation (X-A2A-Generation)' },
          state: { enum: [...DELIVERY_STATES] },
          attempts: { type: 'integer' },
          nextAttemptAt: {
            type: ['string', 'null'],
            format: 'date-time',
            description: 'when the next attempt is due (pending deliveries only)',
          },
          lastStatus: { type: ['integer', 'null'] },
          lastError: { type: ['string', 'null'] },
          createdAt: { type: 'string', format: 'date-time' },
          finishedAt: { type: ['string', 'null'], format: 'date-time' },
        },
      },
      PushDeliveryPage: {
        type: 'object',
        required: ['deliveries'],
        properties: {
          deliveries: { type: 'array', items: ref('PushDelivery') },
          nextCursor: { type: 'string' },
        },
      },
      IssuedAdminKey: {
        type: 'object',
        required: ['credential', 'secret'],
        properties: { credential: ref('AdminKey'), secret: { type: 'string' } },
      },
      WhoAmI: {
        type: 'object',
        required: ['principalId', 'credentialId', 'role', 'tenantId', 'permissions'],
        properties: {
          principalId: { type: 'string' },
          credentialId: { type: 'string' },
          role: { enum: ['platform-admin', 'tenant-admin'] },
          tenantId: {
            ...nullable('string'),
            description: 'a tenant admin’s tenant; null for platform admins',
          },
          permissions: {
            type: 'array',
            items: { enum: ['platform:admin', 'tenant:admin', 'authenticated'] },
            description: 'the x-permission values of the routes the credential may call',
          },
        },
      },
      ConnectedWorker: {
        type: 'object',
        required: [
          'sessionId',
          'tenantId',
          'agentId',
          'identity',
          'replicaId',
          'capacity',
          'inFlight',
          'leases',
          'connectedAt',
          'lastHeartbeatAt',
          'lastSeenAt',
          'stale',
        ],
        properties: {
          sessionId: {
            type: 'string',
            description: 'the worker id of the session (leases name it)',
          },
          tenantId: { type: 'string' },
          agentId: { type: 'string' },
          identity: { type: 'string', description: 'what the worker calls itself' },
          replicaId: { type: 'string', description: 'the task-service replica it is connected to' },
          capacity: { type: 'integer' },
          inFlight: {
            type: 'integer',
            description: 'leases its replica counts against its capacity',
          },
          leases: {
            type: 'array',
            items: {
              type: 'object',
              required: ['taskId', 'leaseEpoch', 'expiresAt'],
              properties: {
                taskId: { type: 'string' },
                leaseEpoch: { type: 'integer' },
                expiresAt: time,
              },
            },
          },
          connectedAt: time,
          lastHeartbeatAt: nullable('string', 'date-time'),
          lastSeenAt: { ...time, description: 'when its replica last wrote it' },
          stale: {
            type: 'boolean',
            description:
              'its replica missed three refreshes: probably gone (its rows are removed later)',
          },
        },
      },
      TaskSummary: {
        type: 'object',
        required: [
          'taskId',
          'contextId',
          'agentId',
          'ownerId',
          'state',
          'statusTimestamp',
          'version',
        ],
        properties: {
          taskId: { type: 'string' },
          contextId: { type: 'string' },
          agentId: { type: 'string' },
          ownerId: { type: 'string', description: 'the principal that created the task' },
          state: { enum: [...TASK_STATES] },
          statusTimestamp: time,
          version: { type: 'integer', description: 'the task’s generation (stream version)' },
        },
      },
      TaskPage: {
        type: 'object',
        required: ['tasks'],
        properties: {
          tasks: { type: 'array', items: ref('TaskSummary') },
          nextCursor: { type: 'string' },
        },
      },
      TaskDetail: {
        allOf: [
          ref('TaskSummary'),
          {
            type: 'object',
            required: ['tenantId', 'task', 'work'],
            properties: {
              tenantId: { type: 'string' },
              task: {
                type: 'object',
                description:
                  'the A2A Task (ProtoJSON): id, contextId, status, history, artifacts, metadata',
              },
              work: {
                description: 'its row in the work queue; null when it waits for nothing',
                oneOf: [
                  { type: 'null' },
                  {
                    type: 'object',
                    required: [
                      'status',
                      'attempt',
                      'queuedAt',
                      'leaseEpoch',
                      'workerId',
                      'leaseExpiresAt',
                      'cancelDeadline',
                    ],
                    properties: {
                      status: { enum: ['queued', 'leased'] },
                      attempt: { type: 'integer' },
                      queuedAt: time,
                      leaseEpoch: nullable('integer'),
                      workerId: nullable('string'),
                      leaseExpiresAt: nullable('string', 'date-time'),
                      cancelDeadline: nullable('string', 'date-time'),
                    },
                  },
                ],
              },
            },
          },
        ],
      },
      TimelineEntry: {
        type: 'object',
        required: [
          'generation',
          'eventId',
          'type',
          'schemaVersion',
          'recordedAt',
          'actor',
          'principalId',
          'binding',
          'traceId',
          'requestId',
          'summary',
        ],
        properties: {
          generation: { type: 'integer', description: 'the event’s stream version' },
          eventId: { type: 'string' },
          type: {
            type: 'string',
            description: 'the event type (libs/task-domain README catalogue)',
          },
          schemaVersion: { type: 'integer' },
          recordedAt: time,
          actor: {
            oneOf: [
              { type: 'null' },
              {
                type: 'object',
                required: ['kind', 'id'],
                properties: {
                  kind: { enum: ['caller', 'agent-worker', 'system'] },
                  id: {
                    type: 'string',
                    description: 'the principal, the worker session, or the task-service replica',
                  },
                },
              },
            ],
          },
          principalId: { ...nullable('string'), description: 'the caller’s principal' },
          binding: {
            ...nullable('string'),
            description: 'JSONRPC, HTTP+JSON, GRPC, worker, dispatcher or lease-sweeper',
          },
          traceId: nullable('string'),
          requestId: nullable('string'),
          summary: ref('EventSummary'),
        },
      },
      EventSummary: {
        type: 'object',
        description:
          'what the event says (never message or artifact content); absent fields do not apply',
        properties: {
          state: { enum: [...TASK_STATES] },
          messageId: { type: 'string' },
          role: { type: 'string' },
          parts: { type: 'integer' },
          artifactId: { type: 'string' },
          artifactName: { type: 'string' },
          append: { type: 'boolean' },
          lastChunk: { type: 'boolean' },
          leaseEpoch: { type: 'integer' },
          workerId: { type: 'string' },
          expiresAt: time,
          attempt: { type: 'integer' },
          reason: { type: 'string' },
          requestedBy: { type: 'string' },
          deadline: time,
          configId: { type: 'string' },
          origin: { type: 'string' },
        },
      },
      TimelinePage: {
        type: 'object',
        required: ['events'],
        properties: {
          events: { type: 'array', items: ref('TimelineEntry') },
          nextAfter: { type: 'integer', description: 'pass as `after` for the next page' },
        },
      },
      TaskChange: {
        type: 'object',
        required: [
          'taskId',
          'contextId',
          'agentId',
          'state',
          'version',
          'statusTimestamp',
          'updatedAt',
        ],
        properties: {
          taskId: { type: 'string' },
          contextId: { type: 'string' },
          agentId: { type: 'string' },
          state: { enum: [...TASK_STATES] },
          version: { type: 'integer' },
          statusTimestamp: time,
          updatedAt: {
            ...nullable('string', 'date-time'),
            description: 'when that version was recorded',
          },
        },
      },
    },
  },
} as const;

import {
  OpenApiGeneratorV31,
  OpenAPIRegistry,
  type ResponseConfig,
  type RouteConfig,
} from '@asteasolutions/zod-to-openapi';
import {
  agentDefinitionSchema,
  createTenantSchema,
  issueAdminKeySchema,
  issueApiKeySchema,
  issueWorkerCredentialSchema,
  updateTenantSchema,
} from '@lib/tenancy';
import { RequestMethod, type Type } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { ADMIN_ROUTE, type AdminRouteSpec } from './admin-route';
import { AgentsController } from './agents.controller';
import {
  adminKeyAnswer,
  agentAnswer,
  agentCardAnswer,
  apiKeyAnswer,
  auditPageAnswer,
  auditVerificationAnswer,
  connectedWorkerAnswer,
  errorAnswer,
  importedAgentAnswer,
  issuedAdminKeyAnswer,
  issuedApiKeyAnswer,
  issuedWorkerCredentialAnswer,
  issuerAnswer,
  issuerDefinitionBody,
  purgeAnswer,
  pushDeliveryPageAnswer,
  redrivenAnswer,
  taskChangeAnswer,
  taskDetailAnswer,
  taskPageAnswer,
  tenantAnswer,
  timelinePageAnswer,
  upstreamAnswer,
  usageAnswer,
  whoAmIAnswer,
  workerCredentialAnswer,
  type Json,
} from './answers.schema';
import { AuditController, auditQuery } from './audit.controller';
import {
  AdminKeysController,
  ApiKeysController,
  WorkerCredentialsController,
} from './credentials.controller';
import { IssuersController } from './issuers.controller';
import { z } from './openapi-zod';
import { deliveryQuery, PushDeliveriesController } from './push-deliveries.controller';
import type { StreamingAnswer } from './streaming-answer';
import {
  CHANGES_HEARTBEAT_MS,
  taskChangesQuery,
  taskEventsQuery,
  taskListQuery,
  TasksController,
} from './tasks.controller';
import { purgeConfirmationSchema, TenantsController } from './tenants.controller';
import { agentImportSchema } from './upstream-importer';
import { UpstreamsController } from './upstreams.controller';
import { WhoAmIController } from './whoami.controller';
import { workerQuery, WorkersController } from './workers.controller';

/** The refusals every route may answer, and those a route names besides. */
const ERRORS = {
  400: 'invalid input: nothing changed; `fields` names each bad field',
  401: 'missing, unknown, revoked or expired credential (`WWW-Authenticate: Bearer`)',
  403: 'the credential may not do this',
  404: 'no such tenant, agent, credential, delivery or task (also for another tenant’s)',
  409: 'the operation does not fit the current state',
} as const;
type ErrorStatus = Exclude<keyof typeof ERRORS, 401 | 403>;

/** What the document says of a route beyond what its controller declares (method, path, id, permission). */
interface RouteText {
  summary: string;
  /** The schema the route validates its JSON body with. */
  body?: z.ZodTypeAny;
  /** The body may be left out (its fields all have defaults). */
  optionalBody?: true;
  /** The schema the route reads its query parameters with. */
  query?: z.AnyZodObject;
  errors?: ErrorStatus[];
}

/**
 * What a route answers when it succeeds, by what its handler returns: nothing (each status with what it
 * means), a server-sent event stream, or JSON whose schema must describe the returned type.
 */
type Success<A> = [A] extends [void]
  ? { ok: Partial<Record<202 | 204, string>> }
  : [A] extends [StreamingAnswer]
    ? { events: z.ZodTypeAny; ok: { 200: string } }
    : {
        answer: z.ZodType<Json<A>, z.ZodTypeDef, unknown>;
        ok: Partial<Record<200 | 201 | 202, string>>;
      };

/** The public methods of a controller: its route handlers. */
type Handler<C> = {
  [K in keyof C]: C[K] extends (...args: never[]) => unknown ? K : never;
}[keyof C];
type Returned<C, K extends keyof C> = C[K] extends (...args: never[]) => infer R
  ? Awaited<R>
  : never;

/** The documentation of every handler of a controller: one missing does not compile. */
type ControllerDoc<C> = { [K in Handler<C>]: RouteText & Success<Returned<C, K>> };
/** Any route's documentation, as {@link routes} reads it. */
type RouteDoc = RouteText & {
  ok: Partial<Record<number, string>>;
  answer?: z.ZodTypeAny;
  events?: z.ZodTypeAny;
};

const METHODS: Partial<Record<RequestMethod, RouteConfig['method']>> = {
  [RequestMethod.GET]: 'get',
  [RequestMethod.POST]: 'post',
  [RequestMethod.PUT]: 'put',
  [RequestMethod.PATCH]: 'patch',
  [RequestMethod.DELETE]: 'delete',
};

const json = (schema: z.ZodTypeAny) => ({ content: { 'application/json': { schema } } });

/**
 * The routes of a controller as the document describes them: method, path, operation id and permission as
 * its decorators declare them (what Nest serves, the guard checks and the audit records); the path's
 * parameters from the path; body, query and answers from the zod schemas.
 */
function routes<C>(controller: Type<C>, docs: ControllerDoc<C>): RouteConfig[] {
  const base = String(Reflect.getMetadata(PATH_METADATA, controller));
  const entries = Object.entries(docs as Record<string, RouteDoc>);
  return entries.map(([name, doc]) => {
    const handler = (controller.prototype as Record<string, object>)[name];
    const spec = handler && (Reflect.getMetadata(ADMIN_ROUTE, handler) as AdminRouteSpec);
    const method =
      handler && METHODS[Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod];
    if (!spec || !method) {
      throw new Error(`${controller.name}.${name} is not an admin route`);
    }
    const sub = String(Reflect.getMetadata(PATH_METADATA, handler));
    const path = `/${base}/${sub}`
      .replace(/\/+/g, '/')
      .replace(/\/$/, '')
      .replace(/:(\w+)/g, '{$1}');
    const names = [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1] ?? '');
    const success = Object.fromEntries(
      Object.entries(doc.ok).flatMap(([status, description]): [string, ResponseConfig][] =>
        description === undefined
          ? []
          : [
              [
                status,
                doc.answer
                  ? { description, ...json(doc.answer) }
                  : doc.events
                    ? { description, content: { 'text/event-stream': { schema: doc.events } } }
                    : { description },
              ],
            ],
      ),
    );
    const statuses: (keyof typeof ERRORS)[] = [...(doc.errors ?? []), 401, 403];
    const refusals = Object.fromEntries(
      statuses
        .sort((a, b) => a - b)
        .map((status) => [status, { description: ERRORS[status], ...json(errorAnswer) }]),
    );
    return {
      method,
      path,
      operationId: spec.operation,
      summary: doc.summary,
      'x-permission': spec.permission,
      request: {
        ...(names.length > 0
          ? { params: z.object(Object.fromEntries(names.map((n) => [n, z.string()]))) }
          : {}),
        ...(doc.query ? { query: doc.query } : {}),
        ...(doc.body ? { body: { required: doc.optionalBody !== true, ...json(doc.body) } } : {}),
      },
      responses: { ...success, ...refusals },
    };
  });
}

const ROUTES: RouteConfig[] = [
  ...routes(TenantsController, {
    create: {
      summary: 'Create a tenant',
      body: createTenantSchema.openapi('TenantCreate'),
      ok: { 201: 'created' },
      answer: tenantAnswer,
      errors: [400, 409],
    },
    list: {
      summary: 'List tenants',
      ok: { 200: 'OK' },
      answer: z.object({ tenants: z.array(tenantAnswer) }),
    },
    get: { summary: 'Read a tenant', ok: { 200: 'OK' }, answer: tenantAnswer, errors: [404] },
    update: {
      summary: 'Change a tenant’s name or quotas',
      body: updateTenantSchema.openapi('TenantUpdate'),
      ok: { 200: 'OK' },
      answer: tenantAnswer,
      errors: [400, 404],
    },
    usage: {
      summary: 'What the tenant uses of its quotas now',
      ok: { 200: 'OK' },
      answer: usageAnswer,
      errors: [404],
    },
    suspend: {
      summary: 'Suspend a tenant (calls answer 403 / PERMISSION_DENIED)',
      ok: { 200: 'OK' },
      answer: tenantAnswer,
      errors: [404, 409],
    },
    resume: {
      summary: 'Resume a suspended or deleting tenant',
      ok: { 200: 'OK' },
      answer: tenantAnswer,
      errors: [404],
    },
    remove: {
      summary: 'Start deleting a tenant (its calls are refused until purged or resumed)',
      ok: { 202: 'marked deleting' },
      answer: tenantAnswer,
      errors: [404, 409],
    },
    purge: {
      summary: 'Remove everything a deleting tenant owns',
      body: purgeConfirmationSchema.openapi('PurgeConfirmation'),
      ok: { 200: 'OK' },
      answer: purgeAnswer,
      errors: [400, 404, 409],
    },
  }),
  ...routes(AgentsController, {
    put: {
      summary: 'Define an agent (card and worker policy); served within a second',
      // The card as the schema `AgentCard` of the answers: the same lib schema, named.
      body: agentDefinitionSchema.extend({ card: agentCardAnswer }).openapi('AgentDefinition'),
      ok: { 200: 'replaced', 201: 'created' },
      answer: agentAnswer,
      errors: [400, 404],
    },
    list: {
      summary: 'List a tenant’s agents',
      ok: { 200: 'OK' },
      answer: z.object({ agents: z.array(agentAnswer) }),
      errors: [404],
    },
    get: { summary: 'Read an agent', ok: { 200: 'OK' }, answer: agentAnswer, errors: [404] },
    remove: {
      summary: 'Remove an agent and its worker credentials',
      ok: { 204: 'removed' },
      errors: [404],
    },
  }),
  ...routes(UpstreamsController, {
    import: {
      summary: 'Import an existing A2A server as a hosted agent, from its card (docs/upstream.md)',
      body: agentImportSchema.openapi('AgentImport'),
      ok: { 200: 'imported again over the existing agent', 201: 'created' },
      answer: importedAgentAnswer,
      errors: [400, 404, 409],
    },
    sync: {
      summary: 'Read an imported agent’s card again; a change is a new version of its definition',
      ok: { 200: 'OK' },
      answer: importedAgentAnswer,
      errors: [400, 404, 409],
    },
    upstream: {
      summary: 'Where an imported agent forwards to (header names only, never their values)',
      ok: { 200: 'OK' },
      answer: upstreamAnswer,
      errors: [404],
    },
  }),
  ...routes(ApiKeysController, {
    issue: {
      summary: 'Issue an API key (the secret is in this answer only)',
      body: issueApiKeySchema.openapi('ApiKeyIssue'),
      ok: { 201: 'issued' },
      answer: issuedApiKeyAnswer,
      errors: [400, 404],
    },
    list: {
      summary: 'List a tenant’s API keys (no secrets)',
      ok: { 200: 'OK' },
      answer: z.object({ apiKeys: z.array(apiKeyAnswer) }),
      errors: [404],
    },
    revoke: {
      summary: 'Revoke an API key (every replica within a second)',
      ok: { 200: 'OK' },
      answer: apiKeyAnswer,
      errors: [404],
    },
  }),
  ...routes(WorkerCredentialsController, {
    issue: {
      summary: 'Issue a worker credential bound to the agent',
      body: issueWorkerCredentialSchema.openapi('WorkerCredentialIssue'),
      optionalBody: true,
      ok: { 201: 'issued' },
      answer: issuedWorkerCredentialAnswer,
      errors: [400, 404],
    },
    list: {
      summary: 'List the agent’s worker credentials',
      ok: { 200: 'OK' },
      answer: z.object({ workerCredentials: z.array(workerCredentialAnswer) }),
      errors: [404],
    },
    revoke: {
      summary: 'Revoke a worker credential',
      ok: { 200: 'OK' },
      answer: workerCredentialAnswer,
      errors: [404],
    },
  }),
  ...routes(IssuersController, {
    put: {
      summary: 'Trust an OIDC issuer’s bearer tokens (or change how)',
      body: issuerDefinitionBody,
      ok: { 200: 'replaced', 201: 'created' },
      answer: issuerAnswer,
      errors: [400, 404],
    },
    list: {
      summary: 'List the OIDC issuers the tenant trusts',
      ok: { 200: 'OK' },
      answer: z.object({ issuers: z.array(issuerAnswer) }),
      errors: [404],
    },
    remove: { summary: 'Stop trusting an issuer', ok: { 204: 'removed' }, errors: [404] },
  }),
  ...routes(AuditController, {
    query: {
      summary: 'Query the audit trail (newest first; `_platform`: the platform’s own)',
      query: auditQuery,
      ok: { 200: 'OK' },
      answer: auditPageAnswer,
      errors: [400, 404],
    },
    verify: {
      summary: 'Verify the hash chain; names the first broken record',
      ok: { 200: 'OK' },
      answer: auditVerificationAnswer,
      errors: [404],
    },
  }),
  ...routes(PushDeliveriesController, {
    list: {
      summary: 'List the tenant’s webhook deliveries (newest first)',
      query: deliveryQuery,
      ok: { 200: 'OK' },
      answer: pushDeliveryPageAnswer,
      errors: [400, 404],
    },
    redrive: {
      summary: 'Send a dead delivery again, from its first attempt (any other delivery: 404)',
      ok: { 200: 'OK' },
      answer: redrivenAnswer,
      errors: [404],
    },
  }),
  ...routes(WhoAmIController, {
    whoami: {
      summary: 'What the presented credential is and may do',
      ok: { 200: 'OK' },
      answer: whoAmIAnswer,
    },
  }),
  ...routes(WorkersController, {
    list: {
      summary:
        'The worker sessions connected to the task-service replicas (refreshed every few seconds)',
      query: workerQuery,
      ok: { 200: 'OK' },
      answer: z.object({ workers: z.array(connectedWorkerAnswer) }),
      errors: [400, 404],
    },
  }),
  ...routes(TasksController, {
    list: {
      summary: 'List the tenant’s tasks, every principal’s (newest status first)',
      query: taskListQuery,
      ok: { 200: 'OK' },
      answer: taskPageAnswer,
      errors: [400, 404],
    },
    changes: {
      summary: 'Live task changes (Server-Sent Events): one `task` event per change from now on',
      query: taskChangesQuery,
      ok: {
        200:
          'An endless `text/event-stream`: `event: task` with a TaskChange as `data` for each ' +
          'change of a matching task (each version once; a change whose notice was lost within a ' +
          `second), and a comment line every ${CHANGES_HEARTBEAT_MS / 1000} s. Open it before ` +
          'reading the list, so that no change falls in between.',
      },
      events: taskChangeAnswer,
      errors: [400, 404],
    },
    get: {
      summary:
        'Read a task as stored: status, history, artifacts, agent, owner, version and its work',
      ok: { 200: 'OK' },
      answer: taskDetailAnswer,
      errors: [404],
    },
    events: {
      summary: 'The task’s event timeline from the log, oldest first',
      query: taskEventsQuery,
      ok: { 200: 'OK' },
      answer: timelinePageAnswer,
      errors: [400, 404],
    },
  }),
  ...routes(AdminKeysController, {
    issue: {
      summary: 'Issue a platform admin key',
      body: issueAdminKeySchema.openapi('AdminKeyIssue'),
      ok: { 201: 'issued' },
      answer: issuedAdminKeyAnswer,
      errors: [400],
    },
    list: {
      summary: 'List admin keys (no secrets)',
      ok: { 200: 'OK' },
      answer: z.object({ adminKeys: z.array(adminKeyAnswer) }),
    },
    revoke: {
      summary: 'Revoke an admin key',
      ok: { 200: 'OK' },
      answer: adminKeyAnswer,
      errors: [404],
    },
  }),
];

function adminOpenApi() {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'bearer', { type: 'http', scheme: 'bearer' });
  ROUTES.forEach((route) => registry.registerPath(route));
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'A2A platform admin API',
      version: '1.0.0',
      description:
        'Operate the platform: tenants, their agents, API keys, worker credentials, OIDC issuers, the ' +
        'audit trail, webhook deliveries, connected workers and tasks (with their event timeline and a ' +
        'live stream of changes). Authenticate with `Authorization: Bearer <token>`: ' +
        'ADMIN_BOOTSTRAP_TOKEN or an admin key (platform admin), or a tenant API key with the scope ' +
        'tenant:admin (that tenant only).',
    },
    security: [{ bearer: [] }],
  });
}

/**
 * The admin API's OpenAPI 3.1 document, served at `/admin/v1/openapi.json` and checked in as
 * `docs/admin-api.openapi.json` (`npm run check:openapi`, part of `npm run check`, fails when that copy is
 * stale). Built from the controllers (paths, methods, `operationId` = the audit record's operation,
 * `x-permission` = the permission the guard checks) and the zod schemas of the bodies and queries they read
 * and of the answers they return; this file adds only what neither says: summaries, the statuses of success
 * and refusal with what each means, the security scheme.
 */
export const ADMIN_OPENAPI = adminOpenApi();

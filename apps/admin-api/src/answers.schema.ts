import { TASK_STATES } from '@lib/a2a-protocol';
import {
  AUDIT_BINDINGS,
  AUDIT_OUTCOMES,
  type AuditPage,
  type AuditRecord,
  type VerifyResult,
} from '@lib/audit';
import type { TenantId } from '@lib/ids';
import { DELIVERY_STATES, type DeliveryPage, type DeliveryRecord } from '@lib/push';
import {
  agentCardDefinitionSchema,
  DEFAULT_PRINCIPAL_CLAIM,
  DEFAULT_SCOPES_CLAIM,
  workerPolicySchema,
  type AdminKeyRecord,
  type AgentRecord,
  type ApiKeyRecord,
  type Issued,
  type IssuerRecord,
  type TenantRecord,
  type WorkerCredentialRecord,
} from '@lib/tenancy';
import { UPSTREAM_BINDINGS, type UpstreamSummary } from '@lib/upstream';
import type { ConnectedWorker } from '@lib/work-queue';
import type { AdminErrorBody } from './admin-errors.filter';
import { z } from './openapi-zod';
import type {
  TaskChange,
  TaskDetail,
  TaskPage,
  TaskSummary,
  TimelinePage,
} from './task-admin.store';
import type { EventSummary, TimelineEntry } from './task-timeline';
import type { UsageReport } from './tenant-usage';
import type { ImportedAgent } from './upstream-importer';
import type { WhoAmI } from './whoami.controller';

/** T as JSON carries it: branded ids as plain strings, times as text, nothing readonly. */
export type Json<T> = T extends Date
  ? string
  : T extends string
    ? Record<never, never> extends Omit<T, keyof string>
      ? T
      : string
    : T extends readonly (infer I)[]
      ? Json<I>[]
      : T extends object
        ? { -readonly [K in keyof T]: Json<T[K]> }
        : T;

type Same<A, B> =
  (<G>() => G extends A ? 1 : 2) extends <G>() => G extends B ? 1 : 2 ? true : false;

/**
 * The schema of an answer, which compiles only when it describes `T` exactly: every field, none more, each
 * with its type and whether it may be absent. The types the routes return stay the source; a field added to
 * one and not here (or the reverse) fails the typecheck, naming both types.
 */
const answers =
  <T>() =>
  <S extends z.ZodTypeAny>(
    schema: S &
      (Same<z.output<S>, Json<T>> extends true ? unknown : { differs: [z.output<S>, Json<T>] }),
  ): S =>
    schema;

const time = z.string().datetime({ offset: true });
const nextCursor = z
  .string()
  .optional()
  .openapi({ description: 'where the next page starts (same filters); absent on the last page' });

export const errorAnswer = answers<AdminErrorBody>()(
  z
    .object({
      error: z.object({
        code: z.number().int(),
        status: z.string(),
        message: z.string(),
        fields: z
          .array(z.object({ field: z.string(), description: z.string() }))
          .optional()
          .openapi({ description: 'each bad field of invalid input (400)' }),
      }),
    })
    .openapi('Error'),
);

export const tenantAnswer = answers<TenantRecord>()(
  z
    .object({
      tenantId: z.string(),
      displayName: z.string(),
      status: z.enum(['active', 'suspended', 'deleting']),
      quotas: z
        .object({
          requestsPerSecond: z.number().int().nullable(),
          maxActiveTasks: z.number().int().nullable(),
        })
        .openapi({ description: "the tenant's limits; null: the platform's default" }),
      createdAt: time,
      statusChangedAt: time.nullable(),
    })
    .openapi('Tenant'),
);

export const purgeAnswer = answers<{ tenantId: TenantId; deleted: Record<string, number> }>()(
  z.object({
    tenantId: z.string(),
    deleted: z.record(z.number().int()).openapi({ description: 'rows removed, per table' }),
  }),
);

export const agentCardAnswer = agentCardDefinitionSchema.openapi('AgentCard', {
  description:
    'The card fields the agent contributes (A2A AgentCard ProtoJSON names); the platform adds interfaces, ' +
    'provider, streaming and security. `a2ui`: the card declares the A2UI extension ' +
    '(https://a2ui.org/a2a-extension/a2ui/v0.9 and /v0.9.1) with the v0.9 basic catalog; docs/a2ui.md.',
});
const workerPolicy = workerPolicySchema.openapi('WorkerPolicy', {
  description: "how the agent's tasks are leased to its workers; null: the platform's default",
});

export const agentAnswer = answers<AgentRecord>()(
  z
    .object({
      tenantId: z.string(),
      agentId: z.string(),
      card: agentCardAnswer,
      policy: workerPolicy,
      imported: z
        .boolean()
        .openapi({ description: 'imported from an A2A server (its upstream: GET …/upstream)' }),
      createdAt: time,
      updatedAt: time,
    })
    .openapi('Agent'),
);

export const upstreamAnswer = answers<UpstreamSummary>()(
  z
    .object({
      cardUrl: z.string(),
      binding: z.enum(UPSTREAM_BINDINGS),
      endpoint: z.string(),
      streaming: z.boolean(),
      cardSigned: z.boolean(),
      cardVerified: z.boolean(),
      headerNames: z.array(z.string()),
      headersSetAt: time.nullable(),
      oauth2: z
        .object({ tokenUrl: z.string(), clientId: z.string(), scope: z.string().optional() })
        .nullable(),
      workerCredentialId: z.string(),
      version: z.number().int(),
      importedAt: time,
      syncedAt: time,
    })
    .openapi('Upstream', {
      description: 'where an imported agent forwards to: header names only, never a secret',
    }),
);

export const importedAgentAnswer = answers<ImportedAgent>()(
  z
    .object({
      agent: agentAnswer,
      upstream: upstreamAnswer,
      changed: z.boolean(),
      created: z.boolean(),
      warnings: z
        .array(z.object({ code: z.enum(['EXTENDED_CARD_NOT_READ']), message: z.string() }))
        .openapi({
          description:
            'What the import or sync could not do although the agent is imported: an extended card the ' +
            'upstream declares that could not be read (the agent is served without it, or with the one ' +
            'read before); each is also audited as a failed admin.agent.extended-card.',
        }),
    })
    .openapi('ImportedAgent'),
);

export const apiKeyAnswer = answers<ApiKeyRecord>()(
  z
    .object({
      keyId: z.string(),
      tenantId: z.string(),
      principalId: z.string(),
      scopes: z.array(z.string()),
      label: z.string(),
      prefix: z.string(),
      createdAt: time,
      expiresAt: time.nullable(),
      revokedAt: time.nullable(),
    })
    .openapi('ApiKey'),
);

export const workerCredentialAnswer = answers<WorkerCredentialRecord>()(
  z
    .object({
      credentialId: z.string(),
      tenantId: z.string(),
      agentId: z.string(),
      label: z.string(),
      prefix: z.string(),
      createdAt: time,
      revokedAt: time.nullable(),
    })
    .openapi('WorkerCredential'),
);

export const adminKeyAnswer = answers<AdminKeyRecord>()(
  z
    .object({
      keyId: z.string(),
      principalId: z.string(),
      label: z.string(),
      prefix: z.string(),
      createdAt: time,
      expiresAt: time.nullable(),
      revokedAt: time.nullable(),
    })
    .openapi('AdminKey'),
);

/** A credential as issued: its secret is in this answer only. */
const issued = <S extends z.ZodTypeAny>(credential: S) =>
  z.object({
    credential,
    secret: z.string().openapi({ description: 'in this answer only (stored as a hash)' }),
  });
export const issuedApiKeyAnswer = answers<Issued<ApiKeyRecord>>()(
  issued(apiKeyAnswer).openapi('IssuedApiKey'),
);
export const issuedWorkerCredentialAnswer = answers<Issued<WorkerCredentialRecord>>()(
  issued(workerCredentialAnswer).openapi('IssuedWorkerCredential'),
);
export const issuedAdminKeyAnswer = answers<Issued<AdminKeyRecord>>()(
  issued(adminKeyAnswer).openapi('IssuedAdminKey'),
);

const issuerFields = {
  issuer: z.string().openapi({ description: 'the exact iss of its tokens' }),
  audience: z.string().openapi({ description: 'the aud its tokens must carry' }),
  jwksUrl: z.string(),
  principalClaim: z.string(),
  scopesClaim: z.string(),
  scopeMap: z.record(z.array(z.string())).openapi({
    description: 'external scope → platform scopes (unmapped scopes grant nothing)',
  }),
};
export const issuerAnswer = answers<IssuerRecord>()(
  z
    .object({ tenantId: z.string(), issuerId: z.string(), ...issuerFields, createdAt: time })
    .openapi('OidcIssuer'),
);

/**
 * The body of an issuer's PUT. The admin API checks it with `validateOidcIssuer` (@lib/tenancy), which is
 * not a zod schema (its checks depend on the platform's settings, and each names the field it refuses); so
 * its fields are the answer's (their names and types follow `OidcIssuer`), its defaults the library's, and the
 * checks it makes are in the description. `openapi.unit.spec.ts` holds the two together: the same fields,
 * the same required ones, the same defaults.
 */
export const issuerDefinitionBody = z
  .object({
    ...issuerFields,
    issuer: issuerFields.issuer.openapi({ format: 'uri' }),
    jwksUrl: issuerFields.jwksUrl.openapi({ format: 'uri' }),
    principalClaim: issuerFields.principalClaim.default(DEFAULT_PRINCIPAL_CLAIM),
    scopesClaim: issuerFields.scopesClaim.default(DEFAULT_SCOPES_CLAIM),
    scopeMap: issuerFields.scopeMap.default({}),
  })
  .strict()
  .openapi('OidcIssuerDefinition', {
    description:
      'issuer and jwksUrl are https URLs (http only for loopback hosts where the platform allows it); an ' +
      'invalid definition is answered with every wrong field.',
  });

export const usageAnswer = answers<UsageReport>()(
  z
    .object({
      tenantId: z.string(),
      requestsPerSecond: z.object({
        limit: z.number().int().nullable(),
        current: z.number().int().nullable().openapi({ description: 'null while Redis is away' }),
      }),
      activeTasks: z.object({ limit: z.number().int().nullable(), current: z.number().int() }),
    })
    .openapi('Usage'),
);

const auditRecord = answers<AuditRecord>()(
  z
    .object({
      tenantId: z.string(),
      seq: z.number().int(),
      recordId: z.string().uuid(),
      occurredAt: time,
      principalId: z.string().nullable(),
      credentialId: z.string().nullable(),
      sourceAddress: z.string().nullable(),
      operation: z.string(),
      binding: z.enum(AUDIT_BINDINGS),
      resource: z.string().nullable(),
      outcome: z.enum(AUDIT_OUTCOMES),
      reason: z.string().nullable(),
      traceId: z.string().nullable(),
      hashVersion: z.union([z.literal(1), z.literal(2)]).openapi({
        description:
          'how hash is defined: 1 = SHA-256(prevHash ‖ RFC 8785 JSON of the fields with seq), ' +
          '2 = SHA-256(prevHash ‖ seq as 8-byte big-endian ‖ SHA-256(RFC 8785 JSON of the fields without seq))',
      }),
      prevHash: z.string(),
      hash: z.string(),
    })
    .openapi('AuditRecord'),
);
export const auditPageAnswer = answers<AuditPage>()(
  z.object({ records: z.array(auditRecord), nextCursor }).openapi('AuditPage'),
);

export const auditVerificationAnswer = answers<VerifyResult>()(
  z
    .discriminatedUnion('ok', [
      z.object({
        ok: z.literal(true),
        records: z.number().int().openapi({ description: 'records checked' }),
        head: z.object({ seq: z.number().int(), hash: z.string() }),
      }),
      z.object({
        ok: z.literal(false),
        records: z.number().int().openapi({ description: 'intact records before the break' }),
        firstBroken: z.object({
          seq: z.number().int(),
          recordId: z.string().optional(),
          problem: z.enum(['missing record', 'hash mismatch', 'broken link', 'head mismatch']),
        }),
      }),
    ])
    .openapi('AuditVerification'),
);

const pushDelivery = answers<DeliveryRecord>()(
  z
    .object({
      deliveryId: z
        .string()
        .uuid()
        .openapi({ description: 'X-A2A-Delivery-Id: the same on every attempt and redrive' }),
      tenantId: z.string(),
      taskId: z.string(),
      configId: z.string(),
      generation: z
        .number()
        .int()
        .openapi({ description: 'the event’s generation (X-A2A-Generation)' }),
      state: z.enum(DELIVERY_STATES),
      attempts: z.number().int(),
      nextAttemptAt: time
        .nullable()
        .openapi({ description: 'when the next attempt is due (pending deliveries only)' }),
      lastStatus: z.number().int().nullable(),
      lastError: z.string().nullable(),
      createdAt: time,
      finishedAt: time.nullable(),
    })
    .openapi('PushDelivery'),
);
export const pushDeliveryPageAnswer = answers<DeliveryPage>()(
  z.object({ deliveries: z.array(pushDelivery), nextCursor }).openapi('PushDeliveryPage'),
);
export const redrivenAnswer = z.object({ delivery: pushDelivery });

export const whoAmIAnswer = answers<WhoAmI>()(
  z
    .object({
      principalId: z.string(),
      credentialId: z.string(),
      role: z.enum(['platform-admin', 'tenant-admin']),
      tenantId: z
        .string()
        .nullable()
        .openapi({ description: 'a tenant admin’s tenant; null for platform admins' }),
      permissions: z
        .array(z.enum(['platform:admin', 'tenant:admin', 'authenticated']))
        .openapi({ description: 'the x-permission values of the routes the credential may call' }),
    })
    .openapi('WhoAmI'),
);

export const connectedWorkerAnswer = answers<ConnectedWorker>()(
  z
    .object({
      sessionId: z
        .string()
        .openapi({ description: 'the worker id of the session (leases name it)' }),
      tenantId: z.string(),
      agentId: z.string(),
      identity: z.string().openapi({ description: 'what the worker calls itself' }),
      replicaId: z.string().openapi({ description: 'the task-service replica it is connected to' }),
      capacity: z.number().int(),
      inFlight: z
        .number()
        .int()
        .openapi({ description: 'leases its replica counts against its capacity' }),
      leases: z.array(
        z.object({ taskId: z.string(), leaseEpoch: z.number().int(), expiresAt: time }),
      ),
      connectedAt: time,
      lastHeartbeatAt: time.nullable(),
      lastSeenAt: time.openapi({ description: 'when its replica last wrote it' }),
      stale: z.boolean().openapi({
        description:
          'its replica missed three refreshes: probably gone (its rows are removed later)',
      }),
    })
    .openapi('ConnectedWorker'),
);

const taskSummaryObject = z
  .object({
    taskId: z.string(),
    contextId: z.string(),
    agentId: z.string(),
    ownerId: z.string().openapi({ description: 'the principal that created the task' }),
    state: z.enum(TASK_STATES),
    statusTimestamp: time,
    version: z.number().int().openapi({ description: 'the task’s generation (stream version)' }),
  })
  .openapi('TaskSummary');
const taskSummary = answers<TaskSummary>()(taskSummaryObject);
export const taskPageAnswer = answers<TaskPage>()(
  z.object({ tasks: z.array(taskSummary), nextCursor }).openapi('TaskPage'),
);

/** The store types the A2A task `unknown`; the answer is its ProtoJSON object. */
export const taskDetailAnswer = answers<TaskDetail & { task: Record<string, unknown> }>()(
  taskSummaryObject
    .extend({
      tenantId: z.string(),
      task: z.record(z.unknown()).openapi({
        description:
          'the A2A Task (ProtoJSON): id, contextId, status, history, artifacts, metadata',
      }),
      work: z
        .object({
          status: z.enum(['queued', 'leased']),
          attempt: z.number().int(),
          queuedAt: time,
          leaseEpoch: z.number().int().nullable(),
          workerId: z.string().nullable(),
          leaseExpiresAt: time.nullable(),
          cancelDeadline: time.nullable(),
        })
        .nullable()
        .openapi({ description: 'its row in the work queue; null when it waits for nothing' }),
    })
    .openapi('TaskDetail'),
);

const eventSummary = answers<EventSummary>()(
  z
    .object({
      state: z.enum(TASK_STATES).optional(),
      messageId: z.string().optional(),
      role: z.string().optional(),
      parts: z.number().int().optional(),
      artifactId: z.string().optional(),
      artifactName: z.string().optional(),
      append: z.boolean().optional(),
      lastChunk: z.boolean().optional(),
      leaseEpoch: z.number().int().optional(),
      workerId: z.string().optional(),
      expiresAt: time.optional(),
      attempt: z.number().int().optional(),
      reason: z.string().optional(),
      requestedBy: z.string().optional(),
      deadline: time.optional(),
      configId: z.string().optional(),
      origin: z.string().optional(),
    })
    .openapi('EventSummary', {
      description:
        'what the event says (never message or artifact content); absent fields do not apply',
    }),
);

const timelineEntry = answers<TimelineEntry>()(
  z
    .object({
      generation: z.number().int().openapi({ description: 'the event’s stream version' }),
      eventId: z.string(),
      type: z
        .string()
        .openapi({ description: 'the event type (libs/task-domain README catalogue)' }),
      schemaVersion: z.number().int(),
      recordedAt: time,
      actor: z
        .object({
          kind: z.string().openapi({ description: 'caller, agent-worker or system' }),
          id: z.string().openapi({
            description: 'the principal, the worker session, or the task-service replica',
          }),
        })
        .nullable(),
      principalId: z.string().nullable().openapi({ description: 'the caller’s principal' }),
      binding: z.string().nullable().openapi({
        description: 'JSONRPC, HTTP+JSON, GRPC, worker, dispatcher or lease-sweeper',
      }),
      traceId: z.string().nullable(),
      requestId: z.string().nullable(),
      summary: eventSummary,
    })
    .openapi('TimelineEntry'),
);
export const timelinePageAnswer = answers<TimelinePage>()(
  z
    .object({
      events: z.array(timelineEntry),
      nextAfter: z
        .number()
        .int()
        .optional()
        .openapi({ description: 'pass as `after` for the next page; absent on the last one' }),
    })
    .openapi('TimelinePage'),
);

export const taskChangeAnswer = answers<TaskChange>()(
  z
    .object({
      taskId: z.string(),
      contextId: z.string(),
      agentId: z.string(),
      state: z.enum(TASK_STATES),
      version: z.number().int(),
      statusTimestamp: time,
      updatedAt: time.nullable().openapi({ description: 'when that version was recorded' }),
    })
    .openapi('TaskChange'),
);

/** The admin API's resources as `docs/admin-api.openapi.json` describes them (the fields the console shows). */

export type TenantStatus = 'active' | 'suspended' | 'deleting';

export interface Quotas {
  requestsPerSecond?: number | null;
  maxActiveTasks?: number | null;
}

export interface Tenant {
  tenantId: string;
  displayName: string;
  status: TenantStatus;
  quotas: Quotas;
  createdAt: string;
  statusChangedAt: string | null;
}

export interface Usage {
  tenantId: string;
  requestsPerSecond: { limit?: number | null; current?: number | null };
  activeTasks: { limit?: number | null; current?: number };
}

export interface Skill {
  id?: string;
  name?: string;
  description?: string;
  tags?: string[];
}

export interface AgentCard {
  name: string;
  description: string;
  version: string;
  defaultInputModes?: string[];
  defaultOutputModes?: string[];
  skills?: Skill[];
  pushNotifications?: boolean;
  [field: string]: unknown;
}

export interface WorkerPolicy {
  onLeaseLost?: 'redispatch' | 'fail';
  maxAttempts?: number;
  leaseTtlMs?: number | null;
  maxConcurrency?: number | null;
}

export interface Agent {
  tenantId: string;
  agentId: string;
  card: AgentCard;
  policy: WorkerPolicy;
  /** Imported from an A2A server: served by the bridge (docs/upstream.md). */
  imported: boolean;
  createdAt: string;
  updatedAt: string;
}

/** Where an imported agent forwards to; header values are never answered. */
export interface Upstream {
  cardUrl: string;
  binding: string;
  endpoint: string;
  streaming: boolean;
  cardSigned: boolean;
  cardVerified: boolean;
  headerNames: string[];
  headersSetAt: string | null;
  version: number;
  importedAt: string;
  syncedAt: string;
}

/** The answer of an import or a sync. */
export interface ImportedAgent {
  agent: Agent;
  upstream: Upstream;
  changed: boolean;
  created: boolean;
}

export interface AgentDefinition {
  card: AgentCard;
  policy: WorkerPolicy;
}

export const API_KEY_SCOPES = [
  'a2a:message:send',
  'a2a:tasks:read',
  'a2a:tasks:read-all',
  'a2a:tasks:cancel',
  'a2a:push-config',
  'tenant:admin',
] as const;

export interface ApiKey {
  keyId: string;
  tenantId: string;
  principalId: string;
  scopes: string[];
  label: string;
  prefix: string;
  createdAt: string;
  expiresAt?: string | null;
  revokedAt?: string | null;
}

export interface WorkerCredential {
  credentialId: string;
  tenantId: string;
  agentId: string;
  label: string;
  prefix: string;
  createdAt: string;
  revokedAt?: string | null;
}

export interface AdminKey {
  keyId: string;
  principalId: string;
  label: string;
  prefix: string;
  createdAt: string;
  expiresAt?: string | null;
  revokedAt?: string | null;
}

/** What an issuing call answers: the stored credential and its secret, which is never shown again. */
export interface Issued<T> {
  credential: T;
  secret: string;
}

export interface OidcIssuer {
  tenantId: string;
  issuerId: string;
  issuer: string;
  audience: string;
  jwksUrl: string;
  principalClaim?: string;
  scopesClaim?: string;
  scopeMap?: Record<string, string[]>;
  createdAt: string;
}

export const DELIVERY_STATES = ['pending', 'sending', 'delivered', 'dead'] as const;

export interface PushDelivery {
  deliveryId: string;
  tenantId: string;
  taskId: string;
  configId: string;
  generation: number;
  state: (typeof DELIVERY_STATES)[number];
  attempts: number;
  nextAttemptAt: string | null;
  lastStatus: number | null;
  lastError: string | null;
  createdAt: string;
  finishedAt: string | null;
}

export interface PushDeliveryPage {
  deliveries: PushDelivery[];
  nextCursor?: string;
}

export const AUDIT_OUTCOMES = ['ok', 'denied', 'unauthenticated', 'failed'] as const;

export interface AuditRecord {
  tenantId: string;
  seq: number;
  recordId: string;
  occurredAt: string;
  principalId?: string | null;
  credentialId?: string | null;
  sourceAddress?: string | null;
  operation: string;
  binding: string;
  resource?: string | null;
  outcome: (typeof AUDIT_OUTCOMES)[number];
  reason?: string | null;
  traceId?: string | null;
}

export interface AuditPage {
  records: AuditRecord[];
  nextCursor?: string;
}

export interface AuditVerification {
  ok: boolean;
  records: number;
  head?: Record<string, unknown>;
  firstBroken?: { seq?: number; recordId?: string; problem?: string };
}

/** A task in the operators' list (`GET …/tasks`, and each change of `…/tasks/changes`). */
export interface TaskSummary {
  taskId: string;
  contextId: string;
  agentId: string;
  ownerId: string;
  state: string;
  statusTimestamp: string | null;
  version: number | null;
}

export const TASK_STATES = [
  'TASK_STATE_SUBMITTED',
  'TASK_STATE_WORKING',
  'TASK_STATE_INPUT_REQUIRED',
  'TASK_STATE_AUTH_REQUIRED',
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_REJECTED',
] as const;

declare const BRAND: unique symbol;

/** A string the compiler tells apart from other strings: only the parse functions below make one. */
type Branded<B extends string> = string & { readonly [BRAND]: B };

/** A platform tenant (an organisation). Every row, event, record, job and cache key carries one. */
export type TenantId = Branded<'TenantId'>;
/** A hosted agent, unique within its tenant. */
export type AgentId = Branded<'AgentId'>;
/** A task, unique within its tenant. */
export type TaskId = Branded<'TaskId'>;
/** Who made a call: an API key's principal, an OIDC subject, or the anonymous principal. */
export type PrincipalId = Branded<'PrincipalId'>;
/** The credential that authenticated a call (an API key id, a worker credential id, an issuer). */
export type CredentialId = Branded<'CredentialId'>;

/**
 * The form of tenant and agent ids: no `/` (they meet in the `<tenant>/<agent>` routing value, spec digest
 * §10.9), no white space or control characters, 1 to 128 characters.
 */
// eslint-disable-next-line no-control-regex -- the control characters are what the class excludes
export const ID_PATTERN = /^[^/\s\u0000-\u001f\u007f]{1,128}$/;

/** Whether `value` can be a tenant or agent id. */
export function isId(value: string): boolean {
  return ID_PATTERN.test(value);
}

/**
 * The id as a TenantId. Only values that came from a trusted place (the database, an authenticated route,
 * a validated admin request) are given to it; it checks the form, not existence.
 */
export function tenantIdOf(value: string): TenantId {
  return checked(value, 'tenant') as TenantId;
}

/** The id as an AgentId (see {@link tenantIdOf}). */
export function agentIdOf(value: string): AgentId {
  return checked(value, 'agent') as AgentId;
}

/** A task id as stored and shown (a UUID the platform made, or a client's id of an existing task). */
export function taskIdOf(value: string): TaskId {
  return value as TaskId;
}

/** A principal id as authentication established it. */
export function principalIdOf(value: string): PrincipalId {
  return value as PrincipalId;
}

/** A credential id as stored. */
export function credentialIdOf(value: string): CredentialId {
  return value as CredentialId;
}

function checked(value: string, what: string): string {
  if (!ID_PATTERN.test(value)) {
    throw new TypeError(`not a ${what} id: ${JSON.stringify(value.slice(0, 140))}`);
  }
  return value;
}

/** A hosted agent: the pair every agent-scoped port takes, instead of two positional strings. */
export interface AgentRef {
  readonly tenantId: TenantId;
  readonly agentId: AgentId;
}

/** A task: the pair every task-scoped port takes, instead of two positional strings. */
export interface TaskRef {
  readonly tenantId: TenantId;
  readonly taskId: TaskId;
}

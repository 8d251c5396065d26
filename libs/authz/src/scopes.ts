/**
 * The scopes a tenant's credential can grant (API keys and OIDC tokens alike, after the issuer's scope
 * mapping). A registry: names are never renamed, only added.
 */
export const TENANT_SCOPES = [
  /** SendMessage and SendStreamingMessage: start tasks and continue the principal's own. */
  'a2a:message:send',
  /** GetTask, ListTasks and SubscribeToTask on the principal's own tasks. */
  'a2a:tasks:read',
  /** GetTask, ListTasks and SubscribeToTask on every task of the tenant's agent, whoever started it. */
  'a2a:tasks:read-all',
  /** CancelTask on the principal's own tasks. */
  'a2a:tasks:cancel',
  /** The four push-notification config operations on the principal's own tasks. */
  'a2a:push-config',
  /** The admin API within the credential's tenant: agents, keys, worker credentials, issuers, audit. */
  'tenant:admin',
] as const;

/** Every scope: a tenant's, and `platform:admin` (the whole admin API), which only admin keys carry. */
export const SCOPES = [...TENANT_SCOPES, 'platform:admin'] as const;

export type Scope = (typeof SCOPES)[number];
export type TenantScope = (typeof TENANT_SCOPES)[number];

/** What a client key gets when its issuer names no scopes: everything a client does with its own tasks. */
export const CLIENT_SCOPES: readonly TenantScope[] = [
  'a2a:message:send',
  'a2a:tasks:read',
  'a2a:tasks:cancel',
  'a2a:push-config',
];

export function isTenantScope(value: string): value is TenantScope {
  return (TENANT_SCOPES as readonly string[]).includes(value);
}

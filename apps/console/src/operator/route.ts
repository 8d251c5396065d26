/** The pages of one tenant, in the order of its navigation. */
export const TENANT_SECTIONS = [
  ['overview', 'Overview and usage'],
  ['tasks', 'Tasks'],
  ['workers', 'Workers'],
  ['agents', 'Agents'],
  ['api-keys', 'API keys'],
  ['oidc-issuers', 'OIDC issuers'],
  ['deliveries', 'Webhook deliveries'],
  ['audit', 'Audit log'],
] as const;

export type TenantSection = (typeof TENANT_SECTIONS)[number][0];

/**
 * Where the operator is: `#/tenants`, `#/admin-keys`, `#/tenants/<t>[/<section>[/<item>]]`, the item being an
 * agent, a task, or the task whose webhook deliveries are shown.
 */
export type Route =
  | { page: 'tenants' }
  | { page: 'admin-keys' }
  | { page: 'tenant'; tenantId: string; section: TenantSection; itemId?: string }
  | { page: 'not-found' };

const isSection = (value: string): value is TenantSection =>
  TENANT_SECTIONS.some(([section]) => section === value);

export function parseRoute(hash: string): Route {
  const parts = hash
    .replace(/^#\/?/, '')
    .split('/')
    .filter((part) => part !== '')
    .map((part) => {
      try {
        return decodeURIComponent(part);
      } catch {
        return part;
      }
    });
  const [first, tenantId, section = 'overview', itemId, ...rest] = parts;
  if (first === undefined || (first === 'tenants' && tenantId === undefined)) {
    return { page: 'tenants' };
  }
  if (first === 'admin-keys' && parts.length === 1) {
    return { page: 'admin-keys' };
  }
  if (first !== 'tenants' || tenantId === undefined || !isSection(section) || rest.length > 0) {
    return { page: 'not-found' };
  }
  if (itemId !== undefined) {
    return section === 'agents' || section === 'tasks' || section === 'deliveries'
      ? { page: 'tenant', tenantId, section, itemId }
      : { page: 'not-found' };
  }
  return { page: 'tenant', tenantId, section };
}

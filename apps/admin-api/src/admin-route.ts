import { SetMetadata } from '@nestjs/common';

/**
 * Who may call a route: `platform:admin` (operators of the whole platform), `tenant:admin` (those, and
 * a tenant's own admin keys for routes under `/admin/v1/tenants/{tenantId}`), or `authenticated` (any
 * credential the admin API accepts, for what concerns the credential itself: `whoami`).
 */
export type AdminPermission = 'platform:admin' | 'tenant:admin' | 'authenticated';

/** What each kind of admin credential may do: the permissions a route may ask for that it holds. */
export const PLATFORM_ADMIN_PERMISSIONS: readonly AdminPermission[] = [
  'platform:admin',
  'tenant:admin',
  'authenticated',
];
export const TENANT_ADMIN_PERMISSIONS: readonly AdminPermission[] = [
  'tenant:admin',
  'authenticated',
];

/** What the guard and the audit read off a route. */
export interface AdminRouteSpec {
  /** The audit record's operation, e.g. `admin.tenant.create`. */
  operation: string;
  permission: AdminPermission;
}

export const ADMIN_ROUTE = 'a2a:admin-route';

/**
 * Declares a route's operation and permission. Every handler of the admin API carries one: the guard
 * refuses a route without it, and a unit test lists the routes that lack it.
 */
export const AdminRoute = (operation: string, permission: AdminPermission): MethodDecorator =>
  SetMetadata(ADMIN_ROUTE, { operation, permission } satisfies AdminRouteSpec);

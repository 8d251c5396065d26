import type { CredentialId, PrincipalId, TenantId } from '@lib/ids';
import { Controller, Get, Req, UseFilters, UseGuards, UseInterceptors } from '@nestjs/common';
import { AdminAuditInterceptor } from './admin-audit.interceptor';
import { AdminErrorsFilter } from './admin-errors.filter';
import {
  AdminRoute,
  PLATFORM_ADMIN_PERMISSIONS,
  TENANT_ADMIN_PERMISSIONS,
  type AdminPermission,
} from './admin-route';
import { AdminForbidden, AdminGuard, type AdminRequest } from './admin.guard';

/** What the presented credential is, for a client (the web console) to know which face to show. */
export interface WhoAmI {
  principalId: PrincipalId;
  credentialId: CredentialId;
  /** `platform-admin`: the bootstrap token or an admin key; `tenant-admin`: a key with `tenant:admin`. */
  role: 'platform-admin' | 'tenant-admin';
  /** The tenant a tenant admin may manage; null for platform admins. */
  tenantId: TenantId | null;
  /** The route permissions (`x-permission` in the OpenAPI document) the credential holds. */
  permissions: AdminPermission[];
}

/** The credential a call presents. */
@Controller('admin/v1/whoami')
@UseGuards(AdminGuard)
@UseFilters(AdminErrorsFilter)
@UseInterceptors(AdminAuditInterceptor)
export class WhoAmIController {
  @Get()
  @AdminRoute('admin.whoami', 'authenticated')
  whoami(@Req() req: AdminRequest): WhoAmI {
    const principal = req.adminCall?.principal;
    if (!principal) {
      throw new AdminForbidden('the call was not authenticated');
    }
    const tenantAdmin = principal.tenantId !== null;
    return {
      principalId: principal.principalId,
      credentialId: principal.credentialId,
      role: tenantAdmin ? 'tenant-admin' : 'platform-admin',
      tenantId: principal.tenantId,
      permissions: [...(tenantAdmin ? TENANT_ADMIN_PERMISSIONS : PLATFORM_ADMIN_PERMISSIONS)],
    };
  }
}

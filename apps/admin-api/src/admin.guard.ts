import { NotFound } from '@lib/tenancy';
import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { AdminAudit } from './admin-audit';
import { AdminAuthenticator, AdminUnauthenticated, type AdminPrincipal } from './admin-auth';
import { ADMIN_ROUTE, type AdminRouteSpec } from './admin-route';

/** A call whose credential may not do what the route does: 403. */
export class AdminForbidden extends Error {
  override readonly name = 'AdminForbidden';
}

/** An authenticated admin call, as the guard leaves it on the request for the handlers and the audit. */
export interface AdminCall {
  principal: AdminPrincipal;
  spec: AdminRouteSpec;
}

export type AdminRequest = Request & { adminCall?: AdminCall };

/**
 * Authenticates every admin route and checks its permission before the handler reads anything: a route
 * without a declared permission is refused; a tenant admin may only call `tenant:admin` routes of its own
 * tenant (and `authenticated` ones, which concern the credential itself), and another tenant answers 404
 * as if it did not exist.
 */
@Injectable()
export class AdminGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly auth: AdminAuthenticator,
    private readonly audit: AdminAudit,
  ) {}

  /** Every refusal is an audit record: `unauthenticated` or `denied`. */
  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<AdminRequest>();
    const spec = this.reflector.get<AdminRouteSpec | undefined>(ADMIN_ROUTE, context.getHandler());
    const operation = spec?.operation ?? 'admin.unknown';
    try {
      return await this.check(req, spec);
    } catch (error) {
      await this.audit.record(
        req,
        operation,
        error instanceof AdminUnauthenticated ? 'unauthenticated' : 'denied',
        error instanceof AdminUnauthenticated ? 'UNAUTHENTICATED' : 'PERMISSION_DENIED',
      );
      throw error;
    }
  }

  private async check(req: AdminRequest, spec: AdminRouteSpec | undefined): Promise<boolean> {
    if (!spec) {
      throw new AdminForbidden('this route declares no permission');
    }
    const principal = await this.auth.authenticate(req.header('authorization'));
    req.adminCall = { principal, spec };
    if (principal.tenantId === null || spec.permission === 'authenticated') {
      return true;
    }
    if (spec.permission === 'platform:admin') {
      throw new AdminForbidden(`${spec.operation} needs a platform admin credential`);
    }
    const tenant = String(req.params['tenantId'] ?? '');
    if (tenant !== principal.tenantId) {
      throw new NotFound(`no tenant ${tenant}`);
    }
    return true;
  }
}

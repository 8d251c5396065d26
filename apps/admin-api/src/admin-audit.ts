import {
  AuditWriter,
  PLATFORM_TENANT,
  traceIdOf,
  type AuditEntry,
  type AuditOutcome,
} from '@lib/audit';
import { NEW_TENANT_ID } from '@lib/tenancy';
import { Injectable, Logger } from '@nestjs/common';
import type { AdminRequest } from './admin.guard';

/** The admin API's audit records: every call, denied and failed ones included. */
@Injectable()
export class AdminAudit {
  private readonly logger = new Logger(AdminAudit.name);

  constructor(private readonly writer: AuditWriter) {}

  /**
   * Records one admin call. The record goes to the chain of the tenant the path names (or of the tenant a
   * new one is created as), else to the platform's own chain. Durable before the answer is sent; a record
   * that cannot be written is logged (the action itself has happened or failed already).
   */
  async record(
    req: AdminRequest,
    operation: string,
    outcome: AuditOutcome,
    reason: string | null,
  ): Promise<void> {
    const tenant = tenantOf(req);
    const principal = req.adminCall?.principal;
    const entry: AuditEntry = {
      tenantId: tenant ?? PLATFORM_TENANT,
      principalId: principal?.principalId ?? null,
      credentialId: principal?.credentialId ?? null,
      sourceAddress: req.socket.remoteAddress ?? null,
      operation,
      binding: 'ADMIN',
      resource: resourceOf(req, tenant),
      outcome,
      reason,
      traceId: traceIdOf(req.header('traceparent')),
      occurredAt: new Date(),
    };
    await this.writer.record(entry).catch((error: unknown) => {
      this.logger.error(`audit record of ${operation} not written: ${String(error)}`);
    });
  }
}

/**
 * The tenant a call concerns: the path's, the one a tenant creation names, or a tenant admin's own on the
 * routes about the credential itself (`whoami`).
 */
function tenantOf(req: AdminRequest): string | null {
  const fromPath = req.params['tenantId'];
  if (typeof fromPath === 'string' && fromPath !== '') {
    return fromPath.slice(0, 128);
  }
  const own = req.adminCall?.principal.tenantId;
  if (own && req.adminCall?.spec.permission === 'authenticated') {
    return own;
  }
  const created = (req.body as { tenantId?: unknown } | undefined)?.tenantId;
  return req.method === 'POST' && typeof created === 'string' && NEW_TENANT_ID.test(created)
    ? created
    : null;
}

/** What the call acted on, most specific first (never a secret: ids only). */
function resourceOf(req: AdminRequest, tenant: string | null): string | null {
  const p = req.params;
  const named = (kind: string, id: unknown) =>
    typeof id === 'string' && id !== '' ? `${kind}/${id.slice(0, 128)}` : null;
  return (
    named('worker-credential', p['credentialId']) ??
    named('push-delivery', p['deliveryId']) ??
    named('task', p['taskId']) ??
    named(req.path.includes('/admin-keys') ? 'admin-key' : 'api-key', p['keyId']) ??
    named('agent', p['agentId']) ??
    named('tenant', tenant)
  );
}

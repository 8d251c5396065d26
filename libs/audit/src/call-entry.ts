import type { CallContext } from '@lib/ids';
import type { AuditBinding, AuditEntry } from './audit-record';
import { traceIdOf } from './trace-id';

/**
 * The record of an authenticated A2A call: who made it, with which credential, from where, through which
 * binding and under which trace (all from its call context), and what it did (`fields`), now.
 */
export function callEntry(
  ctx: CallContext,
  fields: Pick<AuditEntry, 'operation' | 'resource' | 'outcome' | 'reason'>,
): AuditEntry {
  return {
    tenantId: ctx.tenantId,
    principalId: ctx.principalId,
    credentialId: ctx.credentialId,
    sourceAddress: ctx.sourceAddress ?? null,
    binding: ctx.binding as AuditBinding,
    traceId: traceIdOf(ctx.traceparent),
    occurredAt: new Date(),
    ...fields,
  };
}

import { A2aError, isPlainObject, type A2aJsonRpcMethod } from '@lib/a2a-protocol';
import {
  AuditWriter,
  callEntry,
  PLATFORM_TENANT,
  traceIdOf,
  type AuditBinding,
  type AuditEntry,
  type AuditOutcome,
} from '@lib/audit';
import type { AgentRef, CallContext, TenantId } from '@lib/tenancy';
import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import type { Pool } from 'pg';
import { INGRESS_PG_POOL } from '../tokens';

/**
 * The operations that change something: each call becomes an audit record, whatever its outcome. The
 * task-service writes the record of each one that succeeds, in the transaction of the change it made
 * (apps/task-service `callAudit`); the ingress writes those of the calls that fail or are refused.
 */
const MUTATING: ReadonlySet<A2aJsonRpcMethod> = new Set<A2aJsonRpcMethod>([
  'SendMessage',
  'SendStreamingMessage',
  'CancelTask',
  'CreateTaskPushNotificationConfig',
  'DeleteTaskPushNotificationConfig',
]);

/** What a refused or failed authentication knew of the request. */
export interface RefusedCall {
  binding: AuditBinding;
  sourceAddress?: string | undefined;
  traceparent?: string | undefined;
}

/**
 * The ingress's audit records (docs/admin.md "Audit"): every mutating A2A operation that failed (those that
 * succeed are recorded by the task-service with their change), every call refused for a missing scope, every
 * failed authentication. Records are batched across concurrent calls (AuditWriter) and durable before the
 * answer is sent. Content never goes in: ids and outcomes only.
 */
@Injectable()
export class A2aAudit implements OnModuleDestroy {
  private readonly logger = new Logger(A2aAudit.name);
  private readonly writer: AuditWriter;

  constructor(@Inject(INGRESS_PG_POOL) pool: Pool) {
    this.writer = new AuditWriter(pool);
  }

  /** Records an operation's outcome when it is one the audit keeps (see {@link MUTATING}). */
  async operation(
    ctx: CallContext,
    method: A2aJsonRpcMethod,
    params: unknown,
    outcome: { result: unknown } | { error: unknown },
  ): Promise<void> {
    const error = 'error' in outcome ? outcome.error : null;
    const denied = error instanceof A2aError && error.reason === 'PERMISSION_DENIED';
    // A mutating call that succeeded has its record from the task-service, committed with the change.
    if (MUTATING.has(method) ? error === null : !denied) {
      return;
    }
    const result: AuditOutcome = error === null ? 'ok' : denied ? 'denied' : 'failed';
    await this.write(
      callEntry(ctx, {
        operation: `a2a.${method}`,
        resource: resourceOf(params, 'result' in outcome ? outcome.result : undefined),
        outcome: result,
        reason: error === null ? null : error instanceof A2aError ? error.reason : 'INTERNAL',
      }),
    );
  }

  /**
   * Records a refused authentication (UNAUTHENTICATED) or a refused tenant (PERMISSION_DENIED: suspended).
   * `known`: whether the routed tenant exists; a name no tenant has goes to the platform's own chain, so
   * that strangers cannot create chains.
   */
  async refused(call: RefusedCall, ref: AgentRef, known: boolean, error: A2aError): Promise<void> {
    const resource = `agent/${ref.tenantId}/${ref.agentId}`.slice(0, 300);
    await this.write(refusal(call, known ? ref.tenantId : PLATFORM_TENANT, resource, error));
  }

  /**
   * Records a key refused by the agent directory (`GET /a2a/agents`, which names no tenant): in the chain of
   * the key's tenant when it is the key of one (expired, or of a tenant that is not active), else the
   * platform's.
   */
  async refusedDirectory(
    call: RefusedCall,
    tenantId: TenantId | null,
    error: A2aError,
  ): Promise<void> {
    await this.write(refusal(call, tenantId ?? PLATFORM_TENANT, 'agent-directory', error));
  }

  private async write(entry: AuditEntry): Promise<void> {
    await this.writer.record(entry).catch((error: unknown) => {
      // The operation happened (or failed) already; a lost record is reported, not turned into an error.
      this.logger.error(`audit record of ${entry.operation} not written: ${String(error)}`);
    });
  }

  async onModuleDestroy(): Promise<void> {
    await this.writer.close();
  }
}

/** The record of a refused authentication (UNAUTHENTICATED) or a refused tenant (PERMISSION_DENIED). */
function refusal(
  call: RefusedCall,
  tenantId: string,
  resource: string,
  error: A2aError,
): AuditEntry {
  return {
    tenantId,
    principalId: null,
    credentialId: null,
    sourceAddress: call.sourceAddress ?? null,
    operation: 'a2a.authenticate',
    binding: call.binding,
    resource,
    outcome: error.reason === 'UNAUTHENTICATED' ? 'unauthenticated' : 'denied',
    reason: error.reason,
    traceId: traceIdOf(call.traceparent),
    occurredAt: new Date(),
  };
}

/** The task the call acted on: from the request, else from the result (a new task's id). */
function resourceOf(params: unknown, result: unknown): string | null {
  const fromParams = isPlainObject(params)
    ? (params['id'] ??
      params['taskId'] ??
      (isPlainObject(params['message']) ? params['message']['taskId'] : undefined))
    : undefined;
  if (typeof fromParams === 'string' && fromParams !== '') {
    return `task/${fromParams.slice(0, 256)}`;
  }
  if (isPlainObject(result)) {
    const task = isPlainObject(result['task']) ? result['task'] : result;
    if (typeof task['id'] === 'string') {
      return `task/${task['id']}`;
    }
  }
  return null;
}

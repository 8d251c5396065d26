import { AuditWriter, PLATFORM_TENANT, type AuditEntry } from '@lib/audit';
import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import type { Pool } from 'pg';
import type { WorkerIdentity } from './agent-directory';
import { PG_POOL } from './tokens';
import { AuditSink } from './write/task-writer';

/**
 * The task-service's own audit records: worker registrations (every session opened, every credential
 * refused), and the record of a call whose command changed nothing (a repeated message, a cancel of a task
 * already canceling). A call that changes a task has its record committed with the change by the writer.
 */
@Injectable()
export class ServiceAudit extends AuditSink implements OnModuleDestroy {
  private readonly logger = new Logger(ServiceAudit.name);
  private readonly writer: AuditWriter;

  constructor(@Inject(PG_POOL) pool: Pool) {
    super();
    this.writer = new AuditWriter(pool);
  }

  /** A worker registered (`identity`) or was refused (null: an unknown or revoked credential). */
  async registration(identity: WorkerIdentity | null, peer: string): Promise<void> {
    await this.recordApart({
      tenantId: identity?.tenantId ?? PLATFORM_TENANT,
      principalId: identity ? `worker:${identity.credentialId}` : null,
      credentialId: identity?.credentialId ?? null,
      sourceAddress: peer,
      operation: 'worker.register',
      binding: 'WORKER',
      resource: identity ? `agent/${identity.agentId}` : null,
      outcome: identity ? 'ok' : 'unauthenticated',
      reason: identity ? null : 'UNAUTHENTICATED',
      traceId: null,
      occurredAt: new Date(),
    });
  }

  async recordApart(entry: AuditEntry): Promise<void> {
    await this.writer.record(entry).catch((error: unknown) => {
      // What the record describes happened already; a lost record is reported, not turned into an error.
      this.logger.error(`audit record of ${entry.operation} not written: ${String(error)}`);
    });
  }

  async onModuleDestroy(): Promise<void> {
    await this.writer.close();
  }
}

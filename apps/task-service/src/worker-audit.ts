import { AuditWriter, PLATFORM_TENANT } from '@lib/audit';
import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import type { Pool } from 'pg';
import type { WorkerIdentity } from './agent-directory';
import { PG_POOL } from './tokens';

/** Audit records of worker registrations: every session opened, and every credential refused. */
@Injectable()
export class WorkerAudit implements OnModuleDestroy {
  private readonly logger = new Logger(WorkerAudit.name);
  private readonly writer: AuditWriter;

  constructor(@Inject(PG_POOL) pool: Pool) {
    this.writer = new AuditWriter(pool);
  }

  /** A worker registered (`identity`) or was refused (null: an unknown or revoked credential). */
  async registration(identity: WorkerIdentity | null, peer: string): Promise<void> {
    await this.writer
      .record({
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
      })
      .catch((error: unknown) => {
        this.logger.error(`audit record of a worker registration not written: ${String(error)}`);
      });
  }

  async onModuleDestroy(): Promise<void> {
    await this.writer.close();
  }
}

import { AuditWriter } from '@lib/audit';
import type { AdminApiConfig } from '@lib/config';
import type { AgentRef } from '@lib/tenancy';
import { UpstreamStore } from '@lib/upstream';
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import type { Pool } from 'pg';
import { adminError } from './admin-errors.filter';
import { ADMIN_CONFIG, ADMIN_PG_POOL } from './tokens';
import { EXTENDED_CARD_OPERATION, UpstreamImporter } from './upstream-importer';

/** The principal the schedule's audit records name. */
export const UPSTREAM_SYNC_PRINCIPAL = 'platform:upstream-sync';
/** The schedule looks for due agents at least this often. */
const MAX_TICK_MS = 60_000;

/**
 * Reads every imported agent's card again every UPSTREAM_SYNC_INTERVAL_MS (docs/upstream.md "Import"): a
 * changed card is a new version of the definition, recorded in the tenant's audit chain as
 * `admin.agent.sync` by {@link UPSTREAM_SYNC_PRINCIPAL}; a card that cannot be read is recorded as failed
 * and tried again an interval later, an extended card that cannot be read as a failed
 * {@link EXTENDED_CARD_OPERATION} (the sync itself went on). Every admin API replica runs it; a card read again by two replicas at
 * once changes the definition once (an unchanged card writes nothing).
 */
@Injectable()
export class UpstreamSyncSchedule implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(UpstreamSyncSchedule.name);
  private readonly store: UpstreamStore;
  /** When a failed sync of an agent may be tried again. */
  private readonly failedUntil = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private round: Promise<void> = Promise.resolve();

  constructor(
    @Inject(ADMIN_CONFIG) private readonly config: AdminApiConfig,
    @Inject(ADMIN_PG_POOL) pool: Pool,
    private readonly importer: UpstreamImporter,
    private readonly audit: AuditWriter,
  ) {
    this.store = new UpstreamStore(pool);
  }

  onApplicationBootstrap(): void {
    const interval = this.config.UPSTREAM_SYNC_INTERVAL_MS;
    if (interval === 0 || !this.config.UPSTREAM_SECRETS_KEY) {
      return;
    }
    this.timer = setInterval(
      () => {
        this.round = this.round.then(() => this.syncDue());
      },
      Math.min(interval, MAX_TICK_MS),
    );
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.round;
  }

  private async syncDue(): Promise<void> {
    const interval = this.config.UPSTREAM_SYNC_INTERVAL_MS;
    let due: AgentRef[];
    try {
      due = await this.store.dueForSync(interval);
    } catch (error) {
      this.logger.warn(`imported agents not read for their sync: ${String(error)}`);
      return;
    }
    for (const ref of due) {
      const key = `${ref.tenantId}/${ref.agentId}`;
      if ((this.failedUntil.get(key) ?? 0) > Date.now()) {
        continue;
      }
      try {
        const synced = await this.importer.sync(ref);
        this.failedUntil.delete(key);
        if (synced.changed) {
          this.logger.log(`the card of ${key} changed: version ${synced.upstream.version}`);
          await this.record(ref, 'admin.agent.sync', 'ok', null);
        }
        for (const warning of synced.warnings) {
          this.logger.warn(`the card of ${key} was read again, but: ${warning.message}`);
          await this.record(ref, EXTENDED_CARD_OPERATION, 'failed', warning.code);
        }
      } catch (error) {
        this.failedUntil.set(key, Date.now() + interval);
        this.logger.warn(`the card of ${key} was not read again: ${String(error)}`);
        await this.record(ref, 'admin.agent.sync', 'failed', adminError(error).body.error.status);
      }
    }
  }

  private async record(
    ref: AgentRef,
    operation: string,
    outcome: 'ok' | 'failed',
    reason: string | null,
  ) {
    await this.audit
      .record({
        tenantId: ref.tenantId,
        principalId: UPSTREAM_SYNC_PRINCIPAL,
        credentialId: null,
        sourceAddress: null,
        operation,
        binding: 'ADMIN',
        resource: `agent/${ref.agentId}`,
        outcome,
        reason,
        traceId: null,
        occurredAt: new Date(),
      })
      .catch((error: unknown) => {
        this.logger.error(`audit record of a scheduled ${operation} not written: ${String(error)}`);
      });
  }
}

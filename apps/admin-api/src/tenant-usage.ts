import type { AdminApiConfig } from '@lib/config';
import { RequestRateCounter, TenantUsage, type TenantId, type TenantQuotas } from '@lib/tenancy';
import { Inject, Injectable } from '@nestjs/common';
import type { Redis } from 'ioredis';
import type { Pool } from 'pg';
import { ADMIN_CONFIG, ADMIN_PG_POOL, ADMIN_REDIS } from './tokens';

/** A tenant's quotas as enforced (its own or the platform's defaults) beside what it uses now. */
export interface UsageReport {
  tenantId: TenantId;
  requestsPerSecond: { limit: number | null; current: number | null };
  activeTasks: { limit: number | null; current: number };
}

/** Reads what a tenant uses of its quotas: the ingress's request counter in Redis, its active tasks. */
@Injectable()
export class TenantUsageReader {
  private readonly rates: RequestRateCounter;
  private readonly usage: TenantUsage;

  constructor(
    @Inject(ADMIN_CONFIG) private readonly config: AdminApiConfig,
    @Inject(ADMIN_PG_POOL) pool: Pool,
    @Inject(ADMIN_REDIS) redis: Redis,
  ) {
    this.rates = new RequestRateCounter(redis);
    this.usage = new TenantUsage(pool);
  }

  /** `requestsPerSecond.current` is null while Redis cannot be reached. */
  async report(tenantId: TenantId, quotas: TenantQuotas): Promise<UsageReport> {
    let current: number | null;
    try {
      current = await this.rates.current(tenantId);
    } catch {
      current = null;
    }
    return {
      tenantId,
      requestsPerSecond: {
        limit: quotas.requestsPerSecond ?? this.config.TENANT_DEFAULT_REQUESTS_PER_SECOND ?? null,
        current,
      },
      activeTasks: {
        limit: quotas.maxActiveTasks ?? this.config.TENANT_DEFAULT_MAX_ACTIVE_TASKS ?? null,
        current: await this.usage.activeTasks(tenantId),
      },
    };
  }
}

import { A2aError, isPlainObject, type A2aJsonRpcMethod } from '@lib/a2a-protocol';
import type { PlatformFeatures } from '@lib/config';
import { quotaRedis, RequestRateCounter, TenantUsage } from '@lib/tenancy';
import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import type { Redis } from 'ioredis';
import type { Pool } from 'pg';
import type { HostedAgent } from '../cards/agent-registry';
import {
  INGRESS_CONFIG,
  INGRESS_FEATURES,
  INGRESS_PG_POOL,
  type IngressModuleConfig,
} from '../tokens';

/**
 * A tenant's quotas (admin API; TENANT_DEFAULT_* when unset): requests per second, counted in Redis across
 * every ingress replica, and tasks not yet terminal, checked when a message would start a new task. Over
 * a limit: QUOTA_EXCEEDED (HTTP 429 / gRPC RESOURCE_EXHAUSTED) with the seconds to wait. While Redis cannot
 * be reached the rate is not enforced (logged once per outage): a quota must not take the platform down. On a
 * platform without request-rate quotas (the standalone process without Redis) rates are not counted at all.
 */
@Injectable()
export class TenantQuotas implements OnModuleDestroy {
  private readonly logger = new Logger(TenantQuotas.name);
  /** Null: request-rate quotas are off on this platform. */
  private readonly redis: Redis | null;
  private readonly rates: RequestRateCounter | null;
  private readonly usage: TenantUsage;
  private redisFailing = false;

  constructor(
    @Inject(INGRESS_CONFIG) private readonly config: IngressModuleConfig,
    @Inject(INGRESS_PG_POOL) pool: Pool,
    @Inject(INGRESS_FEATURES) features: PlatformFeatures,
  ) {
    this.redis = features.requestRateQuotas
      ? quotaRedis(config.REDIS_URL, 'a2a-ingress:quotas')
      : null;
    this.rates = this.redis ? new RequestRateCounter(this.redis) : null;
    this.usage = new TenantUsage(pool);
  }

  /** Counts the request against the tenant's rate. */
  async admitRequest(agent: HostedAgent): Promise<void> {
    const limit =
      agent.quotas.requestsPerSecond ?? this.config.TENANT_DEFAULT_REQUESTS_PER_SECOND ?? null;
    if (limit === null || this.rates === null) {
      return;
    }
    let count: number;
    try {
      count = await this.rates.hit(agent.tenantId);
      if (this.redisFailing) {
        this.redisFailing = false;
        this.logger.log('request rates are counted again');
      }
    } catch (error) {
      if (!this.redisFailing) {
        this.redisFailing = true;
        this.logger.warn(`request rates cannot be counted (Redis: ${String(error)}); not enforced`);
      }
      return;
    }
    if (count > limit) {
      throw quotaExceeded(`tenant ${agent.tenantId} is over its rate of ${limit} requests/s`, 1);
    }
  }

  /** Refuses a message that would start a task while the tenant has its maximum of active tasks. */
  async admitNewTask(agent: HostedAgent, method: A2aJsonRpcMethod, params: unknown): Promise<void> {
    const limit =
      agent.quotas.maxActiveTasks ?? this.config.TENANT_DEFAULT_MAX_ACTIVE_TASKS ?? null;
    if (limit === null || (method !== 'SendMessage' && method !== 'SendStreamingMessage')) {
      return;
    }
    const message = isPlainObject(params) ? params['message'] : undefined;
    if (
      isPlainObject(message) &&
      typeof message['taskId'] === 'string' &&
      message['taskId'] !== ''
    ) {
      return;
    }
    const active = await this.usage.activeTasks(agent.tenantId);
    if (active >= limit) {
      throw quotaExceeded(
        `tenant ${agent.tenantId} has ${active} active tasks, its maximum is ${limit}`,
        5,
      );
    }
  }

  onModuleDestroy(): void {
    this.redis?.disconnect();
  }
}

function quotaExceeded(message: string, retryAfterSeconds: number): A2aError {
  return new A2aError('QUOTA_EXCEEDED', message, { retryAfterSeconds: String(retryAfterSeconds) });
}

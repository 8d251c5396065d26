import type { AgentExtension, AgentSkill } from '@lib/a2a-protocol';
import type { IngressConfig, PlatformFeatures } from '@lib/config';
import { isTransientDatabaseError } from '@lib/event-store';
import {
  AgentStore,
  ConfigChanges,
  type AgentId,
  type AgentRef,
  type ServedAgentRecord,
  type TenantId,
} from '@lib/tenancy';
import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { routingTenant } from '../gateway/agent-route';
import { INGRESS_CONFIG, INGRESS_FEATURES, INGRESS_PG_POOL } from '../tokens';

/** The hosted agent's own card fields, as registered with the platform. */
export interface AgentProfile {
  name: string;
  description: string;
  version: string;
  defaultInputModes?: string[];
  defaultOutputModes?: string[];
  skills?: AgentSkill[];
  documentationUrl?: string;
  iconUrl?: string;
  /** Extensions the agent itself declares (the platform adds its own); `required` ones must be requested. */
  extensions?: AgentExtension[];
  /** Declares `capabilities.extendedAgentCard`. */
  extendedAgentCard?: boolean;
  /** Declares `capabilities.pushNotifications`: the four push-config operations and inline webhooks. */
  pushNotifications?: boolean;
  /** What authenticated callers see in addition to the public card; absent: declared but not configured. */
  extendedCard?: { description?: string; skills?: AgentSkill[] };
  /** Declares the A2UI extension (v0.9 and v0.9.1, basic catalog) unless `extensions` has its own entry. */
  a2ui?: boolean;
}

export interface HostedAgent {
  tenantId: TenantId;
  agentId: AgentId;
  profile: AgentProfile;
  /** `active`, or `suspended` / `deleting`: the tenant's calls are then refused. */
  tenantStatus: string;
  /** The tenant trusts OIDC issuers: bearer tokens authenticate too, and the card declares them. */
  acceptsBearer: boolean;
  /** The tenant's own quotas; null: the platform's defaults. */
  quotas: { requestsPerSecond: number | null; maxActiveTasks: number | null };
  /** Served without an API key (ANONYMOUS_AGENTS). */
  anonymousAccess: boolean;
}

const CACHE_TTL_MS = 5_000;

/**
 * Looks up hosted agents by (tenant, agent) route, with a short cache that a configuration change drops (an
 * agent's new definition is served within a second on every replica). While the database cannot be reached,
 * an agent seen before is served from the cache however old (cards stay discoverable during an outage).
 * An agent's profile is the one offered here: on a platform without push notifications it declares none,
 * so its card and the capability checks agree with what the platform does.
 */
@Injectable()
export class AgentRegistry {
  private readonly cache = new Map<string, { agent: HostedAgent | null; until: number }>();

  private readonly anonymous: ReadonlySet<string>;

  private readonly store: AgentStore;

  constructor(
    @Inject(INGRESS_PG_POOL) pool: Pool,
    @Inject(INGRESS_CONFIG) config: IngressConfig,
    @Inject(INGRESS_FEATURES) private readonly features: PlatformFeatures,
    changes: ConfigChanges,
  ) {
    this.store = new AgentStore(pool);
    this.anonymous = new Set(config.ANONYMOUS_AGENTS);
    changes.subscribe(() => this.cache.clear());
  }

  /** Whether the agent is served without an API key (ANONYMOUS_AGENTS). */
  isAnonymous(ref: AgentRef): boolean {
    return this.anonymous.has(routingTenant(ref));
  }

  async find(ref: AgentRef): Promise<HostedAgent | null> {
    const { tenantId, agentId } = ref;
    const key = `${tenantId}\u0000${agentId}`;
    const cached = this.cache.get(key);
    if (cached && cached.until > Date.now()) {
      return cached.agent;
    }
    let served: ServedAgentRecord | null;
    try {
      served = await this.store.findServed(ref);
    } catch (error) {
      if (cached && isTransientDatabaseError(error)) {
        return cached.agent;
      }
      throw error;
    }
    const agent = served ? this.hosted(ref, served) : null;
    this.cache.set(key, { agent, until: Date.now() + CACHE_TTL_MS });
    return agent;
  }

  private hosted(ref: AgentRef, served: ServedAgentRecord): HostedAgent {
    // Read from jsonb: an extension's params are JSON values, which the definition's schema calls unknown.
    const profile = served.card as AgentProfile;
    return {
      tenantId: ref.tenantId,
      agentId: ref.agentId,
      profile: this.features.pushNotifications ? profile : { ...profile, pushNotifications: false },
      tenantStatus: served.tenantStatus,
      acceptsBearer: served.trustsIssuers,
      quotas: served.quotas,
      anonymousAccess: this.isAnonymous(ref),
    };
  }
}

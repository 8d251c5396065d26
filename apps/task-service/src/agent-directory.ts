import type { PlatformFeatures, TaskServiceConfig } from '@lib/config';
import type { LeasePolicy } from '@lib/task-domain';
import {
  AgentStore,
  ConfigChanges,
  CredentialStore,
  hashSecret,
  type AgentRef,
  type CredentialId,
} from '@lib/tenancy';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Pool } from 'pg';
import { PG_POOL, TASK_SERVICE_CONFIG, TASK_SERVICE_FEATURES } from './tokens';

/** The agent a worker credential is bound to, and the credential. */
export interface WorkerIdentity extends AgentRef {
  readonly credentialId: CredentialId;
}

const CACHE_TTL_MS = 10_000;
/**
 * How long a worker credential's check is reused: every PublishUpdate authenticates, and a revoked credential
 * is refused at the latest this long after its revocation.
 */
const CREDENTIAL_TTL_MS = 1_000;
/** Most worker credentials remembered at once. */
const CREDENTIAL_CACHE_SIZE = 1_000;

/**
 * Hosted agents' settings (dispatch policy, lease TTL, lease cap, input modes, message replies) and worker
 * credentials, read through their stores (`AgentStore`, `CredentialStore`). A configuration change
 * (ConfigChanges) re-reads the cached agents at once and forgets the credentials, so a new definition or a
 * revocation counts on this replica within a second.
 */
@Injectable()
export class AgentDirectory {
  private readonly logger = new Logger(AgentDirectory.name);
  private readonly agents = new Map<
    string,
    { agent: AgentRef; settings: AgentSettings; until: number }
  >();
  private readonly credentials = new Map<
    string,
    { identity: WorkerIdentity | null; until: number }
  >();
  private readonly capListeners = new Set<(agent: AgentRef) => void>();

  private readonly agentStore: AgentStore;
  private readonly credentialStore: CredentialStore;

  constructor(
    @Inject(PG_POOL) pool: Pool,
    @Inject(TASK_SERVICE_CONFIG) private readonly config: TaskServiceConfig,
    @Inject(TASK_SERVICE_FEATURES) private readonly features: PlatformFeatures,
    changes: ConfigChanges,
  ) {
    this.agentStore = new AgentStore(pool);
    this.credentialStore = new CredentialStore(pool);
    changes.subscribe(() => {
      this.credentials.clear();
      void this.refresh();
    });
  }

  /** Re-reads every cached agent; the old settings serve until the new ones are in. */
  private async refresh(): Promise<void> {
    for (const { agent } of [...this.agents.values()]) {
      await this.load(agent).catch((error: unknown) => {
        this.agents.delete(keyOf(agent));
        this.logger.warn(
          `agent ${agent.agentId} of ${agent.tenantId} not re-read: ${String(error)}`,
        );
      });
    }
  }

  /** Called with the agent whenever a re-read finds its lease cap (`maxConcurrency`) changed. */
  onMaxConcurrencyChanged(listener: (agent: AgentRef) => void): () => void {
    this.capListeners.add(listener);
    return () => this.capListeners.delete(listener);
  }

  /**
   * The lease TTL of the agent's tasks: its policy's, or LEASE_TTL_MS. Synchronous for the dispatch paths;
   * the agent's settings are read when its workers register and on each of its messages.
   */
  leaseTtlMs(agent: AgentRef): number {
    return this.agents.get(keyOf(agent))?.settings.leaseTtlMs ?? this.config.LEASE_TTL_MS;
  }

  /**
   * Whether the agent's leases are capped by its worker policy (`maxConcurrency`), or its settings are not
   * known here (then it may be). Synchronous and without a query, for the accept path: SendMessage has read
   * the agent's settings just before.
   */
  capped(agent: AgentRef): boolean {
    const cached = this.agents.get(keyOf(agent));
    return !cached || cached.settings.maxConcurrency !== null;
  }

  /**
   * Most leases of the agent's tasks held at once across all replicas; null: no cap. The cached value,
   * whatever its age (a configuration change re-reads it within a second); read when not cached.
   */
  async maxConcurrency(agent: AgentRef): Promise<number | null> {
    const cached = this.agents.get(keyOf(agent));
    return (cached?.settings ?? (await this.load(agent))).maxConcurrency;
  }

  /** The (tenant, agent) a worker secret is bound to, or null when unknown or revoked. */
  async authenticateWorker(secret: string): Promise<WorkerIdentity | null> {
    const hash = hashSecret(secret);
    const cached = this.credentials.get(hash);
    if (cached && cached.until > Date.now()) {
      return cached.identity;
    }
    const identity = await this.credentialStore.findWorkerCredential(hash);
    if (this.credentials.size >= CREDENTIAL_CACHE_SIZE) {
      this.credentials.clear();
    }
    this.credentials.set(hash, { identity, until: Date.now() + CREDENTIAL_TTL_MS });
    return identity;
  }

  async leasePolicy(agent: AgentRef): Promise<LeasePolicy> {
    return (await this.settings(agent)).policy;
  }

  /**
   * What SendMessage needs of the agent: the media types it accepts, whether it may reply (ADR 0009) and
   * whether it allows webhooks (ADR 0010: never on a platform without push notifications).
   */
  async intake(agent: AgentRef): Promise<AgentIntake> {
    return (await this.settings(agent)).intake;
  }

  private async settings(agent: AgentRef): Promise<AgentSettings> {
    const cached = this.agents.get(keyOf(agent));
    if (cached && cached.until > Date.now()) {
      return cached.settings;
    }
    return this.load(agent);
  }

  private async load(agent: AgentRef): Promise<AgentSettings> {
    const found = await this.agentStore.find(agent);
    const settings: AgentSettings = found
      ? {
          policy: { onLeaseLost: found.policy.onLeaseLost, maxAttempts: found.policy.maxAttempts },
          leaseTtlMs: found.policy.leaseTtlMs,
          maxConcurrency: found.policy.maxConcurrency,
          intake: {
            inputModes: [
              ...new Set([
                ...(found.card.defaultInputModes ?? []),
                ...(found.card.skills ?? []).flatMap((skill) => skill.inputModes ?? []),
              ]),
            ],
            messageReplies: found.card.messageReplies === true,
            pushNotifications:
              this.features.pushNotifications && found.card.pushNotifications === true,
          },
        }
      : {
          policy: { onLeaseLost: 'fail', maxAttempts: 1 },
          leaseTtlMs: null,
          maxConcurrency: null,
          intake: { inputModes: [], messageReplies: false, pushNotifications: false },
        };
    const key = keyOf(agent);
    const before = this.agents.get(key)?.settings;
    // Only the pair is kept: the caller's object may be a whole call context.
    const ref: AgentRef = { tenantId: agent.tenantId, agentId: agent.agentId };
    this.agents.set(key, { agent: ref, settings, until: Date.now() + CACHE_TTL_MS });
    if (before && before.maxConcurrency !== settings.maxConcurrency) {
      this.capListeners.forEach((listener) => listener(ref));
    }
    return settings;
  }
}

function keyOf(agent: AgentRef): string {
  return `${agent.tenantId}\u0000${agent.agentId}`;
}

/** What SendMessage needs of an agent. */
export interface AgentIntake {
  /** Media types the agent accepts: its default input modes and every skill's. */
  inputModes: string[];
  /** The agent may answer a new message with a bare Message instead of a task (ADR 0009). */
  messageReplies: boolean;
  /** The agent allows webhooks, inline in SendMessage too (ADR 0010). */
  pushNotifications: boolean;
}

interface AgentSettings {
  policy: LeasePolicy;
  /** The agent's own lease TTL; null: LEASE_TTL_MS. */
  leaseTtlMs: number | null;
  /** Most leases of the agent held at once (its worker policy's `maxConcurrency`); null: no cap. */
  maxConcurrency: number | null;
  intake: AgentIntake;
}

import type { TaskServiceConfig } from '@lib/config';
import type { LeasePolicy } from '@lib/task-domain';
import { ConfigChanges, hashSecret } from '@lib/tenancy';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Pool } from 'pg';
import { PG_POOL, TASK_SERVICE_CONFIG } from './tokens';

export interface WorkerIdentity {
  tenantId: string;
  agentId: string;
  credentialId: string;
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
 * Hosted agents' settings (dispatch policy, lease TTL, input modes, message replies) and worker credentials.
 * A configuration change (ConfigChanges) re-reads the cached agents at once and forgets the credentials,
 * so a new definition or a revocation counts on this replica within a second.
 */
@Injectable()
export class AgentDirectory {
  private readonly logger = new Logger(AgentDirectory.name);
  private readonly agents = new Map<string, { agent: AgentSettings; until: number }>();
  private readonly credentials = new Map<
    string,
    { identity: WorkerIdentity | null; until: number }
  >();

  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(TASK_SERVICE_CONFIG) private readonly config: TaskServiceConfig,
    changes: ConfigChanges,
  ) {
    changes.subscribe(() => {
      this.credentials.clear();
      void this.refresh();
    });
  }

  /** Re-reads every cached agent; the old settings serve until the new ones are in. */
  private async refresh(): Promise<void> {
    for (const key of [...this.agents.keys()]) {
      const [tenantId = '', agentId = ''] = key.split('\u0000');
      await this.load(tenantId, agentId).catch((error: unknown) => {
        this.agents.delete(key);
        this.logger.warn(`agent ${agentId} of ${tenantId} not re-read: ${String(error)}`);
      });
    }
  }

  /**
   * The lease TTL of the agent's tasks: its policy's, or LEASE_TTL_MS. Synchronous for the dispatch paths;
   * the agent's settings are read when its workers register and on each of its messages.
   */
  leaseTtlMs(tenantId: string, agentId: string): number {
    return (
      this.agents.get(`${tenantId}\u0000${agentId}`)?.agent.leaseTtlMs ?? this.config.LEASE_TTL_MS
    );
  }

  /** The (tenant, agent) a worker secret is bound to, or null when unknown or revoked. */
  async authenticateWorker(secret: string): Promise<WorkerIdentity | null> {
    const hash = hashSecret(secret);
    const cached = this.credentials.get(hash);
    if (cached && cached.until > Date.now()) {
      return cached.identity;
    }
    const identity = await this.lookUpWorker(hash);
    if (this.credentials.size >= CREDENTIAL_CACHE_SIZE) {
      this.credentials.clear();
    }
    this.credentials.set(hash, { identity, until: Date.now() + CREDENTIAL_TTL_MS });
    return identity;
  }

  private async lookUpWorker(hash: string): Promise<WorkerIdentity | null> {
    const result = await this.pool.query<{
      tenant_id: string;
      agent_id: string;
      credential_id: string;
    }>(
      `SELECT tenant_id, agent_id, credential_id FROM ops.worker_credentials
        WHERE secret_hash = $1 AND revoked_at IS NULL`,
      [hash],
    );
    const row = result.rows[0];
    return row
      ? { tenantId: row.tenant_id, agentId: row.agent_id, credentialId: row.credential_id }
      : null;
  }

  async leasePolicy(tenantId: string, agentId: string): Promise<LeasePolicy> {
    return (await this.settings(tenantId, agentId)).policy;
  }

  /**
   * What SendMessage needs of the agent: the media types it accepts, whether it may reply (ADR 0009) and
   * whether it allows webhooks (ADR 0010).
   */
  async intake(tenantId: string, agentId: string): Promise<AgentIntake> {
    return (await this.settings(tenantId, agentId)).intake;
  }

  private async settings(tenantId: string, agentId: string): Promise<AgentSettings> {
    const cached = this.agents.get(`${tenantId}\u0000${agentId}`);
    if (cached && cached.until > Date.now()) {
      return cached.agent;
    }
    return this.load(tenantId, agentId);
  }

  private async load(tenantId: string, agentId: string): Promise<AgentSettings> {
    const key = `${tenantId}\u0000${agentId}`;
    const result = await this.pool.query<{
      on_lease_lost: 'redispatch' | 'fail';
      max_attempts: number;
      lease_ttl_ms: number | null;
      profile: {
        defaultInputModes?: string[];
        skills?: { inputModes?: string[] }[];
        messageReplies?: boolean;
        pushNotifications?: boolean;
      };
    }>(
      `SELECT on_lease_lost, max_attempts, lease_ttl_ms, profile FROM ops.agents
        WHERE tenant_id = $1 AND agent_id = $2`,
      [tenantId, agentId],
    );
    const row = result.rows[0];
    const agent: AgentSettings = row
      ? {
          policy: { onLeaseLost: row.on_lease_lost, maxAttempts: row.max_attempts },
          leaseTtlMs: row.lease_ttl_ms,
          intake: {
            inputModes: [
              ...new Set([
                ...(row.profile.defaultInputModes ?? []),
                ...(row.profile.skills ?? []).flatMap((skill) => skill.inputModes ?? []),
              ]),
            ],
            messageReplies: row.profile.messageReplies === true,
            pushNotifications: row.profile.pushNotifications === true,
          },
        }
      : {
          policy: { onLeaseLost: 'fail', maxAttempts: 1 },
          leaseTtlMs: null,
          intake: { inputModes: [], messageReplies: false, pushNotifications: false },
        };
    this.agents.set(key, { agent, until: Date.now() + CACHE_TTL_MS });
    return agent;
  }
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
  intake: AgentIntake;
}

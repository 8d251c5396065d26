import { agentIdOf, isId, tenantIdOf, type AgentId, type AgentRef, type TenantId } from '@lib/ids';
import type { Pool } from 'pg';
import { InvalidInput, isForeignKeyViolation, NotFound, parseInput } from './admin-errors';
import {
  agentDefinitionSchema,
  type AgentCardDefinition,
  type AgentDefinition,
  type WorkerPolicy,
} from './agent-definition';

export interface AgentRecord extends AgentDefinition {
  tenantId: TenantId;
  agentId: AgentId;
  /** Imported from an A2A server (docs/upstream.md): served by the bridge. */
  imported: boolean;
  createdAt: string;
  updatedAt: string;
}

/** A hosted agent as the ingress serves it: its card, and what of its tenant every call checks. */
export interface ServedAgentRecord {
  card: AgentCardDefinition;
  /** `active`, or `suspended` / `deleting`: the tenant's calls are then refused. */
  tenantStatus: string;
  /** The tenant's own quotas; null: the platform's defaults. */
  quotas: { requestsPerSecond: number | null; maxActiveTasks: number | null };
  /** The tenant trusts OIDC issuers (bearer tokens authenticate too). */
  trustsIssuers: boolean;
}

interface AgentRow {
  tenant_id: string;
  agent_id: string;
  profile: AgentCardDefinition;
  on_lease_lost: 'redispatch' | 'fail';
  max_attempts: number;
  lease_ttl_ms: number | null;
  max_concurrency: number | null;
  created_at: Date;
  updated_at: Date;
  imported: boolean;
}

const COLUMNS =
  'tenant_id, agent_id, profile, on_lease_lost, max_attempts, lease_ttl_ms, max_concurrency, created_at, updated_at';
/** Whether the agent `a` is imported from an A2A server. */
const IMPORTED = `EXISTS (SELECT 1 FROM ops.agent_upstreams u
  WHERE u.tenant_id = a.tenant_id AND u.agent_id = a.agent_id) AS imported`;

/**
 * `ops.agents`: the agents a tenant hosts, each with its card definition and worker policy. Every replica
 * serves a change within a second (the table's trigger notifies; see ConfigChanges), and the card's ETag
 * follows its content.
 */
export class AgentStore {
  constructor(private readonly pool: Pool) {}

  /** Creates or replaces the agent's definition; `created` says which. */
  async put(
    tenantId: TenantId,
    agentId: string,
    input: unknown,
  ): Promise<{ agent: AgentRecord; created: boolean }> {
    if (!isId(agentId)) {
      throw new InvalidInput('invalid agent id', [
        { field: 'agentId', description: 'no "/", white space or control characters, 1 to 128' },
      ]);
    }
    const definition = parseInput(agentDefinitionSchema, input, 'agent definition');
    return this.write({ tenantId, agentId: agentIdOf(agentId) }, definition);
  }

  /** Writes an already valid definition (the demo seed's own agents). */
  async write(
    ref: AgentRef,
    definition: AgentDefinition,
  ): Promise<{ agent: AgentRecord; created: boolean }> {
    const { card, policy } = definition;
    const result = await this.pool
      .query<AgentRow & { created: boolean }>({
        text: `INSERT INTO ops.agents AS a
               (tenant_id, agent_id, profile, on_lease_lost, max_attempts, lease_ttl_ms, max_concurrency)
             VALUES ($1, $2, $3, $4, $5, $6, $7)
             ON CONFLICT (tenant_id, agent_id) DO UPDATE
               SET profile = EXCLUDED.profile, on_lease_lost = EXCLUDED.on_lease_lost,
                   max_attempts = EXCLUDED.max_attempts, lease_ttl_ms = EXCLUDED.lease_ttl_ms,
                   max_concurrency = EXCLUDED.max_concurrency, updated_at = now()
             RETURNING ${COLUMNS.split(', ')
               .map((c) => `a.${c}`)
               .join(', ')}, ${IMPORTED}, (xmax = 0) AS created`,
        values: [
          ref.tenantId,
          ref.agentId,
          JSON.stringify(card),
          policy.onLeaseLost,
          policy.maxAttempts,
          policy.leaseTtlMs,
          policy.maxConcurrency,
        ],
      })
      .catch((error: unknown) => {
        throw isForeignKeyViolation(error) ? new NotFound(`no tenant ${ref.tenantId}`) : error;
      });
    const row = result.rows[0];
    if (!row) {
      throw new NotFound(`no tenant ${ref.tenantId}`);
    }
    return { agent: agentOf(row), created: row.created };
  }

  async list(tenantId: TenantId): Promise<AgentRecord[]> {
    const result = await this.pool.query<AgentRow>(
      `SELECT ${COLUMNS}, ${IMPORTED} FROM ops.agents a WHERE tenant_id = $1 ORDER BY agent_id`,
      [tenantId],
    );
    return result.rows.map(agentOf);
  }

  async get(ref: AgentRef): Promise<AgentRecord> {
    const agent = await this.find(ref);
    if (!agent) {
      throw new NotFound(`no agent ${ref.agentId} in tenant ${ref.tenantId}`);
    }
    return agent;
  }

  /** The agent, or null when the tenant hosts no agent of that id. */
  async find(ref: AgentRef): Promise<AgentRecord | null> {
    const result = await this.pool.query<AgentRow>(
      `SELECT ${COLUMNS}, ${IMPORTED} FROM ops.agents a WHERE tenant_id = $1 AND agent_id = $2`,
      [ref.tenantId, ref.agentId],
    );
    const row = result.rows[0];
    return row ? agentOf(row) : null;
  }

  /** The agent as the ingress serves it, with its tenant's status and quotas (one query); null: none. */
  async findServed(ref: AgentRef): Promise<ServedAgentRecord | null> {
    const result = await this.pool.query<{
      profile: AgentCardDefinition;
      status: string;
      oidc: boolean;
      requests_per_second: number | null;
      max_active_tasks: number | null;
    }>({
      name: 'agents.find',
      text: `SELECT a.profile, t.status, t.requests_per_second, t.max_active_tasks,
                    EXISTS (SELECT 1 FROM ops.oidc_issuers i WHERE i.tenant_id = a.tenant_id) AS oidc
               FROM ops.agents a JOIN ops.tenants t ON t.tenant_id = a.tenant_id
              WHERE a.tenant_id = $1 AND a.agent_id = $2`,
      values: [ref.tenantId, ref.agentId],
    });
    const row = result.rows[0];
    return row
      ? {
          card: row.profile,
          tenantStatus: row.status,
          quotas: {
            requestsPerSecond: row.requests_per_second,
            maxActiveTasks: row.max_active_tasks,
          },
          trustsIssuers: row.oidc,
        }
      : null;
  }

  /**
   * Removes the agent and its worker credentials: its card is gone and calls to it answer METHOD_NOT_FOUND.
   * Its tasks stay in the log (a tenant purge removes them).
   */
  async remove(ref: AgentRef): Promise<void> {
    const result = await this.pool.query(
      `WITH creds AS (
         DELETE FROM ops.worker_credentials WHERE tenant_id = $1 AND agent_id = $2
       )
       DELETE FROM ops.agents WHERE tenant_id = $1 AND agent_id = $2`,
      [ref.tenantId, ref.agentId],
    );
    if ((result.rowCount ?? 0) === 0) {
      throw new NotFound(`no agent ${ref.agentId} in tenant ${ref.tenantId}`);
    }
  }
}

function agentOf(row: AgentRow): AgentRecord {
  const policy: WorkerPolicy = {
    onLeaseLost: row.on_lease_lost,
    maxAttempts: row.max_attempts,
    leaseTtlMs: row.lease_ttl_ms,
    maxConcurrency: row.max_concurrency,
  };
  return {
    tenantId: tenantIdOf(row.tenant_id),
    agentId: agentIdOf(row.agent_id),
    card: row.profile,
    policy,
    imported: row.imported,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

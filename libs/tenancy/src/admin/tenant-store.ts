import { tenantIdOf, type TenantId } from '@lib/ids';
import type { Pool, PoolClient } from 'pg';
import { z } from 'zod';
import { Conflict, NotFound, parseInput } from './admin-errors';

/** `active`; `suspended` (calls refused, data kept); `deleting` (first step of a purge, calls refused). */
export type TenantStatus = 'active' | 'suspended' | 'deleting';

/** Per-tenant limits; null: the platform's default. */
export interface TenantQuotas {
  requestsPerSecond: number | null;
  maxActiveTasks: number | null;
}

export interface TenantRecord {
  tenantId: TenantId;
  displayName: string;
  status: TenantStatus;
  quotas: TenantQuotas;
  createdAt: string;
  statusChangedAt: string | null;
}

/**
 * A new tenant's id: lower-case letters, digits and dashes, starting with a letter or digit, at most 63
 * characters (it appears in URLs, routing values and Kafka keys). Ids of tenants made before the admin API
 * only need the looser `ID_PATTERN`.
 */
export const NEW_TENANT_ID = /^[a-z0-9][a-z0-9-]{0,62}$/;

const quotasSchema = z
  .object({
    requestsPerSecond: z.number().int().min(1).max(1_000_000).nullable().optional(),
    maxActiveTasks: z.number().int().min(1).max(100_000_000).nullable().optional(),
  })
  .strict();

export const createTenantSchema = z
  .object({
    tenantId: z.string().regex(NEW_TENANT_ID, 'lower-case letters, digits and dashes, at most 63'),
    displayName: z.string().trim().min(1).max(256),
    quotas: quotasSchema.optional(),
  })
  .strict();

export const updateTenantSchema = z
  .object({
    displayName: z.string().trim().min(1).max(256).optional(),
    quotas: quotasSchema.optional(),
  })
  .strict();

interface TenantRow {
  tenant_id: string;
  display_name: string;
  status: TenantStatus;
  requests_per_second: number | null;
  max_active_tasks: number | null;
  created_at: Date;
  status_changed_at: Date | null;
}

const COLUMNS =
  'tenant_id, display_name, status, requests_per_second, max_active_tasks, created_at, status_changed_at';

/**
 * The tables that hold a tenant's data, children first: what a purge deletes. `audit.records` is not among
 * them: the audit trail outlives the tenant (its purge is itself a record).
 */
export const TENANT_DATA = [
  'ops.push_deliveries',
  'ops.push_configs',
  'ops.task_work',
  'ops.message_ids',
  'read.task_counts',
  'read.task_view',
  'events.streams',
  'events.messages',
  'ops.oidc_issuers',
  'ops.agent_upstreams',
  'ops.worker_credentials',
  'ops.api_keys',
  'ops.agents',
];

/** `ops.tenants`: the organisations the platform hosts, their status and quotas. */
export class TenantStore {
  constructor(private readonly pool: Pool) {}

  async create(input: unknown): Promise<TenantRecord> {
    const spec = parseInput(createTenantSchema, input, 'tenant');
    const result = await this.pool.query<TenantRow>({
      text: `INSERT INTO ops.tenants (tenant_id, display_name, requests_per_second, max_active_tasks)
             VALUES ($1, $2, $3, $4) ON CONFLICT (tenant_id) DO NOTHING RETURNING ${COLUMNS}`,
      values: [
        spec.tenantId,
        spec.displayName,
        spec.quotas?.requestsPerSecond ?? null,
        spec.quotas?.maxActiveTasks ?? null,
      ],
    });
    const row = result.rows[0];
    if (!row) {
      throw new Conflict(`tenant ${spec.tenantId} exists already`);
    }
    return tenantOf(row);
  }

  /** Creates the tenant or sets its display name (the demo seed; idempotent). */
  async ensure(tenantId: TenantId, displayName: string): Promise<void> {
    await this.pool.query(
      `INSERT INTO ops.tenants (tenant_id, display_name) VALUES ($1, $2)
       ON CONFLICT (tenant_id) DO UPDATE SET display_name = EXCLUDED.display_name
        WHERE ops.tenants.display_name IS DISTINCT FROM EXCLUDED.display_name`,
      [tenantId, displayName],
    );
  }

  async list(): Promise<TenantRecord[]> {
    const result = await this.pool.query<TenantRow>(
      `SELECT ${COLUMNS} FROM ops.tenants ORDER BY tenant_id`,
    );
    return result.rows.map(tenantOf);
  }

  async get(tenantId: TenantId): Promise<TenantRecord> {
    const result = await this.pool.query<TenantRow>(
      `SELECT ${COLUMNS} FROM ops.tenants WHERE tenant_id = $1`,
      [tenantId],
    );
    const row = result.rows[0];
    if (!row) {
      throw new NotFound(`no tenant ${tenantId}`);
    }
    return tenantOf(row);
  }

  async update(tenantId: TenantId, input: unknown): Promise<TenantRecord> {
    const spec = parseInput(updateTenantSchema, input, 'tenant update');
    const quotas = spec.quotas ?? {};
    const result = await this.pool.query<TenantRow>(
      `UPDATE ops.tenants
          SET display_name = coalesce($2, display_name),
              requests_per_second = CASE WHEN $3 THEN $4::integer ELSE requests_per_second END,
              max_active_tasks = CASE WHEN $5 THEN $6::integer ELSE max_active_tasks END
        WHERE tenant_id = $1 RETURNING ${COLUMNS}`,
      [
        tenantId,
        spec.displayName ?? null,
        'requestsPerSecond' in quotas,
        quotas.requestsPerSecond ?? null,
        'maxActiveTasks' in quotas,
        quotas.maxActiveTasks ?? null,
      ],
    );
    const row = result.rows[0];
    if (!row) {
      throw new NotFound(`no tenant ${tenantId}`);
    }
    return tenantOf(row);
  }

  /**
   * Suspends (`suspended`), resumes (`active`) or starts deleting (`deleting`) a tenant. A tenant being
   * deleted can only be purged or brought back (`active`).
   */
  async setStatus(tenantId: TenantId, status: TenantStatus): Promise<TenantRecord> {
    const result = await this.pool.query<TenantRow>(
      `UPDATE ops.tenants SET status = $2, status_changed_at = now()
        WHERE tenant_id = $1 AND (status <> 'deleting' OR $2 IN ('active', 'deleting'))
        RETURNING ${COLUMNS}`,
      [tenantId, status],
    );
    const row = result.rows[0];
    if (!row) {
      const current = await this.get(tenantId);
      throw new Conflict(`tenant ${tenantId} is ${current.status}; it cannot become ${status}`);
    }
    return tenantOf(row);
  }

  /**
   * The second step of a deletion: removes everything the tenant owns (tasks and their events, webhooks and
   * deliveries, credentials, issuers, agents, the tenant) in one transaction. Only a tenant marked `deleting`
   * can be purged. Returns the rows deleted per table. Records already on the Kafka feed stay there until
   * the topic's retention removes them (docs/admin.md).
   */
  async purge(tenantId: TenantId): Promise<Record<string, number>> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const locked = await client.query<{ status: TenantStatus }>(
        'SELECT status FROM ops.tenants WHERE tenant_id = $1 FOR UPDATE',
        [tenantId],
      );
      const status = locked.rows[0]?.status;
      if (status === undefined) {
        throw new NotFound(`no tenant ${tenantId}`);
      }
      if (status !== 'deleting') {
        throw new Conflict(`tenant ${tenantId} is ${status}: delete it first, then purge`);
      }
      const deleted = await deleteTenantData(client, tenantId);
      await client.query('DELETE FROM ops.tenants WHERE tenant_id = $1', [tenantId]);
      await client.query('COMMIT');
      return { ...deleted, 'ops.tenants': 1 };
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }
}

async function deleteTenantData(
  client: PoolClient,
  tenantId: TenantId,
): Promise<Record<string, number>> {
  // The event log refuses deletes except of the tenant this transaction purges (migration tenant-admin).
  await client.query(`SELECT set_config('a2a.purge_tenant', $1, true)`, [tenantId]);
  const deleted: Record<string, number> = {};
  for (const table of TENANT_DATA) {
    const result = await client.query(`DELETE FROM ${table} WHERE tenant_id = $1`, [tenantId]);
    deleted[table] = result.rowCount ?? 0;
  }
  return deleted;
}

function tenantOf(row: TenantRow): TenantRecord {
  return {
    tenantId: tenantIdOf(row.tenant_id),
    displayName: row.display_name,
    status: row.status,
    quotas: { requestsPerSecond: row.requests_per_second, maxActiveTasks: row.max_active_tasks },
    createdAt: row.created_at.toISOString(),
    statusChangedAt: row.status_changed_at?.toISOString() ?? null,
  };
}

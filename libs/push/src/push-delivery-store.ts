import { tenantIdOf, type TenantId } from '@lib/ids';
import type { Pool } from 'pg';

/** The states of a delivery: waiting for an attempt, claimed by one, accepted, given up. */
export const DELIVERY_STATES = ['pending', 'sending', 'delivered', 'dead'] as const;

export type DeliveryState = (typeof DELIVERY_STATES)[number];

/** A delivery as an operator sees it: no body, no secrets. */
export interface DeliveryRecord {
  deliveryId: string;
  tenantId: TenantId;
  taskId: string;
  configId: string;
  generation: number;
  state: DeliveryState;
  attempts: number;
  /** When the next attempt is due; null unless the delivery is pending. */
  nextAttemptAt: string | null;
  lastStatus: number | null;
  lastError: string | null;
  createdAt: string;
  finishedAt: string | null;
}

/** An operator's question about one tenant's deliveries; filters combine with AND. */
export interface DeliveryQuery {
  readonly tenantId: TenantId;
  readonly taskId?: string;
  readonly state?: DeliveryState;
  /** Deliveries per page, 1 to {@link MAX_DELIVERY_PAGE_SIZE}. Default: 100. */
  readonly limit?: number;
  /** `nextCursor` of the previous page, with the same filters. */
  readonly cursor?: string;
}

/** One page of deliveries, newest first; `nextCursor` when older ones may follow. */
export interface DeliveryPage {
  readonly deliveries: DeliveryRecord[];
  readonly nextCursor?: string;
}

/** Most deliveries one query returns. */
export const MAX_DELIVERY_PAGE_SIZE = 500;

/** A query the store refuses (an operator's bad filter, limit or cursor), naming the parameter at fault. */
export class InvalidDeliveryQuery extends Error {
  override readonly name = 'InvalidDeliveryQuery';

  constructor(
    readonly field: string,
    readonly description: string,
  ) {
    super(`query parameter ${field} ${description}`);
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const BASE64URL = /^[A-Za-z0-9_-]+$/;
/** A cursor's content: the last row's creation time (UTC, to the microsecond, as Postgres keeps it) and id. */
const CURSOR = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}) ([0-9a-f-]{36})$/;

const COLUMNS = `delivery_id, tenant_id, task_id, config_id, generation, state, attempts, next_attempt_at,
  last_status, last_error, created_at, finished_at`;

interface DeliveryRow {
  delivery_id: string;
  tenant_id: string;
  task_id: string;
  config_id: string;
  generation: number;
  state: DeliveryState;
  attempts: number;
  next_attempt_at: Date;
  last_status: number | null;
  last_error: string | null;
  created_at: Date;
  finished_at: Date | null;
}

/**
 * The operators' side of `ops.push_deliveries` (docs/push.md "Operating"), which the admin API serves: a
 * tenant's deliveries with their state, attempts, last outcome and next attempt, and the redrive of a dead
 * one. The dispatcher's own statements (derive, claim, settle) are its `DeliveryStore`'s.
 */
export class PushDeliveryStore {
  constructor(private readonly pool: Pool) {}

  /**
   * A page of the tenant's deliveries matching the filters, newest first (creation time, then id); throws
   * {@link InvalidDeliveryQuery} on a bad limit, state or cursor. Pages never repeat or skip a delivery that
   * existed when the first page was read.
   */
  async list(query: DeliveryQuery): Promise<DeliveryPage> {
    const limit = query.limit ?? 100;
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_DELIVERY_PAGE_SIZE) {
      throw new InvalidDeliveryQuery(
        'limit',
        `must be an integer from 1 to ${MAX_DELIVERY_PAGE_SIZE}`,
      );
    }
    if (query.state !== undefined && !DELIVERY_STATES.includes(query.state)) {
      throw new InvalidDeliveryQuery('state', `must be one of ${DELIVERY_STATES.join(', ')}`);
    }
    const after = query.cursor === undefined ? null : decodeCursor(query.cursor);
    const result = await this.pool.query<DeliveryRow & { created_key: string }>({
      name: 'push-deliveries.list',
      text: `SELECT ${COLUMNS},
                    to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') AS created_key
               FROM ops.push_deliveries
              WHERE tenant_id = $1 AND ($2::text IS NULL OR task_id = $2) AND ($3::text IS NULL OR state = $3)
                AND ($4::timestamp IS NULL OR created_at < ($4::timestamp AT TIME ZONE 'UTC')
                     OR (created_at = ($4::timestamp AT TIME ZONE 'UTC') AND delivery_id > $5::uuid))
              ORDER BY created_at DESC, delivery_id
              LIMIT $6`,
      values: [
        query.tenantId,
        query.taskId ?? null,
        query.state ?? null,
        after?.createdKey ?? null,
        after?.deliveryId ?? null,
        limit + 1,
      ],
    });
    const rows = result.rows.slice(0, limit);
    const deliveries = rows.map(recordOf);
    const last = rows.at(-1);
    return result.rows.length > limit && last
      ? { deliveries, nextCursor: encodeCursor(last.created_key, last.delivery_id) }
      : { deliveries };
  }

  /**
   * Makes a dead delivery pending again, due now, its attempts from zero (its lane still needs a job: see
   * `redriveJobId`). Returns the delivery, or null when the tenant has no dead delivery with that id.
   */
  async redrive(tenantId: TenantId, deliveryId: string): Promise<DeliveryRecord | null> {
    if (!UUID.test(deliveryId)) {
      return null;
    }
    const result = await this.pool.query<DeliveryRow>({
      name: 'push-deliveries.redrive',
      text: `UPDATE ops.push_deliveries
                SET state = 'pending', attempts = 0, next_attempt_at = clock_timestamp(), finished_at = NULL,
                    last_error = NULL, last_status = NULL
              WHERE tenant_id = $1 AND delivery_id = $2 AND state = 'dead'
              RETURNING ${COLUMNS}`,
      values: [tenantId, deliveryId],
    });
    const row = result.rows[0];
    return row ? recordOf(row) : null;
  }
}

/** The cursor of the page after the row created at `createdKey` (see {@link CURSOR}) with id `deliveryId`. */
function encodeCursor(createdKey: string, deliveryId: string): string {
  return Buffer.from(`${createdKey} ${deliveryId}`, 'utf8').toString('base64url');
}

/** The row a cursor from {@link encodeCursor} stands for; anything else is an {@link InvalidDeliveryQuery}. */
function decodeCursor(cursor: string): { createdKey: string; deliveryId: string } {
  const text = BASE64URL.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const [, createdKey, deliveryId] = CURSOR.exec(text) ?? [];
  if (
    createdKey === undefined ||
    deliveryId === undefined ||
    !UUID.test(deliveryId) ||
    Number.isNaN(Date.parse(`${createdKey}Z`)) ||
    encodeCursor(createdKey, deliveryId) !== cursor
  ) {
    throw new InvalidDeliveryQuery('cursor', 'is not one this listing gave out');
  }
  return { createdKey, deliveryId };
}

function recordOf(row: DeliveryRow): DeliveryRecord {
  return {
    deliveryId: row.delivery_id,
    tenantId: tenantIdOf(row.tenant_id),
    taskId: row.task_id,
    configId: row.config_id,
    generation: row.generation,
    state: row.state,
    attempts: row.attempts,
    nextAttemptAt: row.state === 'pending' ? row.next_attempt_at.toISOString() : null,
    lastStatus: row.last_status,
    lastError: row.last_error,
    createdAt: row.created_at.toISOString(),
    finishedAt: row.finished_at?.toISOString() ?? null,
  };
}

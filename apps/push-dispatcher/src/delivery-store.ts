import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { v5 as uuidv5 } from 'uuid';
import { PUSH_PG_POOL } from './tokens';

/** Namespace of delivery ids: UUIDv5(event id + config id) in it (docs/push.md). */
const DELIVERY_ID_NAMESPACE = '9b7c4b3e-4a2f-5d0e-8e61-2f1a8c7d5b40';

/** The delivery id of an event to a webhook: the same on every attempt, replay and redrive. */
export function deliveryId(eventId: string, configId: string): string {
  return uuidv5(`${eventId}\u0000${configId}`, DELIVERY_ID_NAMESPACE);
}

/** An event of the feed that has something to deliver: what a stream of its task showed for it. */
export interface FeedEvent {
  tenantId: string;
  taskId: string;
  generation: number;
  eventId: string;
  /** The StreamResponse ProtoJSON, the exact bytes every webhook of the task gets. */
  body: string;
}

/** The deliveries of one (task, config): sent one at a time, in generation order. */
export interface Lane {
  tenantId: string;
  taskId: string;
  configId: string;
}

/** A delivery as the one who claimed it sends it: the body and the webhook's current settings. */
export interface ClaimedDelivery {
  deliveryId: string;
  lane: Lane;
  generation: number;
  body: string;
  /** Attempts so far, this one included: the fence of {@link DeliveryStore.settle}. */
  attempt: number;
  url: string;
  token: string | null;
  authentication: { scheme: string; credentials?: string } | null;
}

/** What claiming a lane's oldest open delivery found. */
export type Claim =
  | { kind: 'claimed'; delivery: ClaimedDelivery }
  /** Nothing open in the lane. */
  | { kind: 'empty' }
  /**
   * The head is in backoff (`pending`) or claimed by another run (`sending`): try again at `at`, the end of
   * the backoff or of the claim.
   */
  | { kind: 'later'; at: Date; head: OpenHead };

/** How an attempt ended. */
export type Settlement =
  | { kind: 'delivered'; status: number }
  | { kind: 'retry'; at: Date; status: number | null; error: string }
  | { kind: 'dead'; status: number | null; error: string };

/** The open head of a lane: the delivery that must be settled before the lane's next one is sent. */
export interface OpenHead {
  lane: Lane;
  deliveryId: string;
  /** `pending`: waiting for its next attempt; `sending`: claimed (by a live run, or one that died). */
  state: 'pending' | 'sending';
  attempts: number;
  /** When it may be claimed: the end of its backoff, or of the current claim. */
  due: Date;
}

export type DeliveryState = 'pending' | 'sending' | 'delivered' | 'dead';

/** A delivery as an operator sees it. */
export interface DeliveryRecord {
  deliveryId: string;
  tenantId: string;
  taskId: string;
  configId: string;
  generation: number;
  state: DeliveryState;
  attempts: number;
  nextAttemptAt: string | null;
  lastStatus: number | null;
  lastError: string | null;
  createdAt: string;
  finishedAt: string | null;
}

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
 * `ops.push_deliveries`: the durable receipts of webhook deliveries (docs/adr/0010-push-notifications.md).
 * Rows are derived from the feed; a delivery is sent only under a claim, only the oldest open delivery of a
 * lane can be claimed (order per task and webhook), and an attempt's outcome counts only while its claim is
 * the current one (at most one 2xx is recorded).
 */
@Injectable()
export class DeliveryStore {
  constructor(@Inject(PUSH_PG_POOL) private readonly pool: Pool) {}

  /**
   * Inserts a delivery of each event for every webhook of its task that applies to it (registered before the
   * event, not removed before it). Events seen before insert nothing. Returns the deliveries inserted now.
   */
  async derive(events: readonly FeedEvent[]): Promise<{ deliveryId: string; lane: Lane }[]> {
    if (events.length === 0) {
      return [];
    }
    const applicable = await this.pool.query<{ i: number; config_id: string }>({
      name: 'deliveries.applicable',
      text: `SELECT e.i::integer AS i, pc.config_id
               FROM unnest($1::text[], $2::text[], $3::integer[]) WITH ORDINALITY AS e(t, k, g, i)
               JOIN ops.push_configs pc
                 ON pc.tenant_id = e.t AND pc.task_id = e.k AND pc.from_generation < e.g
                AND (pc.to_generation IS NULL OR e.g < pc.to_generation)`,
      values: [
        events.map((e) => e.tenantId),
        events.map((e) => e.taskId),
        events.map((e) => e.generation),
      ],
    });
    if (applicable.rows.length === 0) {
      return [];
    }
    const rows = applicable.rows.flatMap(({ i, config_id: configId }) => {
      const event = events[i - 1];
      return event ? [{ event, configId, id: deliveryId(event.eventId, configId) }] : [];
    });
    const inserted = await this.pool.query<{ delivery_id: string }>({
      name: 'deliveries.insert',
      text: `INSERT INTO ops.push_deliveries
               (delivery_id, tenant_id, task_id, config_id, generation, event_id, body)
             SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::integer[], $6::uuid[],
                                  $7::text[])
             ON CONFLICT DO NOTHING
             RETURNING delivery_id`,
      values: [
        rows.map((r) => r.id),
        rows.map((r) => r.event.tenantId),
        rows.map((r) => r.event.taskId),
        rows.map((r) => r.configId),
        rows.map((r) => r.event.generation),
        rows.map((r) => r.event.eventId),
        rows.map((r) => r.event.body),
      ],
    });
    const fresh = new Set(inserted.rows.map((r) => r.delivery_id));
    return rows
      .filter((r) => fresh.has(r.id))
      .map((r) => ({
        deliveryId: r.id,
        lane: { tenantId: r.event.tenantId, taskId: r.event.taskId, configId: r.configId },
      }));
  }

  /**
   * Claims the oldest open delivery of the lane when it is due (pending and past its backoff, or claimed by
   * someone whose claim expired) for `claimMs`. Only the head is ever claimed: a later event waits until the
   * earlier one is delivered or dead.
   */
  async claimHead(lane: Lane, claimMs: number): Promise<Claim> {
    const result = await this.pool.query<ClaimRow>({
      name: 'deliveries.claim-head',
      text: `WITH ${HEAD_CLAIM} ${CLAIM_RESULT}`,
      values: [lane.tenantId, lane.taskId, lane.configId, claimMs],
    });
    return claimOf(lane, result.rows[0]);
  }

  /**
   * Records a final outcome (delivered or dead) of a claimed attempt and, in the same statement, claims the
   * lane's next delivery: one round trip per delivery while a lane has work. Nothing is claimed when the
   * attempt's claim was superseded (the head is then someone else's); the result is then `later` or `empty`
   * as {@link claimHead} would say.
   */
  async settleAndClaimNext(
    delivery: ClaimedDelivery,
    settlement: Extract<Settlement, { kind: 'delivered' | 'dead' }>,
    claimMs: number,
  ): Promise<{ settled: boolean; next: Claim }> {
    const { lane } = delivery;
    const result = await this.pool.query<Partial<ClaimRow> & { settled: boolean }>({
      name: 'deliveries.settle-claim-next',
      text: `WITH settled AS (
               UPDATE ops.push_deliveries
                  SET state = $7, claimed_until = NULL, last_status = $8, last_error = $9,
                      finished_at = clock_timestamp()
                WHERE delivery_id = $5 AND attempts = $6 AND state = 'sending'
                RETURNING delivery_id
             ), ${HEAD_CLAIM_OF(true)}
             SELECT s.settled, head.delivery_id, head.state,
                    coalesce(claimed.attempts, head.attempts) AS attempts, head.due,
                    claimed.delivery_id IS NOT NULL AS claimed, claimed.generation, claimed.body,
                    pc.url, pc.token, pc.authentication
               FROM (SELECT EXISTS (SELECT 1 FROM settled) AS settled) s
               LEFT JOIN head ON true
               LEFT JOIN claimed ON claimed.delivery_id = head.delivery_id
               LEFT JOIN ops.push_configs pc
                 ON pc.tenant_id = $1 AND pc.task_id = $2 AND pc.config_id = $3`,
      values: [
        lane.tenantId,
        lane.taskId,
        lane.configId,
        claimMs,
        delivery.deliveryId,
        delivery.attempt,
        settlement.kind,
        settlement.status,
        settlement.kind === 'dead' ? settlement.error.slice(0, 1_000) : null,
      ],
    });
    const row = result.rows[0];
    const settled = row?.settled === true;
    const head = row?.delivery_id ? (row as ClaimRow) : undefined;
    return { settled, next: settled ? claimOf(lane, head) : await this.claimHead(lane, claimMs) };
  }

  /**
   * Records how an attempt ended, if its claim is still the current one (same attempt, still `sending`).
   * Returns false when someone else's claim superseded it (this attempt's outcome then counts for nothing).
   */
  async settle(delivery: ClaimedDelivery, settlement: Settlement): Promise<boolean> {
    const result = await this.pool.query({
      name: 'deliveries.settle',
      text: `UPDATE ops.push_deliveries
                SET state = $3, claimed_until = NULL, last_status = $4, last_error = $5,
                    next_attempt_at = coalesce($6, next_attempt_at),
                    finished_at = CASE WHEN $3 = 'pending' THEN NULL ELSE clock_timestamp() END
              WHERE delivery_id = $1 AND attempts = $2 AND state = 'sending'`,
      values: [
        delivery.deliveryId,
        delivery.attempt,
        settlement.kind === 'retry' ? 'pending' : settlement.kind,
        settlement.status,
        settlement.kind === 'delivered' ? null : settlement.error.slice(0, 1_000),
        settlement.kind === 'retry' ? settlement.at : null,
      ],
    });
    return (result.rowCount ?? 0) > 0;
  }

  /** Gives a claimed attempt back unmade (its host was busy): pending again, the attempt not counted. */
  async unclaim(delivery: ClaimedDelivery): Promise<void> {
    await this.pool.query({
      name: 'deliveries.unclaim',
      text: `UPDATE ops.push_deliveries
                SET state = 'pending', attempts = attempts - 1, claimed_until = NULL
              WHERE delivery_id = $1 AND attempts = $2 AND state = 'sending'`,
      values: [delivery.deliveryId, delivery.attempt],
    });
  }

  /** The head of every lane with an open delivery, and when it is due. */
  async openHeads(): Promise<OpenHead[]> {
    const result = await this.pool.query<{
      delivery_id: string;
      tenant_id: string;
      task_id: string;
      config_id: string;
      state: 'pending' | 'sending';
      attempts: number;
      due: Date;
    }>({
      name: 'deliveries.open-heads',
      text: `SELECT DISTINCT ON (tenant_id, task_id, config_id)
                    delivery_id, tenant_id, task_id, config_id, state, attempts,
                    CASE state WHEN 'pending' THEN next_attempt_at ELSE claimed_until END AS due
               FROM ops.push_deliveries
              WHERE state IN ('pending', 'sending')
              ORDER BY tenant_id, task_id, config_id, generation`,
    });
    return result.rows.map((row) => ({
      lane: { tenantId: row.tenant_id, taskId: row.task_id, configId: row.config_id },
      deliveryId: row.delivery_id,
      state: row.state,
      attempts: row.attempts,
      due: row.due,
    }));
  }

  /** A tenant's deliveries (of one task, in one state, when given), newest first, `limit` after `before`. */
  async list(filter: {
    tenantId: string;
    taskId?: string;
    state?: DeliveryState;
    limit: number;
  }): Promise<DeliveryRecord[]> {
    const result = await this.pool.query<DeliveryRow>({
      name: 'deliveries.list',
      text: `SELECT delivery_id, tenant_id, task_id, config_id, generation, state, attempts, next_attempt_at,
                    last_status, last_error, created_at, finished_at
               FROM ops.push_deliveries
              WHERE tenant_id = $1 AND ($2::text IS NULL OR task_id = $2) AND ($3::text IS NULL OR state = $3)
              ORDER BY created_at DESC, delivery_id
              LIMIT $4`,
      values: [filter.tenantId, filter.taskId ?? null, filter.state ?? null, filter.limit],
    });
    return result.rows.map(recordOf);
  }

  /**
   * Sends a dead delivery again: pending now, attempts from zero. Returns the delivery, or null when there is
   * no dead delivery with that id in the tenant.
   */
  async redrive(tenantId: string, id: string): Promise<DeliveryRecord | null> {
    const result = await this.pool.query<DeliveryRow>({
      name: 'deliveries.redrive',
      text: `UPDATE ops.push_deliveries
                SET state = 'pending', attempts = 0, next_attempt_at = clock_timestamp(), finished_at = NULL,
                    last_error = NULL, last_status = NULL
              WHERE tenant_id = $1 AND delivery_id = $2 AND state = 'dead'
              RETURNING delivery_id, tenant_id, task_id, config_id, generation, state, attempts,
                        next_attempt_at, last_status, last_error, created_at, finished_at`,
      values: [tenantId, id],
    });
    const row = result.rows[0];
    return row ? recordOf(row) : null;
  }
}

function recordOf(row: DeliveryRow): DeliveryRecord {
  const open = row.state === 'pending';
  return {
    deliveryId: row.delivery_id,
    tenantId: row.tenant_id,
    taskId: row.task_id,
    configId: row.config_id,
    generation: row.generation,
    state: row.state,
    attempts: row.attempts,
    nextAttemptAt: open ? row.next_attempt_at.toISOString() : null,
    lastStatus: row.last_status,
    lastError: row.last_error,
    createdAt: row.created_at.toISOString(),
    finishedAt: row.finished_at?.toISOString() ?? null,
  };
}

/**
 * The claim of a lane's head ($1 tenant, $2 task, $3 config, $4 claim ms): the oldest open delivery, locked
 * (never skipped: a later one must not overtake it), claimed when it is due. With a `settled` CTE before it
 * (the settle of the attempt just made, $5 its delivery), that delivery is no longer open: all parts of one
 * statement see the same snapshot, so it is left out by id, and nothing is claimed unless the settle took.
 */
const HEAD_CLAIM_OF = (afterSettle: boolean): string => `head AS (
    SELECT delivery_id, state, attempts,
           CASE state WHEN 'pending' THEN next_attempt_at ELSE claimed_until END AS due
      FROM ops.push_deliveries
     WHERE tenant_id = $1 AND task_id = $2 AND config_id = $3 AND state IN ('pending', 'sending')${
       afterSettle ? ' AND delivery_id <> $5 AND EXISTS (SELECT 1 FROM settled)' : ''
     }
     ORDER BY generation
     LIMIT 1
       FOR UPDATE
  ), claimed AS (
    UPDATE ops.push_deliveries d
       SET state = 'sending', attempts = d.attempts + 1,
           claimed_until = clock_timestamp() + make_interval(secs => $4::integer / 1000.0)
      FROM head
     WHERE d.delivery_id = head.delivery_id AND head.due <= clock_timestamp()
     RETURNING d.delivery_id, d.generation, d.attempts, d.body
  )`;
const HEAD_CLAIM = HEAD_CLAIM_OF(false);

/** The head, whether it was claimed, and the webhook's current settings. */
const CLAIM_RESULT = `SELECT head.delivery_id, head.state, coalesce(claimed.attempts, head.attempts) AS attempts,
         head.due, claimed.delivery_id IS NOT NULL AS claimed, claimed.generation, claimed.body,
         pc.url, pc.token, pc.authentication
    FROM head
    LEFT JOIN claimed ON claimed.delivery_id = head.delivery_id
    LEFT JOIN ops.push_configs pc
      ON pc.tenant_id = $1 AND pc.task_id = $2 AND pc.config_id = $3`;

interface ClaimRow {
  delivery_id: string;
  generation: number;
  state: DeliveryState;
  attempts: number;
  due: Date;
  claimed: boolean;
  body: string | null;
  url: string | null;
  token: string | null;
  authentication: { scheme: string; credentials?: string } | null;
}

function claimOf(lane: Lane, row: ClaimRow | undefined): Claim {
  if (!row) {
    return { kind: 'empty' };
  }
  if (!row.claimed || row.body === null) {
    const head: OpenHead = {
      lane,
      deliveryId: row.delivery_id,
      state: row.state === 'sending' ? 'sending' : 'pending',
      attempts: row.attempts,
      due: row.due,
    };
    return { kind: 'later', at: row.due, head };
  }
  return {
    kind: 'claimed',
    delivery: {
      deliveryId: row.delivery_id,
      lane,
      generation: row.generation,
      body: row.body,
      attempt: row.attempts,
      url: row.url ?? '',
      token: row.token,
      authentication: row.authentication,
    },
  };
}

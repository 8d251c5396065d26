import type { TenantId } from '@lib/ids';
import type { DeliveryState, Lane } from '@lib/push';
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
  tenantId: TenantId;
  taskId: string;
  generation: number;
  eventId: string;
  /** The StreamResponse ProtoJSON, the exact bytes every webhook of the task gets. */
  body: string;
  /** The event's W3C trace context (its record's `traceparent` header), if it has one. */
  traceparent: string | null;
}

/** The deliveries of one (task, config), as the lane jobs name them (`@lib/push`). */
export type { Lane };

/** A lane's identity as a map key. */
export function laneKey(lane: Lane): string {
  return JSON.stringify([lane.tenantId, lane.taskId, lane.configId]);
}

/** A delivery {@link DeliveryStore.derive} inserted. */
export interface DerivedDelivery {
  deliveryId: string;
  lane: Lane;
  /** An older delivery of its lane was open: whoever settles that one goes on to this one. */
  behind: boolean;
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
  /** The trace context of the event it delivers, if it has one. */
  traceparent: string | null;
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

/** The final outcome of a claimed attempt, as {@link DeliveryStore.settleAndClaimNextMany} records it. */
export interface FinalOutcome {
  delivery: ClaimedDelivery;
  settlement: Extract<Settlement, { kind: 'delivered' | 'dead' }>;
}

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
   * event, not removed before it). Events seen before insert nothing. Returns the deliveries inserted now,
   * each `behind` an open delivery of its lane or not.
   *
   * A delivery behind an open one needs no lane run of its own: whoever settles that one goes on through the
   * lane. To make sure they see the new delivery, the insert locks the open head of each lane it adds to
   * (`FOR SHARE`, in (tenant, task, config) order as the claims do): a settle of that head waits for the
   * insert's commit, and the settling run claims again with a statement of its own after a settle that found
   * nothing next (its snapshot may predate the insert). A head settled before the lock no longer counts as
   * open, and the delivery is then not behind.
   */
  async derive(events: readonly FeedEvent[]): Promise<DerivedDelivery[]> {
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
    const inserted = await this.pool.query<{ delivery_id: string; behind: boolean }>({
      name: 'deliveries.insert',
      text: `WITH inserted AS (
               INSERT INTO ops.push_deliveries
                 (delivery_id, tenant_id, task_id, config_id, generation, event_id, body, traceparent)
               SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::integer[], $6::uuid[],
                                    $7::text[], $8::text[])
               ON CONFLICT DO NOTHING
               RETURNING delivery_id, tenant_id, task_id, config_id
             ), behind AS (
               SELECT r.tenant_id, r.task_id, r.config_id
                 FROM (SELECT DISTINCT tenant_id, task_id, config_id FROM inserted
                        ORDER BY tenant_id, task_id, config_id) r
                CROSS JOIN LATERAL (
                  SELECT 1
                    FROM ops.push_deliveries d
                   WHERE d.tenant_id = r.tenant_id AND d.task_id = r.task_id AND d.config_id = r.config_id
                     AND d.state IN ('pending', 'sending')
                   ORDER BY d.generation
                   LIMIT 1
                     FOR SHARE
                ) h
             )
             SELECT i.delivery_id, b.task_id IS NOT NULL AS behind
               FROM inserted i
               LEFT JOIN behind b
                 ON b.tenant_id = i.tenant_id AND b.task_id = i.task_id AND b.config_id = i.config_id`,
      values: [
        rows.map((r) => r.id),
        rows.map((r) => r.event.tenantId),
        rows.map((r) => r.event.taskId),
        rows.map((r) => r.configId),
        rows.map((r) => r.event.generation),
        rows.map((r) => r.event.eventId),
        rows.map((r) => r.event.body),
        rows.map((r) => r.event.traceparent),
      ],
    });
    const fresh = new Map(inserted.rows.map((r) => [r.delivery_id, r.behind]));
    return rows.flatMap((r) => {
      const behind = fresh.get(r.id);
      return behind === undefined
        ? []
        : [
            {
              deliveryId: r.id,
              lane: { tenantId: r.event.tenantId, taskId: r.event.taskId, configId: r.configId },
              behind,
            },
          ];
    });
  }

  /**
   * Claims, for each lane, its oldest open delivery when it is due (pending and past its backoff, or claimed
   * by someone whose claim expired) for `claimMs`: one statement for all the lanes, one result per lane, in
   * their order. Only a head is ever claimed: a later event waits until the earlier one is delivered or dead.
   * The heads are locked (`FOR UPDATE`, never skipped) lane by lane in (tenant, task, config) order, the one
   * order every statement of every replica takes them in, so concurrent statements wait for each other
   * instead of deadlocking. A lane may appear once per call.
   */
  async claimHeads(lanes: readonly Lane[], claimMs: number): Promise<Claim[]> {
    if (lanes.length === 0) {
      return [];
    }
    assertDistinct(lanes);
    const result = await this.pool.query<ClaimRow & { i: number }>({
      name: 'deliveries.claim-heads',
      text: CLAIM_HEADS,
      values: [...laneColumns(lanes), claimMs],
    });
    const rows = new Map(result.rows.map((row) => [row.i, row]));
    return lanes.map((lane, index) => claimOf(lane, rows.get(index + 1)));
  }

  /**
   * Records final outcomes (delivered or dead) of claimed attempts and, in the same statement, claims the
   * next delivery of each lane whose outcome counted: one round trip for many lanes while they have work.
   * An outcome counts only while its attempt's claim is the current one (same attempt, still `sending`);
   * when it did not, nothing is claimed in that lane by this statement (its head is someone else's) and a
   * second statement answers as {@link claimHeads} would. Locks are taken as in {@link claimHeads}, the
   * settled delivery and then the lane's next head, lane by lane. A lane may appear once per call.
   */
  async settleAndClaimNextMany(
    outcomes: readonly FinalOutcome[],
    claimMs: number,
  ): Promise<{ settled: boolean; next: Claim }[]> {
    if (outcomes.length === 0) {
      return [];
    }
    const lanes = outcomes.map((o) => o.delivery.lane);
    assertDistinct(lanes);
    const result = await this.pool.query<Partial<ClaimRow> & { i: number; settled: boolean }>({
      name: 'deliveries.settle-and-claim-next',
      text: SETTLE_AND_CLAIM_NEXT,
      values: [
        ...laneColumns(lanes),
        outcomes.map((o) => o.delivery.deliveryId),
        outcomes.map((o) => o.delivery.attempt),
        outcomes.map((o) => o.settlement.kind),
        outcomes.map((o) => o.settlement.status),
        outcomes.map((o) =>
          o.settlement.kind === 'dead' ? o.settlement.error.slice(0, 1_000) : null,
        ),
        claimMs,
      ],
    });
    const rows = new Map(result.rows.map((row) => [row.i, row]));
    const answers = lanes.map((lane, index) => {
      const row = rows.get(index + 1);
      const settled = row?.settled === true;
      const head = row?.delivery_id ? (row as ClaimRow) : undefined;
      return { lane, settled, next: settled ? claimOf(lane, head) : null };
    });
    const superseded = answers.filter((a) => a.next === null).map((a) => a.lane);
    const heads = await this.claimHeads(superseded, claimMs);
    let k = 0;
    return answers.map(({ settled, next }) => ({
      settled,
      next: next ?? heads[k++] ?? { kind: 'empty' },
    }));
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

  /** Deliveries not yet delivered or dead, of every tenant (for metrics). */
  async backlog(): Promise<number> {
    const result = await this.pool.query<{ open: number }>({
      name: 'deliveries.backlog',
      text: `SELECT count(*)::int AS open FROM ops.push_deliveries WHERE state IN ('pending', 'sending')`,
    });
    return result.rows[0]?.open ?? 0;
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
}

/** The lanes as the `$1` tenants, `$2` tasks and `$3` configs of a statement that unnests them together. */
function laneColumns(lanes: readonly Lane[]): [string[], string[], string[]] {
  return [lanes.map((l) => l.tenantId), lanes.map((l) => l.taskId), lanes.map((l) => l.configId)];
}

/**
 * The head of a request's lane (`r`: tenant_id, task_id, config_id): its oldest open delivery, locked (never
 * skipped: a later one must not overtake it), and when it is due. `exclude` leaves a delivery out by id: the
 * one the same statement settles, which its snapshot still shows open.
 */
const HEAD_OF = (exclude = ''): string => `SELECT d.delivery_id, d.state, d.attempts,
         CASE d.state WHEN 'pending' THEN d.next_attempt_at ELSE d.claimed_until END AS due
    FROM ops.push_deliveries d
   WHERE d.tenant_id = r.tenant_id AND d.task_id = r.task_id AND d.config_id = r.config_id
     AND d.state IN ('pending', 'sending')${exclude ? ` AND d.delivery_id <> ${exclude}` : ''}
   ORDER BY d.generation
   LIMIT 1
     FOR UPDATE`;

/**
 * {@link DeliveryStore.claimHeads}: $1–$3 the lanes' tenants, tasks and configs, $4 the claim's ms. `head`
 * locks the heads in (tenant, task, config) order (a nested loop over the sorted requests takes them one lane
 * after the other); `claimed` only updates rows `head` locked.
 */
const CLAIM_HEADS = `WITH req AS (
    SELECT *
      FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS r(tenant_id, task_id, config_id, i)
  ), head AS (
    SELECT r.i, h.delivery_id, h.state, h.attempts, h.due
      FROM (SELECT * FROM req ORDER BY tenant_id, task_id, config_id) r
     CROSS JOIN LATERAL (${HEAD_OF()}) h
  ), claimed AS (
    UPDATE ops.push_deliveries d
       SET state = 'sending', attempts = d.attempts + 1,
           claimed_until = clock_timestamp() + make_interval(secs => $4::integer / 1000.0)
      FROM head
     WHERE d.delivery_id = head.delivery_id AND head.due <= clock_timestamp()
     RETURNING head.i, d.generation, d.attempts, d.body, d.traceparent
  )
  SELECT head.i::integer AS i, head.delivery_id, head.state, coalesce(claimed.attempts, head.attempts) AS attempts, head.due,
         claimed.i IS NOT NULL AS claimed, claimed.generation, claimed.body, claimed.traceparent, pc.url,
         pc.token, pc.authentication
    FROM head
    JOIN req ON req.i = head.i
    LEFT JOIN claimed ON claimed.i = head.i
    LEFT JOIN ops.push_configs pc
      ON pc.tenant_id = req.tenant_id AND pc.task_id = req.task_id AND pc.config_id = req.config_id`;

/**
 * {@link DeliveryStore.settleAndClaimNextMany}: $1–$3 the lanes, $4 the settled deliveries, $5 their attempts
 * (the fence), $6 the outcomes (`delivered`, `dead`), $7 the statuses, $8 the errors, $9 the claim's ms.
 * `head` locks, lane by lane in (tenant, task, config) order, the settled delivery if its claim is still the
 * attempt's (`settling`), then the lane's next head; `settled` and `claimed` only update rows `head` locked.
 * All parts of one statement see one snapshot, in which the settled delivery is still open: it is left out
 * of its lane's head by id, and a lane's head is claimed only if that lane's settle took.
 */
const SETTLE_AND_CLAIM_NEXT = `WITH req AS (
    SELECT *
      FROM unnest($1::text[], $2::text[], $3::text[], $4::uuid[], $5::integer[], $6::text[], $7::integer[],
                  $8::text[])
           WITH ORDINALITY AS r(tenant_id, task_id, config_id, settling, attempt, outcome, status, error, i)
  ), head AS (
    SELECT r.i, s.delivery_id AS settling, h.delivery_id, h.state, h.attempts, h.due
      FROM (SELECT * FROM req ORDER BY tenant_id, task_id, config_id) r
      LEFT JOIN LATERAL (
        SELECT d.delivery_id
          FROM ops.push_deliveries d
         WHERE d.delivery_id = r.settling AND d.attempts = r.attempt AND d.state = 'sending'
           FOR UPDATE
      ) s ON true
      LEFT JOIN LATERAL (${HEAD_OF('r.settling')}) h ON true
  ), settled AS (
    UPDATE ops.push_deliveries d
       SET state = req.outcome, claimed_until = NULL, last_status = req.status, last_error = req.error,
           finished_at = clock_timestamp()
      FROM head
      JOIN req ON req.i = head.i
     WHERE d.delivery_id = head.settling AND d.attempts = req.attempt AND d.state = 'sending'
     RETURNING req.i
  ), claimed AS (
    UPDATE ops.push_deliveries d
       SET state = 'sending', attempts = d.attempts + 1,
           claimed_until = clock_timestamp() + make_interval(secs => $9::integer / 1000.0)
      FROM head
     WHERE d.delivery_id = head.delivery_id AND head.due <= clock_timestamp()
       AND head.i IN (SELECT i FROM settled)
     RETURNING head.i, d.generation, d.attempts, d.body, d.traceparent
  )
  SELECT head.i::integer AS i, head.i IN (SELECT i FROM settled) AS settled, head.delivery_id, head.state,
         coalesce(claimed.attempts, head.attempts) AS attempts, head.due, claimed.i IS NOT NULL AS claimed,
         claimed.generation, claimed.body, claimed.traceparent, pc.url, pc.token, pc.authentication
    FROM head
    JOIN req ON req.i = head.i
    LEFT JOIN claimed ON claimed.i = head.i
    LEFT JOIN ops.push_configs pc
      ON pc.tenant_id = req.tenant_id AND pc.task_id = req.task_id AND pc.config_id = req.config_id`;

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
  traceparent: string | null;
}

/** Refuses a lane twice in one statement: both requests would take the same head as their own. */
function assertDistinct(lanes: readonly Lane[]): void {
  if (new Set(lanes.map(laneKey)).size !== lanes.length) {
    throw new Error('a lane may appear once per statement');
  }
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
      traceparent: row.traceparent,
    },
  };
}

import type { PushDispatcherConfig } from '@lib/config';
import { isTransientDatabaseError, retryDelayMs } from '@lib/event-store';
import { metrics } from '@lib/observability';
import { HostLimiter, retryDelay, WebhookSender, type DeliveryResult } from '@lib/push';
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { Batcher, type BatchLimits } from './batcher';
import { inDeliverSpan } from './deliver-span';
import {
  DeliveryStore,
  laneKey,
  type Claim,
  type ClaimedDelivery,
  type FinalOutcome,
  type Lane,
  type Settlement,
} from './delivery-store';
import {
  attemptJobId,
  headRun,
  LANE_QUEUE,
  LaneQueue,
  redisConnection,
  type LaneRun,
} from './lane-queue';
import { PUSH_CONFIG } from './tokens';

/** Deliveries one job sends before it hands the lane to a new job (fairness between lanes). */
const DELIVERIES_PER_RUN = 100;
/** Settled deliveries a replica remembers, to drop their now pointless first jobs without a query. */
const SETTLED_REMEMBERED = 100_000;
/** The job of a delivery's first attempt, as the feed consumer schedules it (`attemptJobId(id, 0)`). */
const FIRST_ATTEMPT_JOB = /^a-([0-9a-f-]{36})-0$/;
/**
 * Wait before a lane whose host is at its concurrency limit is tried again; also the longest a run waits for
 * a slot of a host that gives them back fast.
 */
const HOST_BUSY_DELAY_MS = 100;
/**
 * Claims (and settlements) per statement, and statements of each kind at once: two claim and two settle
 * statements, the feed's inserts and the reconciler stay within the default pool of ten connections.
 */
const STATEMENTS: BatchLimits = { maxBatch: 200, maxInFlight: 2 };

/**
 * The headers of a delivery (docs/push.md): the signature and content headers are the sender's;
 * `traceparent`, the W3C trace context of the event (or of the delivery's span), when there is one.
 */
export function deliveryHeaders(
  delivery: ClaimedDelivery,
  traceparent = delivery.traceparent,
): Record<string, string> {
  const headers: Record<string, string> = {
    'X-A2A-Delivery-Id': delivery.deliveryId,
    'X-A2A-Task-Id': delivery.lane.taskId,
    'X-A2A-Generation': String(delivery.generation),
    'User-Agent': 'a2a-platform-push/1',
    ...(traceparent ? { traceparent } : {}),
  };
  const auth = delivery.authentication;
  if (auth) {
    headers['Authorization'] =
      auth.credentials !== undefined ? `${auth.scheme} ${auth.credentials}` : auth.scheme;
  }
  if (delivery.token !== null) {
    headers['X-A2A-Notification-Token'] = delivery.token;
  }
  return headers;
}

/**
 * Runs lane jobs (docs/adr/0010-push-notifications.md): claims the oldest open delivery of the job's lane,
 * POSTs it, records the outcome, and goes on with the next one until the lane is empty, waits (backoff, or
 * another runner's claim) or has had its share. A retry is a delayed job at the backoff's end; after
 * PUSH_MAX_ATTEMPTS, or on a response that another attempt cannot change, the delivery is dead and the lane
 * moves on. Every job id names the attempt it makes, so the same attempt is never scheduled twice.
 */
@Injectable()
export class LaneRunner implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(LaneRunner.name);
  private readonly limiter: HostLimiter;
  /** Lanes a run of this replica is driving, and whether a job of theirs arrived meanwhile. */
  private readonly driving = new Map<string, { more: boolean }>();
  /** Deliveries this replica recently settled (delivered or dead), oldest first. */
  private readonly settled = new Set<string>();
  /** The runs' claims of their lanes' heads, many lanes per statement. */
  private readonly claims: Batcher<Lane, Claim>;
  /** The runs' final outcomes with their lanes' next claims, many lanes per statement. */
  private readonly settlements: Batcher<FinalOutcome, { settled: boolean; next: Claim }>;
  private worker: Worker<Lane> | null = null;
  private connection: Redis | null = null;

  constructor(
    @Inject(PUSH_CONFIG) private readonly config: PushDispatcherConfig,
    private readonly store: DeliveryStore,
    private readonly lanes: LaneQueue,
    private readonly sender: WebhookSender,
  ) {
    this.limiter = new HostLimiter(config.PUSH_HOST_CONCURRENCY);
    const claimMs = config.PUSH_CLAIM_TIMEOUT_MS;
    this.claims = new Batcher((lanes) => store.claimHeads(lanes, claimMs), STATEMENTS);
    this.settlements = new Batcher(
      (outcomes) => store.settleAndClaimNextMany(outcomes, claimMs),
      STATEMENTS,
    );
  }

  onApplicationBootstrap(): void {
    this.connection = redisConnection(this.config.REDIS_URL, 'worker');
    this.worker = new Worker<Lane>(LANE_QUEUE, (job) => this.run(job.data, job.id ?? ''), {
      connection: this.connection,
      prefix: this.config.PUSH_QUEUE_PREFIX,
      concurrency: this.config.PUSH_WORKER_CONCURRENCY,
    });
    this.worker.on('error', (error) => this.logger.warn(`lane worker: ${String(error)}`));
  }

  /**
   * Tells the run of the lane in progress in this replica, if there is one, that its lane got new deliveries
   * (committed already): it looks again before it ends, or schedules the lane once more if it is on its way
   * out. Returns whether there was such a run; without one, the caller must schedule the lane itself.
   */
  nudge(lane: Lane): boolean {
    const running = this.driving.get(laneKey(lane));
    if (running) {
      running.more = true;
    }
    return running !== undefined;
  }

  /**
   * Drives one lane; never throws (a failure re-schedules the lane). A lane this replica is driving already
   * is not claimed a second time: the job only nudges the run in progress ({@link nudge}).
   */
  async run(lane: Lane, jobId: string): Promise<void> {
    // The first job of a delivery this replica has settled since: the run that settled it went on through
    // the lane, and every later delivery has a job of its own, was announced to a run, or is reached by the
    // run that settles the one ahead of it. Nothing to claim.
    const first = FIRST_ATTEMPT_JOB.exec(jobId)?.[1];
    if (first !== undefined && this.settled.has(first)) {
      return;
    }
    if (this.nudge(lane)) {
      return;
    }
    const key = laneKey(lane);
    const state = { more: false };
    this.driving.set(key, state);
    try {
      await this.drive(lane, jobId, state);
    } finally {
      // One synchronous step with the last look at `more`: a nudge either came before it and is seen here,
      // or comes after and finds no run (its caller schedules the lane). A nudge after the run's last claim
      // was submitted, when the run is on its way out (emptied, waiting, re-queued, failed), is a new job:
      // the run's own next job, if it scheduled one, may have started before that delivery was committed.
      this.driving.delete(key);
      if (state.more) {
        await this.lanes.schedule([{ lane, jobId: `${jobId}-m${Date.now()}` }]);
      }
    }
  }

  private async drive(lane: Lane, jobId: string, state: { more: boolean }): Promise<void> {
    // A nudge before a claim is submitted is for a delivery committed before the claim's statement starts,
    // which therefore sees it: only a nudge after the submission asks for another look.
    const claimHead = (): Promise<Claim> => {
      state.more = false;
      return this.claims.submit(lane);
    };
    try {
      let claim = await claimHead();
      for (let sent = 1; ; sent++) {
        while (claim.kind === 'empty' && state.more) {
          // The lane was nudged while it ran: its delivery may have been committed after the last claim.
          claim = await claimHead();
        }
        if (claim.kind === 'empty') {
          return;
        }
        if (claim.kind === 'later') {
          await this.resume(headRun(claim.head), jobId);
          return;
        }
        const delivery = claim.delivery;
        const release = await this.limiter.acquire(hostOf(delivery.url), HOST_BUSY_DELAY_MS);
        if (!release) {
          // The host is busy, and no slot is expected soon: give the attempt back and come again shortly,
          // without holding a worker slot.
          await this.store.unclaim(delivery);
          const at = new Date(Date.now() + HOST_BUSY_DELAY_MS * (1 + Math.random()));
          const retry = `${attemptJobId(delivery.deliveryId, delivery.attempt - 1)}-h${Date.now()}`;
          await this.lanes.schedule([{ lane, jobId: retry, at }]);
          return;
        }
        let result: DeliveryResult;
        try {
          result = await inDeliverSpan(delivery, (traceparent) =>
            this.sender.send({
              tenant: lane.tenantId,
              url: delivery.url,
              body: Buffer.from(delivery.body, 'utf8'),
              headers: deliveryHeaders(delivery, traceparent),
              signed: {
                deliveryId: delivery.deliveryId,
                taskId: lane.taskId,
                generation: delivery.generation,
              },
            }),
          );
        } finally {
          release();
        }
        const settlement = this.settlement(delivery, result);
        metrics.pushAttempts.inc({ outcome: settlement.kind });
        if (settlement.kind === 'retry') {
          await this.store.settle(delivery, settlement);
          const next = attemptJobId(delivery.deliveryId, delivery.attempt);
          await this.resume({ lane, jobId: next, at: settlement.at }, jobId);
          return;
        }
        if (settlement.kind === 'dead') {
          metrics.pushDeadLetters.inc();
          this.logger.warn(
            `delivery ${delivery.deliveryId} (task ${lane.taskId}, config ${lane.configId}) is dead ` +
              `after ${delivery.attempt} attempt(s): ${settlement.error}`,
          );
        }
        if (sent >= DELIVERIES_PER_RUN) {
          // Its share is sent: the lane goes on in a new job, behind the others waiting.
          if (await this.store.settle(delivery, settlement)) {
            this.remember(delivery.deliveryId);
          }
          await this.lanes.schedule([{ lane, jobId: `${jobId}-n${Date.now()}` }]);
          return;
        }
        // The outcome and the lane's next claim in one round trip, shared with the other lanes settling.
        state.more = false;
        const outcome = await this.settlements.submit({ delivery, settlement });
        if (outcome.settled) {
          this.remember(delivery.deliveryId);
        }
        // Nothing next after a settle that took: a delivery inserted behind this one while the settle waited
        // for the insert's lock is newer than the statement's snapshot, and has no job of its own
        // (DeliveryStore.derive). A claim of its own sees it. (A settle that did not take was answered by a
        // claim of its own already.)
        claim = outcome.settled && outcome.next.kind === 'empty' ? await claimHead() : outcome.next;
      }
    } catch (error) {
      if (!isTransientDatabaseError(error)) {
        this.logger.error(`lane ${JSON.stringify(lane)}: ${String(error)}`);
      }
      const at = new Date(Date.now() + retryDelayMs(3));
      await this.lanes.schedule([{ lane, jobId: `${jobId}-e${Date.now()}`, at }]);
    }
  }

  private remember(deliveryId: string): void {
    this.settled.add(deliveryId);
    if (this.settled.size > SETTLED_REMEMBERED) {
      const oldest = this.settled.values().next();
      if (!oldest.done) {
        this.settled.delete(oldest.value);
      }
    }
  }

  /** How an attempt ends the delivery: delivered, dead, or another attempt after the backoff. */
  private settlement(delivery: ClaimedDelivery, result: DeliveryResult): Settlement {
    switch (result.outcome) {
      case 'delivered':
        return { kind: 'delivered', status: result.status };
      case 'rejected':
        return { kind: 'dead', status: result.status ?? null, error: result.error };
      case 'retry': {
        if (delivery.attempt >= this.config.PUSH_MAX_ATTEMPTS) {
          return {
            kind: 'dead',
            status: result.status ?? null,
            error: `${result.error} (attempt ${delivery.attempt} of ${this.config.PUSH_MAX_ATTEMPTS})`,
          };
        }
        const delay = retryDelay(
          delivery.attempt,
          result.retryAfterMs,
          this.config.PUSH_BACKOFF_BASE_MS,
          this.config.PUSH_BACKOFF_CAP_MS,
          Math.random,
        );
        return {
          kind: 'retry',
          at: new Date(Date.now() + delay),
          status: result.status ?? null,
          error: result.error,
        };
      }
    }
  }

  /**
   * Schedules the lane's next run. When it has this very job's id (a job cannot be scheduled while it runs:
   * BullMQ would ignore it), a variant of the id.
   */
  private async resume(run: LaneRun, jobId: string): Promise<void> {
    await this.lanes.schedule([
      run.jobId === jobId ? { ...run, jobId: `${run.jobId}-w${Date.now()}` } : run,
    ]);
  }

  async onModuleDestroy(): Promise<void> {
    await this.worker?.close().catch(() => undefined);
    this.connection?.disconnect();
    this.sender.close();
  }
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return url;
  }
}

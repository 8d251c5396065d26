import type { PushDispatcherConfig } from '@lib/config';
import { isTransientDatabaseError, retryDelayMs } from '@lib/event-store';
import { isId, tenantIdOf } from '@lib/ids';
import { createKafka } from '@lib/kafka';
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { logLevel, type Consumer, type EachBatchPayload, type KafkaMessage } from 'kafkajs';
import { setTimeout as sleep } from 'node:timers/promises';
import { DeliveryStore, laneKey, type DerivedDelivery, type FeedEvent } from './delivery-store';
import { attemptJobId, LaneQueue, type LaneRun } from './lane-queue';
import { LaneRunner } from './lane-runner';
import { PUSH_CONFIG } from './tokens';

/** Records handled per statement pair (applicable configs, inserts). */
const CHUNK = 500;
/** How often resolved offsets are committed. */
const COMMIT_INTERVAL_MS = 1_000;

/**
 * One lane run per lane with new deliveries that are not behind an open one: a run goes on through its lane
 * until it is empty, so one job per lane is enough, named after one of the lane's new deliveries (its first
 * attempt); a lane whose head was open already goes on when that head is settled (DeliveryStore.derive).
 */
export function lanesOf(derived: readonly DerivedDelivery[]): LaneRun[] {
  const runs = new Map<string, LaneRun>();
  for (const { deliveryId, lane, behind } of derived) {
    const key = laneKey(lane);
    if (!behind && !runs.has(key)) {
      runs.set(key, { lane, jobId: attemptJobId(deliveryId, 0) });
    }
  }
  return [...runs.values()];
}

/**
 * Derives deliveries from the task-event feed (`a2a.task-events.v1`, docs/asyncapi.yaml): for every record
 * whose event a stream showed (`streamResponse` not null), one row per webhook of its task that applies, in
 * `ops.push_deliveries`; then one lane job per lane with new rows that are not behind an open one, unless
 * this replica is driving the lane (its run is nudged instead); then, and only then, the partition's offset
 * is committed. A crash before the commit replays the batch, whose inserts are then no-ops: at least once
 * into Postgres, exactly once as rows. Redis being away delays the jobs to the reconciler, never the
 * offsets.
 *
 * On kafkajs directly rather than Nest's Kafka transport: docs/adr/0010-push-notifications.md, "Evidence".
 */
@Injectable()
export class FeedConsumer implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(FeedConsumer.name);
  private readonly consumer: Consumer;
  private stopped = false;
  /** Member of its consumer group and fetching (for readiness); false while it connects or restarts. */
  joined = false;

  constructor(
    @Inject(PUSH_CONFIG) private readonly config: PushDispatcherConfig,
    private readonly store: DeliveryStore,
    private readonly lanes: LaneQueue,
    private readonly runner: LaneRunner,
  ) {
    const kafka = createKafka(config, {
      clientId: 'a2a-push-dispatcher',
      logLevel: logLevel.NOTHING,
      retry: { retries: 8, initialRetryTime: 200, maxRetryTime: 5_000 },
    });
    this.consumer = kafka.consumer({
      groupId: config.PUSH_CONSUMER_GROUP,
      // A dispatcher that died gives its partitions up after 10 s, not the default 30.
      sessionTimeout: 10_000,
      heartbeatInterval: 3_000,
      // Consumer failures (a broker restart, a rebalance) restart the consumer; nothing ends the process.
      retry: { retries: Number.MAX_SAFE_INTEGER, initialRetryTime: 300, maxRetryTime: 5_000 },
    });
  }

  onApplicationBootstrap(): void {
    const { GROUP_JOIN, CRASH, DISCONNECT, STOP } = this.consumer.events;
    this.consumer.on(GROUP_JOIN, () => (this.joined = true));
    for (const left of [CRASH, DISCONNECT, STOP]) {
      this.consumer.on(left, () => (this.joined = false));
    }
    void this.start();
  }

  private async start(): Promise<void> {
    for (let attempt = 1; !this.stopped; attempt++) {
      try {
        await this.consumer.connect();
        await this.consumer.subscribe({
          topic: this.config.TASK_EVENTS_TOPIC,
          // A group with no offsets (new, or expired) reads the whole retained feed: rows already derived
          // are not inserted again, and no event is skipped.
          fromBeginning: true,
        });
        await this.consumer.run({
          // kafkajs commits only offsets resolved after their rows were inserted; at most once a second.
          autoCommit: true,
          autoCommitInterval: COMMIT_INTERVAL_MS,
          eachBatchAutoResolve: false,
          eachBatch: (payload) => this.handle(payload),
        });
        return;
      } catch (error) {
        this.logger.warn(`feed consumer not started (${String(error)}); retrying`);
        await this.consumer.disconnect().catch(() => undefined);
        await sleep(retryDelayMs(attempt));
      }
    }
  }

  private async handle(payload: EachBatchPayload): Promise<void> {
    const { batch } = payload;
    for (let start = 0; start < batch.messages.length; start += CHUNK) {
      const chunk = batch.messages.slice(start, start + CHUNK);
      const events = chunk.flatMap((message) => this.feedEvent(message));
      for (let attempt = 1; ; attempt++) {
        if (!payload.isRunning() || payload.isStale()) {
          return;
        }
        try {
          const derived = await this.store.derive(events);
          // A lane this replica is driving needs no job: its run is told to look again (rows committed).
          await this.lanes.schedule(lanesOf(derived).filter((run) => !this.runner.nudge(run.lane)));
          break;
        } catch (error) {
          if (!isTransientDatabaseError(error)) {
            throw error;
          }
          // The database is away: hold the batch (and the offset) until it is back.
          await sleep(retryDelayMs(attempt));
          await payload.heartbeat();
        }
      }
      const last = chunk[chunk.length - 1];
      if (last) {
        payload.resolveOffset(last.offset);
      }
      await payload.commitOffsetsIfNecessary();
      await payload.heartbeat();
    }
  }

  /** The record's event when a stream showed it; a record that is not a task event is skipped (logged). */
  private feedEvent(message: KafkaMessage): FeedEvent[] {
    const value = parseRecord(message.value, headerText(message.headers?.['traceparent']));
    if (value === undefined) {
      this.logger.warn(`skipped a record that is not a task event (offset ${message.offset})`);
      return [];
    }
    return value;
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    await this.consumer.disconnect().catch(() => undefined);
  }
}

/** A record header's text (kafkajs hands headers over as buffers). */
function headerText(header: Buffer | string | (Buffer | string)[] | undefined): string | null {
  const first = Array.isArray(header) ? header[0] : header;
  return first === undefined ? null : first.toString();
}

/**
 * The deliverable event of a feed record (with the `traceparent` header of the record, if any): `[]` for a
 * record with nothing to deliver (no streamResponse), undefined for a value that is not a task-event record
 * of schema version 1.
 */
export function parseRecord(
  value: Buffer | null,
  traceparent: string | null = null,
): FeedEvent[] | undefined {
  let record: unknown;
  try {
    record = value ? JSON.parse(value.toString('utf8')) : undefined;
  } catch {
    return undefined;
  }
  if (typeof record !== 'object' || record === null) {
    return undefined;
  }
  const r = record as Record<string, unknown>;
  if (
    r['schema'] !== 'a2a-platform.task-event' ||
    r['schemaVersion'] !== 1 ||
    typeof r['tenantId'] !== 'string' ||
    !isId(r['tenantId']) ||
    typeof r['taskId'] !== 'string' ||
    typeof r['eventId'] !== 'string' ||
    typeof r['generation'] !== 'number' ||
    !Number.isInteger(r['generation']) ||
    r['generation'] < 1
  ) {
    return undefined;
  }
  const response = r['streamResponse'];
  if (response === null || response === undefined) {
    return [];
  }
  if (typeof response !== 'object') {
    return undefined;
  }
  return [
    {
      tenantId: tenantIdOf(r['tenantId']),
      taskId: r['taskId'],
      generation: r['generation'],
      eventId: r['eventId'],
      body: JSON.stringify(response),
      traceparent,
    },
  ];
}

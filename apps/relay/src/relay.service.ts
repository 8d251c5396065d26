import type { RelayConfig } from '@lib/config';
import { NoticeListener } from '@lib/event-store';
import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { Client, type Pool } from 'pg';
import { loadCheckpoint, readCommittedLog, saveCheckpoint, type LogCursor } from './log-reader';
import { TaskEventPublisher } from './task-event-publisher';
import { toTaskEventRecord } from './task-event-record';
import { RELAY_CONFIG, RELAY_PG_POOL } from './tokens';

const RETRY_MS = 1_000;

/**
 * Publishes the committed log to Kafka in commit-safe order: read a batch after the checkpoint, publish it,
 * wait for the broker's acknowledgement, then move the checkpoint. A crash between the last two steps
 * re-publishes that batch (at-least-once; consumers dedupe on (taskId, generation)). Relays sharing a name
 * elect one leader with a Postgres advisory lock; the others wait to take over.
 */
@Injectable()
export class RelayService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(RelayService.name);
  private readonly notices: NoticeListener;
  private running: Promise<void> | null = null;
  private stopping = false;
  private wake: () => void = () => undefined;
  private leaderClient: Client | null = null;
  /** Events published since start (for benchmarks and logs). */
  published = 0;

  constructor(
    @Inject(RELAY_PG_POOL) private readonly pool: Pool,
    private readonly publisher: TaskEventPublisher,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
  ) {
    this.notices = new NoticeListener(config.POSTGRES_URL, (m) => this.logger.warn(m));
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.notices.start();
    this.notices.subscribe((notice) => {
      if (notice.k === 'task') {
        this.wake();
      }
    });
    this.running = this.run();
  }

  /** Before the pool closes: the batch in flight is published and checkpointed first. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    this.wake();
    await this.running;
    await this.notices.stop();
    await this.leaderClient?.end().catch(() => undefined);
    await this.publisher.disconnect().catch(() => undefined);
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      try {
        await this.lead();
      } catch (error) {
        this.logger.warn(`relay interrupted, retrying: ${String(error)}`);
        // A fresh producer next time: a send that failed may still have been written.
        await this.publisher.disconnect().catch(() => undefined);
        await this.leaderClient?.end().catch(() => undefined);
        this.leaderClient = null;
        await this.pause(RETRY_MS);
      }
    }
  }

  /** Becomes the leader (or waits for it), then relays until stopped or an error occurs. */
  private async lead(): Promise<void> {
    const client = new Client({ connectionString: this.config.POSTGRES_URL });
    client.on('error', () => undefined);
    await client.connect();
    this.leaderClient = client;
    while (!this.stopping) {
      const lock = await client.query<{ ok: boolean }>(
        'SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS ok',
        [`relay:${this.config.RELAY_NAME}`],
      );
      if (lock.rows[0]?.ok) {
        break;
      }
      await this.pause(RETRY_MS);
    }
    if (this.stopping) {
      return;
    }
    await this.publisher.connect();
    let cursor = await loadCheckpoint(this.pool, this.config.RELAY_NAME);
    this.logger.log(
      `relaying to ${this.config.TASK_EVENTS_TOPIC} after ${cursor.transactionId}/${cursor.position}`,
    );
    while (!this.stopping) {
      const next = await this.relayBatch(cursor);
      if (next === cursor) {
        await this.pause(this.config.RELAY_IDLE_POLL_MS);
      }
      cursor = next;
    }
  }

  /** Publishes one batch; returns the new cursor (the same object when there was nothing to publish). */
  private async relayBatch(cursor: LogCursor): Promise<LogCursor> {
    const rows = await readCommittedLog(this.pool, cursor, this.config.RELAY_BATCH_SIZE);
    const last = rows[rows.length - 1];
    if (!last) {
      return cursor;
    }
    await this.publisher.publish(this.config.TASK_EVENTS_TOPIC, rows.map(toTaskEventRecord));
    const next = { transactionId: last.transactionId, position: last.globalPosition };
    await saveCheckpoint(this.pool, this.config.RELAY_NAME, next);
    this.published += rows.length;
    return next;
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}

import type { RelayConfig } from '@lib/config';
import { NoticeListener, retryDelayMs, TaskLog, type LogCursor } from '@lib/event-store';
import { metrics } from '@lib/observability';
import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { Client, type Pool } from 'pg';
import { inPublishSpan } from './publish-span';
import { loadCheckpoint, saveCheckpoint } from './relay-checkpoint';
import { TaskEventPublisher } from './task-event-publisher';
import { toTaskEventRecord } from './task-event-record';
import { RELAY_CONFIG, RELAY_PG_POOL } from './tokens';

const LEADER_POLL_MS = 1_000;

/** The leader's own connection went away: its advisory lock is gone with it. */
class LeadershipLost extends Error {
  override readonly name = 'LeadershipLost';
}

/**
 * Publishes the committed log to Kafka in commit-safe order: read a batch after the checkpoint, publish it,
 * wait for the broker's acknowledgement, then move the checkpoint. A crash between the last two steps
 * re-publishes that batch (at-least-once; consumers dedupe on (taskId, generation)). Relays sharing a name
 * elect one leader with a Postgres advisory lock held by a connection of its own; the checkpoint is written
 * through that connection, so a relay that lost it (and with it the lock) can never move the checkpoint.
 * Any failure (Postgres, the broker, the leader connection) ends the round: the relay starts over from the
 * checkpoint after a capped, jittered backoff, with a new producer and a new leader connection.
 */
@Injectable()
export class RelayService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(RelayService.name);
  private readonly notices: NoticeListener;
  private running: Promise<void> | null = null;
  private stopping = false;
  /** Ends the pause under way; null while none is. */
  private endPause: (() => void) | null = null;
  /** A wake that came while no pause was under way (a notice during a read): the next pause ends at once. */
  private wokenMeanwhile = false;
  private leaderClient: Client | null = null;
  private failures = 0;
  /** Events published since start (for benchmarks and logs). */
  published = 0;
  /** Why the last round failed, until a round reaches the broker again (readiness). */
  failure: string | null = null;

  private readonly log: TaskLog;

  constructor(
    @Inject(RELAY_PG_POOL) pool: Pool,
    private readonly publisher: TaskEventPublisher,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
  ) {
    this.log = new TaskLog(pool);
    this.notices = new NoticeListener(config.POSTGRES_URL, {
      applicationName: 'a2a-relay:listen',
      warn: (message) => this.logger.warn(message),
      info: (message) => this.logger.log(message),
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    this.notices.subscribe((notice) => {
      if (notice.k === 'task') {
        this.wake();
      }
    });
    this.notices.onReconnected(() => this.wake());
    await this.notices.start();
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
        this.failures += 1;
        this.failure = String(error);
        const delayMs = retryDelayMs(this.failures - 1);
        if (this.failures === 1 || this.failures % 20 === 0) {
          this.logger.warn(
            `relay interrupted (${this.failures} in a row), retrying in ${delayMs} ms: ${String(error)}`,
          );
        }
        // A fresh producer next time: a send that failed may still have been written.
        await this.publisher.disconnect().catch(() => undefined);
        const failed = this.leaderClient;
        this.leaderClient = null;
        await failed?.end().catch(() => undefined);
        // A wake the failed attempt caused (its connection ending) must not cut the backoff short: the
        // relay would try again at once, over and over, for as long as Postgres is away.
        this.wokenMeanwhile = false;
        await this.pause(delayMs);
      }
    }
  }

  /** Becomes the leader (or waits for it), then relays until stopped or an error occurs. */
  private async lead(): Promise<void> {
    let lost: LeadershipLost | null = null;
    const client = new Client({
      connectionString: this.config.POSTGRES_URL,
      application_name: 'a2a-relay:leader',
      keepAlive: true,
      connectionTimeoutMillis: 5_000,
    });
    const onLost = (why: string): void => {
      lost ??= new LeadershipLost(`the leader connection was lost: ${why}`);
      // Only the current leader connection interrupts a pause; one already given up on says nothing new.
      if (this.leaderClient === client) {
        this.wake();
      }
    };
    client.on('error', (error) => onLost(error.message));
    client.on('end', () => onLost('connection ended'));
    this.leaderClient = client;
    await client.connect();
    const assertLeader = (): void => {
      if (lost) {
        throw lost;
      }
    };
    while (!this.stopping) {
      const lock = await client.query<{ ok: boolean }>(
        'SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS ok',
        [`relay:${this.config.RELAY_NAME}`],
      );
      if (lock.rows[0]?.ok) {
        break;
      }
      await this.pause(LEADER_POLL_MS);
      assertLeader();
    }
    if (this.stopping) {
      return;
    }
    await this.publisher.connect();
    this.failure = null;
    let cursor = await loadCheckpoint(client, this.config.RELAY_NAME);
    this.logger.log(
      `relaying to ${this.config.TASK_EVENTS_TOPIC} after ${cursor.transactionId}/${cursor.position}`,
    );
    const { RELAY_IDLE_POLL_MS: first, RELAY_IDLE_POLL_MAX_MS: most } = this.config;
    // The pause after a read that found nothing: doubled by each such read in a row, up to the idle maximum.
    let idleMs = first;
    while (!this.stopping) {
      assertLeader();
      const next = await this.relayBatch(client, cursor);
      if (this.failures > 0) {
        // Only a round that went through ends the backoff: a broker that accepts the connection and then
        // refuses every batch (no ACL for the topic) must not be retried ten times a second.
        this.logger.log(`relay resumed after ${this.failures} failed attempt(s)`);
        this.failures = 0;
      }
      if (next === cursor) {
        const woken = await this.pause(idleMs);
        idleMs = woken ? first : Math.min(2 * idleMs, Math.max(first, most));
      } else {
        idleMs = first;
      }
      cursor = next;
    }
  }

  /** Publishes one batch; returns the new cursor (the same object when there was nothing to publish). */
  private async relayBatch(leader: Client, cursor: LogCursor): Promise<LogCursor> {
    const rows = await this.log.committedAfter(cursor, this.config.RELAY_BATCH_SIZE);
    const [first] = rows;
    const last = rows[rows.length - 1];
    if (!first || !last) {
      metrics.relayLag.set(0);
      return cursor;
    }
    metrics.relayLag.set(Math.max(0, Date.now() - Date.parse(first.recordedAt)) / 1_000);
    const topic = this.config.TASK_EVENTS_TOPIC;
    await inPublishSpan(topic, rows, () =>
      this.publisher.publish(topic, rows.map(toTaskEventRecord)),
    );
    const next = { transactionId: last.transactionId, position: last.globalPosition };
    await saveCheckpoint(leader, this.config.RELAY_NAME, next);
    this.published += rows.length;
    metrics.relayPublished.inc(rows.length);
    return next;
  }

  /** A notice, a reconnection, leadership lost or stopping: the relay reads now rather than after its pause. */
  private wake(): void {
    if (this.endPause) {
      this.endPause();
    } else {
      this.wokenMeanwhile = true;
    }
  }

  /** Waits `ms`, or less when woken; true when woken (also by a wake since the last pause). */
  private pause(ms: number): Promise<boolean> {
    if (this.wokenMeanwhile) {
      this.wokenMeanwhile = false;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.endPause = null;
        resolve(false);
      }, ms);
      this.endPause = () => {
        this.endPause = null;
        clearTimeout(timer);
        resolve(true);
      };
    });
  }
}

import { isInterruptedState, isTerminalState, type StreamResponse } from '@lib/a2a-protocol';
import { NoticeListener, readStream } from '@lib/event-store';
import { taskStreamId, toStreamResponse, type TaskEvent, type TaskRef } from '@lib/task-domain';
import {
  Inject,
  Injectable,
  Logger,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import type { Pool } from 'pg';
import type { IngressModuleConfig } from '../ingress.module';
import { INGRESS_CONFIG, INGRESS_PG_POOL } from '../tokens';

/** One event of a task stream as a client sees it: the generation it was written at, and its payload. */
export interface StreamItem {
  id: number;
  response: StreamResponse;
}

const FALLBACK_POLL_MS = 1_000;
const READ_BATCH = 500;
/**
 * How long a subscription keeps trying when its reads fail (the database is away) before it ends with a
 * retryable error: a blip (one connection terminated) costs the client nothing, an outage ends the stream
 * and the client resumes after it with Last-Event-ID.
 */
const READ_FAILURE_GRACE_MS = 3_000;

/**
 * Live task events for this ingress replica: woken by Postgres notices from any task-service replica and
 * always read from the log by generation, so a subscriber that falls behind or reconnects catches up with
 * no gap and no duplicate (DESIGN.md "Live updates across replicas").
 */
@Injectable()
export class TaskEventFeed implements OnModuleInit, OnModuleDestroy {
  private readonly listener: NoticeListener;
  private readonly subscribers = new Map<string, Set<TaskSubscription>>();
  private poller: NodeJS.Timeout | null = null;
  private readonly maxPending: number;
  private readonly stallMs: number;

  constructor(
    @Inject(INGRESS_PG_POOL) private readonly pool: Pool,
    @Inject(INGRESS_CONFIG) config: IngressModuleConfig,
  ) {
    this.maxPending = config.STREAM_MAX_PENDING_EVENTS;
    this.stallMs = config.STREAM_STALL_MS;
    const logger = new Logger(TaskEventFeed.name);
    this.listener = new NoticeListener(config.POSTGRES_URL, {
      applicationName: 'a2a-ingress:listen',
      warn: (message) => logger.warn(message),
      info: (message) => logger.log(message),
    });
  }

  async onModuleInit(): Promise<void> {
    this.listener.subscribe((notice) => {
      if (notice.k === 'task') {
        this.subscribers.get(key(notice.t, notice.id))?.forEach((s) => s.wake(notice.v));
      }
    });
    // Notices sent while the LISTEN connection was down are lost: every subscriber reads the log at once.
    this.listener.onReconnected(() => this.wakeAll());
    await this.listener.start();
    this.poller = setInterval(() => this.wakeAll(), FALLBACK_POLL_MS);
    this.poller.unref();
  }

  private wakeAll(): void {
    this.subscribers.forEach((set) => set.forEach((s) => s.wake()));
  }

  async onModuleDestroy(): Promise<void> {
    if (this.poller) {
      clearInterval(this.poller);
    }
    this.subscribers.forEach((set) => set.forEach((s) => s.close('shutdown')));
    await this.listener.stop();
  }

  /** How many subscriptions this replica serves (for benchmarks and metrics). */
  get size(): number {
    let n = 0;
    this.subscribers.forEach((set) => (n += set.size));
    return n;
  }

  /**
   * Subscribes to the events of a task written after generation `after`. The caller has already been
   * authorised for the task (through the operations port).
   */
  subscribe(tenantId: string, ref: TaskRef, after: number): TaskSubscription {
    const k = key(tenantId, ref.taskId);
    const subscription = new TaskSubscription(
      this.pool,
      tenantId,
      ref,
      after,
      this.maxPending,
      this.stallMs,
      () => {
        const set = this.subscribers.get(k);
        set?.delete(subscription);
        if (set?.size === 0) {
          this.subscribers.delete(k);
        }
      },
    );
    const set = this.subscribers.get(k) ?? new Set<TaskSubscription>();
    set.add(subscription);
    this.subscribers.set(k, set);
    subscription.wake();
    return subscription;
  }
}

function key(tenantId: string, taskId: string): string {
  return `${tenantId}\u0000${taskId}`;
}

/** Why a subscription ended. */
export type EndReason = 'final' | 'overflow' | 'closed' | 'shutdown' | 'error';

/**
 * The events of one task for one client, in generation order, read from the log after a cursor. Bounded:
 * at most STREAM_MAX_PENDING_EVENTS wait in memory; when the buffer is full, reading pauses until the client
 * takes, so any backlog is served in bounded slices. A client that takes nothing for STREAM_STALL_MS while full is
 * cut off with `overflow` and can resume from its last event id.
 */
export class TaskSubscription {
  private cursor: number;
  private readonly pending: StreamItem[] = [];
  private reading: Promise<void> | null = null;
  private again = false;
  private waiter: (() => void) | null = null;
  /** When the buffer last became full and the client has not taken from it since (null: not full). */
  private fullSince: number | null = null;
  /** When reads started failing, since the last one that worked (null: the last read worked). */
  private failingSince: number | null = null;
  ended: EndReason | null = null;

  constructor(
    private readonly pool: Pool,
    private readonly tenantId: string,
    private readonly ref: TaskRef,
    after: number,
    private readonly maxPending: number,
    private readonly stallMs: number,
    private readonly onEnd: () => void,
  ) {
    this.cursor = after;
  }

  /** Something was written to the stream (at `version`, when known): read what is new. */
  wake(version?: number): void {
    if (this.ended) {
      return;
    }
    if (this.fullSince !== null) {
      // Reading waits for the client; a client that takes nothing for too long is cut off.
      if (Date.now() - this.fullSince > this.stallMs) {
        this.pending.length = 0;
        this.close('overflow');
      }
      return;
    }
    if (version !== undefined && version <= this.cursor) {
      return;
    }
    if (this.reading) {
      this.again = true;
      return;
    }
    this.reading = this.readNew()
      .then(() => {
        this.failingSince = null;
      })
      .catch(() => {
        // The next wake (a notice or the poll) reads again; past the grace the client is told to resume.
        this.failingSince ??= Date.now();
        if (Date.now() - this.failingSince > READ_FAILURE_GRACE_MS) {
          this.close('error');
        }
      })
      .finally(() => {
        this.reading = null;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** Waits for the next events; an empty array means the subscription ended (see {@link ended}). */
  async take(): Promise<StreamItem[]> {
    while (this.pending.length === 0 && !this.ended) {
      await new Promise<void>((resolve) => {
        this.waiter = resolve;
      });
    }
    const items = this.pending.splice(0);
    if (this.fullSince !== null) {
      // Room again: read on from where the full buffer stopped (a backlog larger than the bound included).
      this.fullSince = null;
      this.wake();
    }
    return items;
  }

  close(reason: EndReason): void {
    if (this.ended) {
      return;
    }
    this.ended = reason;
    this.onEnd();
    this.notify();
  }

  private async readNew(): Promise<void> {
    for (;;) {
      const events = await readStream<TaskEvent>(
        this.pool,
        this.tenantId,
        taskStreamId(this.tenantId, this.ref.taskId),
        this.cursor,
      );
      for (const stored of events.slice(0, READ_BATCH)) {
        if (this.ended) {
          return;
        }
        const response = toStreamResponse(stored.event, this.ref);
        if (response && this.pending.length >= this.maxPending) {
          // Full: stop before this event (the cursor stays), hand over what is buffered.
          this.fullSince = Date.now();
          this.notify();
          return;
        }
        this.cursor = stored.streamVersion;
        if (!response) {
          continue;
        }
        this.pending.push({ id: stored.streamVersion, response });
        if (endsStream(response)) {
          this.notify();
          this.close('final');
          return;
        }
      }
      this.notify();
      if (events.length <= READ_BATCH) {
        return;
      }
    }
  }

  private notify(): void {
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.();
  }
}

/** A stream closes after a terminal or interrupted status (spec digest §10.6, §12 #5). */
export function endsStream(response: StreamResponse): boolean {
  if ('statusUpdate' in response) {
    const state = response.statusUpdate.status.state;
    return isTerminalState(state) || isInterruptedState(state);
  }
  if ('task' in response) {
    const state = response.task.status.state;
    return isTerminalState(state) || isInterruptedState(state);
  }
  return false;
}

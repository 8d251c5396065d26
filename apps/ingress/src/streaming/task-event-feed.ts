import { isInterruptedState, isTerminalState, type StreamResponse } from '@lib/a2a-protocol';
import { NoticeListener, TaskLog, type StreamRef, type VersionedTaskEvent } from '@lib/event-store';
import { taskStreamId, toStreamResponse } from '@lib/task-domain';
import { taskIdOf, tenantIdOf, type TaskRef } from '@lib/tenancy';
import {
  Inject,
  Injectable,
  Logger,
  Optional,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import type { Pool } from 'pg';
import { INGRESS_CONFIG, INGRESS_PG_POOL, type IngressModuleConfig } from '../tokens';
import { LocalCommits } from './local-commits';

/** A task a subscription follows, with the context id its stream responses carry (spec digest §4.2). */
export interface FollowedTask extends TaskRef {
  readonly contextId: string;
}

/** One event of a task stream as a client sees it: the generation it was written at, and its payload. */
export interface StreamItem {
  id: number;
  response: StreamResponse;
}

const FALLBACK_POLL_MS = 1_000;
/** Most events one log read returns; a longer backlog is read in several turns. */
const READ_BATCH = 500;
/**
 * How long a subscription keeps trying when its reads fail (the database is away) before it ends with a
 * retryable error: a blip (one connection terminated) costs the client nothing, an outage ends the stream
 * and the client resumes after it with Last-Event-ID.
 */
const READ_FAILURE_GRACE_MS = 3_000;

/** What every task channel of one feed shares. */
interface FeedContext {
  readonly log: TaskLog;
  readonly maxPending: number;
  readonly stallMs: number;
}

/**
 * Live task events for this ingress replica (ADR 0008): one {@link TaskChannel} per followed task reads the
 * task's log once per wake-up and hands the events to all of that task's subscribers. Woken by Postgres
 * notices from any task-service replica, by the LISTEN connection coming back, and by a fallback poll that
 * asks, in one query for all followed tasks, which streams moved. Always read from the log by generation, so
 * a subscriber that falls behind or reconnects catches up with no gap and no duplicate (DESIGN.md "Live
 * updates across replicas").
 */
@Injectable()
export class TaskEventFeed implements OnModuleInit, OnModuleDestroy {
  private readonly listener: NoticeListener;
  private readonly channels = new Map<string, TaskChannel>();
  private readonly context: FeedContext;
  private poller: NodeJS.Timeout | null = null;
  private polling = false;
  /** A wake-up (the LISTEN connection came back) arrived during a poll: poll again when it ends. */
  private pollAgain = false;

  private unsubscribeLocal: () => void = () => undefined;

  constructor(
    @Inject(INGRESS_PG_POOL) pool: Pool,
    @Inject(INGRESS_CONFIG) config: IngressModuleConfig,
    @Optional() private readonly local?: LocalCommits,
  ) {
    this.context = {
      log: new TaskLog(pool),
      maxPending: config.STREAM_MAX_PENDING_EVENTS,
      stallMs: config.STREAM_STALL_MS,
    };
    const logger = new Logger(TaskEventFeed.name);
    this.listener = new NoticeListener(config.POSTGRES_URL, {
      applicationName: 'a2a-ingress:listen',
      warn: (message) => logger.warn(message),
      info: (message) => logger.log(message),
    });
  }

  async onModuleInit(): Promise<void> {
    this.listener.subscribe((notice) => {
      if (notice.k !== 'task') {
        return;
      }
      const k = key(notice.t, notice.id);
      // A change committed in this process is handed over by the commit itself (below): wait for it. A
      // notice names a task the platform wrote: its ids are trusted, as rows are.
      const settling = this.local?.settling({
        tenantId: tenantIdOf(notice.t),
        taskId: taskIdOf(notice.id),
      });
      if (settling) {
        void settling.then(() => this.channels.get(k)?.wake(notice.v));
      } else {
        this.channels.get(k)?.wake(notice.v);
      }
    });
    if (this.local) {
      this.unsubscribeLocal = this.local.subscribe((task, events) =>
        this.channels.get(key(task.tenantId, task.taskId))?.committed(events),
      );
    }
    // Notices sent while the LISTEN connection was down are lost: look at once which streams moved.
    this.listener.onReconnected(() => void this.poll(true));
    await this.listener.start();
    this.poller = setInterval(() => void this.poll(), FALLBACK_POLL_MS);
    this.poller.unref();
  }

  async onModuleDestroy(): Promise<void> {
    this.unsubscribeLocal();
    if (this.poller) {
      clearInterval(this.poller);
    }
    this.closeAll();
    await this.listener.stop();
  }

  /**
   * Ends every subscription as at shutdown (the drain): each stream gets what it already has, then ends
   * without a final event, and its client resumes elsewhere with the last generation it saw.
   */
  closeAll(): void {
    [...this.channels.values()].forEach((channel) => channel.closeAll('shutdown'));
  }

  /** How many subscriptions this replica serves (for benchmarks and metrics). */
  get size(): number {
    let n = 0;
    this.channels.forEach((channel) => (n += channel.size));
    return n;
  }

  /** How many tasks this replica follows (one shared log reader each). */
  get tasks(): number {
    return this.channels.size;
  }

  /**
   * Subscribes to the events of a task written after generation `after`, until `end` (see
   * {@link StreamEnd}). The caller has already been authorised for the task (through the operations port).
   */
  subscribe(task: FollowedTask, after: number, end: StreamEnd = 'turn'): TaskSubscription {
    const k = key(task.tenantId, task.taskId);
    const existing = this.channels.get(k);
    if (existing) {
      return existing.subscribe(after, end);
    }
    const channel = new TaskChannel(this.context, task, after, () => this.channels.delete(k));
    this.channels.set(k, channel);
    // A change after `after` committed in this process (or noticed from elsewhere) before the channel
    // existed would be missed without a read; when this process knows the task is still at `after`, the
    // changes to come reach the channel by commit or notice, and the read at the start is not needed.
    return channel.subscribe(after, end, this.local?.version(task) === after);
  }

  /**
   * The fallback for lost notices: one query for all followed tasks tells which streams are past their
   * channel's position, and only those are read. A failed poll counts as a failed read for every channel,
   * which is what ends streams after the grace when the database is away. `urgent` (the LISTEN connection
   * came back): when a poll is running, another follows it, since the running one may have read the versions
   * before the lost notices' commits.
   */
  private async poll(urgent = false): Promise<void> {
    if (this.polling) {
      this.pollAgain ||= urgent;
      return;
    }
    if (this.channels.size === 0) {
      return;
    }
    this.polling = true;
    this.pollAgain = false;
    const channels = [...this.channels.values()];
    try {
      const followed = channels.filter((channel) => channel.following);
      const moved = await this.context.log.moved(followed.map((channel) => channel.watched()));
      followed.forEach((channel, i) => {
        const version = moved.get(i);
        if (version === undefined) {
          channel.unchanged();
        } else {
          channel.wake(version);
        }
      });
    } catch {
      channels.forEach((channel) => channel.failed());
    } finally {
      this.polling = false;
    }
    channels.forEach((channel) => channel.retryCatchUps());
    if (this.pollAgain) {
      void this.poll();
    }
  }
}

/** A channel's key: a task's ids as notices carry them (plain strings) or as a subscription names them. */
function key(tenantId: string, taskId: string): string {
  return `${tenantId}\u0000${taskId}`;
}

/**
 * The shared reader of one task on this replica. It holds the highest generation it has read (`position`)
 * and the subscriptions that follow it live; on each wake-up it reads the events after `position` once and
 * offers each mapped item to every live subscription. Subscriptions behind `position` (an older snapshot, a
 * Last-Event-ID, a full buffer) read the log themselves until they reach it, then join.
 *
 * Invariant: every live subscription's cursor is at or past `position`, and the channel reads every event
 * after `position` (the notices, the poll and the reconnect all lead to a read while anyone is live), so a
 * live subscription is offered every event after its cursor; it drops those at or before its cursor.
 */
class TaskChannel {
  /** The highest generation this channel has read (or that its first live subscriber started after). */
  position: number;
  private readonly subscriptions = new Set<TaskSubscription>();
  private readonly live = new Set<TaskSubscription>();
  /** Catching-up subscriptions whose last read failed: they read again on the next wake-up or poll. */
  private readonly stalled = new Set<TaskSubscription>();
  readonly stream: StreamRef;
  /** The highest version a notice or the poll has named (reads happen only while someone is live). */
  private known = 0;
  private reading = false;
  /** The highest version some wake-up said exists during the current read (Infinity: unknown). */
  private wanted = 0;
  /** When reads started failing, since the last one that worked (null: the last read worked). */
  private failingSince: number | null = null;
  private closed = false;

  constructor(
    readonly context: FeedContext,
    readonly task: FollowedTask,
    position: number,
    private readonly onEmpty: () => void,
  ) {
    this.position = position;
    this.stream = { tenantId: task.tenantId, streamId: taskStreamId(task.tenantId, task.taskId) };
  }

  get size(): number {
    return this.subscriptions.size;
  }

  /** Whether the channel has live subscriptions to read for (the poll checks only those). */
  get following(): boolean {
    return this.live.size > 0;
  }

  watched(): StreamRef & { position: number } {
    return { ...this.stream, position: this.position };
  }

  /** `current`: `after` is known to be the stream's newest generation (no read needed at the start). */
  subscribe(after: number, end: StreamEnd, current = false): TaskSubscription {
    const subscription = new TaskSubscription(this, after, end);
    this.subscriptions.add(subscription);
    const first = this.subscriptions.size === 1;
    if (after >= this.position) {
      this.join(subscription, after);
      if (first && !current) {
        // Events written between the caller's snapshot and now may have been notified before this channel
        // existed: read once at the start.
        this.wake();
      }
    } else {
      void subscription.catchUp();
    }
    return subscription;
  }

  /** A subscription whose cursor is at or past `position` follows the shared reads from now on. */
  join(subscription: TaskSubscription, cursor: number): void {
    this.stalled.delete(subscription);
    const alone = this.live.size === 0;
    this.live.add(subscription);
    if (alone) {
      // Nobody else needs the events in between: the reader moves on to the newcomer's cursor. Notices that
      // came while nobody was live were not followed: read if one named a later version (the poll covers
      // lost ones, now that the channel is followed again).
      this.position = Math.max(this.position, cursor);
      this.wake(this.known);
    } else {
      this.wake(cursor);
    }
  }

  /** A subscription stops following the shared reads (its buffer is full, or it ended). */
  leave(subscription: TaskSubscription): void {
    this.live.delete(subscription);
  }

  remove(subscription: TaskSubscription): void {
    this.live.delete(subscription);
    this.stalled.delete(subscription);
    this.subscriptions.delete(subscription);
    if (this.subscriptions.size === 0 && !this.closed) {
      this.closed = true;
      this.onEmpty();
    }
  }

  /** The stream reached `version` (undefined: may have moved): read what is new, once for everyone. */
  wake(version = Infinity): void {
    if (version !== Infinity && version > this.known) {
      this.known = version;
    }
    this.retryCatchUps();
    if (this.closed || this.live.size === 0 || version <= this.position) {
      return;
    }
    this.wanted = Math.max(this.wanted, version);
    if (!this.reading) {
      void this.read();
    }
  }

  /**
   * Events committed in this process, in order: delivered as a read would deliver them when they continue
   * where the channel is; after a gap (a change made elsewhere, not yet read) they only wake a read.
   */
  committed(events: readonly VersionedTaskEvent[]): void {
    const first = events[0];
    const last = events[events.length - 1];
    if (!first || !last || this.closed || this.live.size === 0) {
      return;
    }
    if (first.version > this.position + 1) {
      this.wake(last.version);
      return;
    }
    this.known = Math.max(this.known, last.version);
    this.deliver(events);
  }

  /** The poll found the stream where this channel has read it: the database answers. */
  unchanged(): void {
    if (!this.reading) {
      this.failingSince = null;
    }
  }

  /** A read for this channel failed; past the grace, its live subscriptions end with a retryable error. */
  failed(): void {
    this.failingSince ??= Date.now();
    if (Date.now() - this.failingSince > READ_FAILURE_GRACE_MS) {
      [...this.live].forEach((subscription) => subscription.close('error'));
      // Whoever subscribes later gets a grace of its own.
      this.failingSince = null;
    }
  }

  /** Subscriptions whose catch-up read failed read again (on a wake-up or the poll). */
  retryCatchUps(): void {
    if (this.stalled.size > 0) {
      const stalled = [...this.stalled];
      this.stalled.clear();
      stalled.forEach((subscription) => void subscription.catchUp());
    }
  }

  stall(subscription: TaskSubscription): void {
    this.stalled.add(subscription);
  }

  closeAll(reason: EndReason): void {
    [...this.subscriptions].forEach((subscription) => subscription.close(reason));
  }

  private async read(): Promise<void> {
    this.reading = true;
    try {
      for (;;) {
        this.wanted = 0;
        const events = await this.context.log.eventsAfter(this.stream, this.position, READ_BATCH);
        this.failingSince = null;
        if (this.closed) {
          return;
        }
        this.deliver(events);
        const more = events.length === READ_BATCH || this.wanted > this.position;
        if (!more || this.live.size === 0 || this.closed) {
          return;
        }
      }
    } catch {
      // The next wake-up (a notice or the poll) reads again.
      this.failed();
    } finally {
      this.reading = false;
    }
  }

  private deliver(events: readonly VersionedTaskEvent[]): void {
    for (const stored of events) {
      if (stored.version <= this.position) {
        continue;
      }
      this.position = stored.version;
      const response = toStreamResponse(stored.event, this.task);
      if (!response) {
        continue;
      }
      const item: StreamItem = { id: stored.version, response };
      // A subscription may leave the set while it is offered the item (full, final): Set iteration allows it.
      for (const subscription of this.live) {
        subscription.offer(item);
      }
    }
  }
}

/** Why a subscription ended. */
export type EndReason = 'final' | 'overflow' | 'closed' | 'shutdown' | 'error';

/**
 * Where a stream ends by itself (spec digest §10.6): `turn` after a terminal or interrupted status
 * (SendStreamingMessage: the turn is over), `terminal` only after a terminal status (a SubscribeToTask that
 * follows the task through INPUT_REQUIRED / AUTH_REQUIRED to its end). Subscriptions of both kinds share a
 * task's reads.
 */
export type StreamEnd = 'turn' | 'terminal';

/**
 * The events of one task for one client, in generation order, after a cursor. Either live (offered the
 * items its task's channel reads) or catching up (reading the log itself from its cursor until it reaches
 * the channel). Bounded: at most STREAM_MAX_PENDING_EVENTS wait in memory; when an item does not fit, the
 * subscription leaves the shared reads and waits for the client to take, then catches up from the log, so
 * any backlog is served in bounded slices. A client that takes nothing for STREAM_STALL_MS while full is cut
 * off with `overflow` and can resume from its last event id.
 */
export class TaskSubscription {
  /** The generation of the last event this subscription has handled (delivered or skipped as hidden). */
  private cursor: number;
  private readonly pending: StreamItem[] = [];
  private waiter: (() => void) | null = null;
  private listener: (() => void) | null = null;
  /** Set while the buffer is full: cuts the client off unless it takes within STREAM_STALL_MS. */
  private stallTimer: NodeJS.Timeout | null = null;
  private catchingUp = false;
  /** When this subscription's own reads started failing (null: the last one worked). */
  private failingSince: number | null = null;
  ended: EndReason | null = null;

  constructor(
    private readonly channel: TaskChannel,
    after: number,
    private readonly end: StreamEnd,
  ) {
    this.cursor = after;
  }

  /** An item read by the channel, offered to a live subscription. */
  offer(item: StreamItem): void {
    if (item.id <= this.cursor || this.ended) {
      return;
    }
    if (this.pending.length >= this.channel.context.maxPending) {
      // Full: the item is not taken (the cursor stays); it is read again once the client makes room.
      this.channel.leave(this);
      this.full();
      return;
    }
    this.accept(item);
  }

  /** Waits for the next events; an empty array means the subscription ended (see {@link ended}). */
  async take(): Promise<StreamItem[]> {
    while (this.pending.length === 0 && !this.ended) {
      await new Promise<void>((resolve) => {
        this.waiter = resolve;
      });
    }
    return this.takeNow();
  }

  /**
   * The events waiting now, possibly none; with {@link onReady}, the way to consume a subscription without a
   * pending `take()` per subscriber. Empty with {@link ended} set means the subscription ended.
   */
  takeNow(): StreamItem[] {
    if (this.pending.length === 0) {
      return [];
    }
    const items = this.pending.splice(0);
    if (this.stallTimer !== null && !this.ended) {
      // Room again: read on from where the full buffer stopped (a backlog larger than the bound included).
      clearTimeout(this.stallTimer);
      this.stallTimer = null;
      void this.catchUp();
    }
    return items;
  }

  /** Calls `listener` (synchronously) whenever events arrive or the subscription ends; null stops it. */
  onReady(listener: (() => void) | null): void {
    this.listener = listener;
  }

  close(reason: EndReason): void {
    if (this.ended) {
      return;
    }
    this.ended = reason;
    if (this.stallTimer !== null) {
      clearTimeout(this.stallTimer);
      this.stallTimer = null;
    }
    this.channel.remove(this);
    this.notify();
  }

  /**
   * Reads the log from the cursor until the subscription reaches its channel's position, then joins it. The
   * check and the join happen in the same turn of the event loop as the read's answer, and the channel
   * offers every event after its position, so nothing falls between the two; what both read is dropped by
   * the cursor.
   */
  async catchUp(): Promise<void> {
    if (this.catchingUp || this.ended || this.stallTimer !== null) {
      return;
    }
    this.catchingUp = true;
    const { channel } = this;
    try {
      for (;;) {
        const events = await channel.context.log.eventsAfter(
          channel.stream,
          this.cursor,
          READ_BATCH,
        );
        this.failingSince = null;
        for (const stored of events) {
          if (this.ended) {
            return;
          }
          if (stored.version <= this.cursor) {
            continue;
          }
          const response = toStreamResponse(stored.event, channel.task);
          if (!response) {
            this.cursor = stored.version;
            continue;
          }
          if (this.pending.length >= channel.context.maxPending) {
            this.full();
            return;
          }
          this.accept({ id: stored.version, response });
        }
        if (this.ended) {
          return;
        }
        if (events.length < READ_BATCH && this.cursor >= channel.position) {
          channel.join(this, this.cursor);
          return;
        }
      }
    } catch {
      this.failingSince ??= Date.now();
      if (Date.now() - this.failingSince > READ_FAILURE_GRACE_MS) {
        this.close('error');
      } else {
        channel.stall(this);
      }
    } finally {
      this.catchingUp = false;
    }
  }

  private accept(item: StreamItem): void {
    this.cursor = item.id;
    this.pending.push(item);
    if (endsStream(item.response, this.end)) {
      this.close('final');
    } else {
      this.notify();
    }
  }

  /** The buffer is full and an item is waiting: the client must take within STREAM_STALL_MS. */
  private full(): void {
    if (this.stallTimer === null) {
      this.stallTimer = setTimeout(() => {
        this.stallTimer = null;
        this.pending.length = 0;
        this.close('overflow');
      }, this.channel.context.stallMs);
      this.stallTimer.unref();
    }
    this.notify();
  }

  private notify(): void {
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.();
    this.listener?.();
  }
}

/**
 * Whether a stream closes after `response`: after a terminal status, and for `turn` streams also after an
 * interrupted one (spec digest §10.6, §12 #5).
 */
export function endsStream(response: StreamResponse, end: StreamEnd = 'turn'): boolean {
  const state =
    'statusUpdate' in response
      ? response.statusUpdate.status.state
      : 'task' in response
        ? response.task.status.state
        : null;
  return (
    state !== null && (isTerminalState(state) || (end === 'turn' && isInterruptedState(state)))
  );
}

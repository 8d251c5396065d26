import { sealAuditEntry, type AuditEntry, type SealedAuditEntry } from '@lib/audit';
import type { TaskServiceConfig } from '@lib/config';
import { ConcurrencyConflict, type EventMetadata } from '@lib/event-store';
import { detached } from '@lib/observability';
import {
  foldTask,
  initialTaskState,
  type PresentTask,
  type TaskAggregate,
  type TaskEvent,
} from '@lib/task-domain';
import type { TaskRef } from '@lib/tenancy';
import { Inject, Injectable } from '@nestjs/common';
import type { Span } from '@opentelemetry/api';
import { IdGenerator } from '../clock';
import { TASK_SERVICE_CONFIG } from '../tokens';
import { noteBatch, tracedWrite } from './append-span';
import { StreamCache, streamIdOf, type CachedStream, type StreamId } from './stream-cache';
import {
  streamChange,
  TaskStore,
  type MessageIdClaim,
  type PushConfigSpec,
  type StreamChange,
} from './task-store';

/** Decides on the freshest state; returning no events changes nothing. */
export type Decision = (state: TaskAggregate) => TaskEvent[];

/** A change to one task stream (the task's), decided by the writer on the stream's current state. */
export interface WriteCommand extends TaskRef {
  decide: Decision;
  metadata: EventMetadata;
  /** The task id was just generated: the stream cannot exist, there is nothing to read. */
  fresh?: boolean;
  /**
   * Decide on the stream as stored, not on the cached state: for a command whose decision may be to do
   * nothing (a grant of work the queue says is waiting), which no expected version would catch if the
   * cache were behind.
   */
  reread?: boolean;
  /** SendMessage's messageId, claimed in the same commit; a claim held already makes the write a duplicate. */
  claim?: MessageIdClaim;
  /** The webhooks the decision may register, written with it when it does (their secrets stay out of the log). */
  pushConfigs?: readonly PushConfigSpec[];
  /**
   * The audit record of the call that asked for the change: committed in the change's transaction when the
   * change is written; recorded on its own before the outcome when the decision changes nothing. Not at all
   * for a duplicate (a repeated message): its caller records the call, naming the task it went to.
   */
  audit?: AuditEntry;
}

/** Where the writer records the audit entry of a command that wrote nothing (there is no transaction to join). */
export abstract class AuditSink {
  /** Resolves once the record is written or its loss reported; never rejects. */
  abstract recordApart(entry: AuditEntry): Promise<void>;
}

export type WriteOutcome =
  | { kind: 'written'; before: TaskAggregate; after: PresentTask; events: TaskEvent[] }
  /** The decision produced no events, or the stream already holds the command's idempotency key. */
  | { kind: 'unchanged'; state: TaskAggregate }
  /** The messageId was claimed by an earlier SendMessage; nothing was written. */
  | { kind: 'duplicate' };

/**
 * Told about every change this replica's writer committed, after the commit: the task, the stream's state
 * after it and the events it appended (their versions end at `after.version`).
 */
export type CommitListener = (
  task: TaskRef,
  after: PresentTask,
  events: readonly TaskEvent[],
) => void;

interface Pending {
  command: WriteCommand;
  /** The command's audit entry, checked and sealed once (the same record on every try). */
  audit: SealedAuditEntry | null;
  streamId: StreamId;
  /** The messageId claim's identity, when the command carries one. */
  claimKey: string | null;
  /** Batches this command was part of that could not write it (conflicts, deadlocks). */
  tries: number;
  /** The command's `task-service append` span, when tracing. */
  span: Span | null;
  resolve: (outcome: WriteOutcome) => void;
  reject: (error: unknown) => void;
}

/** Most commands in one batch (one statement, one commit). */
const MAX_BATCH = 256;
/** Task streams whose folded state is kept between writes. */
const CACHE_CAPACITY = 4_096;
/** Batches a command may take part in before its conflicts are reported to the caller. */
const MAX_TRIES = 5;
/** SQLSTATEs after which the whole batch is simply tried again: nothing of it was committed. */
const RETRY_BATCH = new Set(['40P01', '40001']);

/**
 * The write path of task streams, with group commit (docs/adr/0007-hot-path-group-commit.md): commands arriving while a
 * batch commits are decided together on their streams' current states (held in a cache, or read in one
 * query) and appended in one statement, each stream under its own expected version. A stream that moved on
 * meanwhile is re-read and decided again; the others are not held back by it. At most
 * WRITER_BATCHES_IN_FLIGHT batches (default one) commit at once per replica, on disjoint streams: the commit
 * is the unit of work, its cost shared by every command in it.
 */
/** The writer's setting (WRITER_BATCHES_IN_FLIGHT, libs/config). */
export type TaskWriterConfig = Pick<TaskServiceConfig, 'WRITER_BATCHES_IN_FLIGHT'>;

@Injectable()
export class TaskWriter {
  private queue: Pending[] = [];
  /** A launch is scheduled for the next turn of the event loop. */
  private scheduled = false;
  private inFlight = 0;
  /**
   * Streams and messageIds of the batches in flight: a command on one of them waits for its batch. A busy
   * stream maps to the end of its batch (its outcomes resolved, its listeners told).
   */
  private readonly busyStreams = new Map<StreamId, Promise<void>>();
  private readonly busyClaims = new Set<string>();
  private readonly cache = new StreamCache(CACHE_CAPACITY);
  private readonly listeners = new Set<CommitListener>();
  /** Batches started so far (their number names them on the commands' spans). */
  private batches = 0;

  constructor(
    private readonly store: TaskStore,
    private readonly ids: IdGenerator,
    private readonly audit: AuditSink,
    /**
     * Batches committing at once: while one waits for its commit (the WAL flush), the next is decided and
     * sent. Their streams and messageIds never overlap.
     */
    @Inject(TASK_SERVICE_CONFIG) private readonly config: TaskWriterConfig,
  ) {}

  write(command: WriteCommand): Promise<WriteOutcome> {
    return tracedWrite(command, (span) => this.enqueue(command, span));
  }

  private enqueue(command: WriteCommand, span: Span | null): Promise<WriteOutcome> {
    let audit: SealedAuditEntry | null;
    try {
      // Checked before anything is decided: an entry the audit log would refuse fails the command.
      audit = command.audit ? sealAuditEntry(command.audit, this.ids.eventId()) : null;
    } catch (error) {
      return Promise.reject(error as Error);
    }
    return new Promise((resolve, reject) => {
      const streamId = streamIdOf(command);
      const { claim } = command;
      const claimKey = claim
        ? JSON.stringify([
            command.tenantId,
            claim.agentId,
            claim.principalId,
            claim.messageId,
            claim.digest,
          ])
        : null;
      this.queue.push({ command, audit, streamId, claimKey, tries: 0, span, resolve, reject });
      this.kick();
    });
  }

  onCommitted(listener: CommitListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The newest state this replica knows of a task, if it holds one (no read). */
  peek(task: TaskRef): TaskAggregate | undefined {
    return this.cache.get(streamIdOf(task))?.state;
  }

  /**
   * When a batch in flight holds a change to the task: the end of that batch, its commit listeners told.
   * A notice of a commit can outrun the commit's own result; waiting for the batch tells whether it was this
   * replica's.
   */
  settling(task: TaskRef): Promise<void> | undefined {
    return this.busyStreams.get(streamIdOf(task));
  }

  /** Another path changed the stream (or may have): decide on a fresh read next time. */
  forget(task: TaskRef): void {
    this.cache.delete(streamIdOf(task));
  }

  /** The stream reached `version` (a notice): a cached state behind it is forgotten. */
  moved(task: TaskRef, version: number): void {
    const streamId = streamIdOf(task);
    const cached = this.cache.peek(streamId);
    if (cached && cached.state.version < version) {
      this.cache.delete(streamId);
    }
  }

  private kick(): void {
    if (this.scheduled || this.inFlight >= this.config.WRITER_BATCHES_IN_FLIGHT) {
      return;
    }
    this.scheduled = true;
    // Let every request that arrived in this turn of the event loop join the batch. The batch serves them
    // all: it runs outside the context (log fields, span) of the one that happened to schedule it.
    setImmediate(() =>
      detached(() => {
        this.scheduled = false;
        this.launch();
      }),
    );
  }

  /** Starts batches while fewer than WRITER_BATCHES_IN_FLIGHT run and there is work not held back by one. */
  private launch(): void {
    while (this.inFlight < this.config.WRITER_BATCHES_IN_FLIGHT && this.queue.length > 0) {
      let over: () => void = () => undefined;
      const batch = this.take(
        new Promise<void>((resolve) => {
          over = resolve;
        }),
      );
      if (batch.length === 0) {
        return;
      }
      this.inFlight += 1;
      void this.run(batch).finally(() => {
        over();
        this.inFlight -= 1;
        for (const { streamId, claimKey } of batch) {
          this.busyStreams.delete(streamId);
          if (claimKey !== null) {
            this.busyClaims.delete(claimKey);
          }
        }
        if (this.queue.length > 0) {
          this.kick();
        }
      });
    }
  }

  /**
   * The next batch, its streams and messageIds marked busy until it is over: in arrival order, at most one
   * command per stream and per messageId, none on a stream or messageId of a batch in flight (a later one
   * waits and is decided on what the earlier one wrote).
   */
  private take(over: Promise<void>): Pending[] {
    const batch: Pending[] = [];
    const rest: Pending[] = [];
    for (const pending of this.queue) {
      const { streamId, claimKey } = pending;
      if (
        batch.length >= MAX_BATCH ||
        this.busyStreams.has(streamId) ||
        (claimKey !== null && this.busyClaims.has(claimKey))
      ) {
        rest.push(pending);
        continue;
      }
      batch.push(pending);
      this.busyStreams.set(streamId, over);
      if (claimKey !== null) {
        this.busyClaims.add(claimKey);
      }
    }
    this.queue = rest;
    return batch;
  }

  private async run(batch: Pending[]): Promise<void> {
    noteBatch(batch, ++this.batches);
    let states: Map<Pending, CachedStream>;
    try {
      states = await this.statesOf(batch);
    } catch (error) {
      batch.forEach((pending) => pending.reject(error));
      return;
    }
    const changes: StreamChange[] = [];
    const decided: { pending: Pending; before: TaskAggregate; after: PresentTask }[] = [];
    for (const pending of batch) {
      const { command } = pending;
      const current = states.get(pending);
      if (!current) {
        continue;
      }
      const key = command.metadata.idempotencyKey;
      if (key !== undefined && current.idempotencyKeys.has(key)) {
        this.settleApart(pending, { kind: 'unchanged', state: current.state });
        continue;
      }
      let events: TaskEvent[];
      try {
        events = command.decide(current.state);
      } catch (error) {
        pending.reject(error);
        continue;
      }
      const after = foldTask(events, current.state);
      if (events.length === 0 || after.status !== 'present') {
        this.settleApart(pending, { kind: 'unchanged', state: current.state });
        continue;
      }
      const change = streamChange(
        command.tenantId,
        pending.streamId,
        current.state,
        events,
        after,
        command.metadata,
        () => this.ids.eventId(),
      );
      changes.push({
        ...change,
        ...(command.claim ? { claim: { ...command.claim, taskId: command.taskId } } : {}),
        ...(command.pushConfigs ? { pushConfigs: command.pushConfigs } : {}),
        ...(pending.audit ? { audit: pending.audit } : {}),
      });
      decided.push({ pending, before: current.state, after });
    }
    if (changes.length === 0) {
      return;
    }
    const again: Pending[] = [];
    let refused: Map<number, 'conflict' | 'duplicate'>;
    try {
      refused = await this.store.append(changes);
    } catch (error) {
      // Nothing of the batch is known to be written: forget the states, and try a deadlock again.
      for (const { pending } of decided) {
        this.cache.delete(pending.streamId);
        if (RETRY_BATCH.has((error as { code?: string }).code ?? '')) {
          this.retry(pending, error, again);
        } else {
          pending.reject(error);
        }
      }
      this.queue = [...again, ...this.queue];
      return;
    }
    decided.forEach(({ pending, before, after }, index) => {
      const refusal = refused.get(index);
      const change = changes[index];
      if (refusal === 'duplicate') {
        // The caller learns which task the message went to, and records the call naming it.
        pending.resolve({ kind: 'duplicate' });
      } else if (refusal === 'conflict' || !change) {
        this.cache.delete(pending.streamId);
        this.retry(pending, new ConcurrencyConflict(pending.streamId, before.version), again);
      } else {
        const keys = states.get(pending)?.idempotencyKeys ?? new Set<string>();
        const key = pending.command.metadata.idempotencyKey;
        if (key !== undefined) {
          keys.add(key);
        }
        this.cache.set(pending.streamId, { state: after, idempotencyKeys: keys });
        pending.resolve({ kind: 'written', before, after, events: [...change.events] });
        this.listeners.forEach((listener) => listener(pending.command, after, change.events));
      }
    });
    this.queue = [...again, ...this.queue];
  }

  /**
   * Resolves a command that wrote nothing, after recording its audit entry on its own (no change, so no
   * transaction for it to join).
   */
  private settleApart(pending: Pending, outcome: WriteOutcome): void {
    const entry = pending.command.audit;
    if (!entry) {
      pending.resolve(outcome);
      return;
    }
    void this.audit.recordApart(entry).then(() => pending.resolve(outcome));
  }

  /** Adds a command to `again` (the head of the queue), or reports `error` when it has had its tries. */
  private retry(pending: Pending, error: unknown, again: Pending[]): void {
    pending.tries += 1;
    if (pending.tries >= MAX_TRIES) {
      pending.reject(error);
      return;
    }
    // The stream exists after all (or may): read it next time.
    pending.command = { ...pending.command, fresh: false };
    again.push(pending);
  }

  /** Each command's stream state: from the cache, new, or read (all missing streams in one query). */
  private async statesOf(batch: readonly Pending[]): Promise<Map<Pending, CachedStream>> {
    const states = new Map<Pending, CachedStream>();
    const missing: Pending[] = [];
    for (const pending of batch) {
      const { fresh, reread } = pending.command;
      const cached = fresh
        ? { state: initialTaskState(), idempotencyKeys: new Set<string>() }
        : reread
          ? undefined
          : this.cache.get(pending.streamId);
      if (cached) {
        states.set(pending, cached);
      } else {
        missing.push(pending);
      }
    }
    if (missing.length > 0) {
      const histories = await this.store.readStreams(
        missing.map((p) => ({ tenantId: p.command.tenantId, streamId: p.streamId })),
      );
      for (const pending of missing) {
        const history = histories.get(pending.streamId);
        const read: CachedStream = {
          state: foldTask(history?.events ?? []),
          idempotencyKeys: new Set(history?.idempotencyKeys ?? []),
        };
        if (read.state.status === 'present') {
          this.cache.set(pending.streamId, read);
        }
        states.set(pending, read);
      }
    }
    return states;
  }
}

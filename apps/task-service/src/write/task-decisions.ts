import type { AuditEntry } from '@lib/audit';
import {
  ConcurrencyConflict,
  TaskLog,
  withTransaction,
  type EventMetadata,
} from '@lib/event-store';
import {
  evolve,
  foldTask,
  initialTaskState,
  type TaskAggregate,
  type TaskEvent,
} from '@lib/task-domain';
import type { TaskRef } from '@lib/tenancy';
import { Inject, Injectable } from '@nestjs/common';
import type { Pool, PoolClient } from 'pg';
import { IdGenerator } from '../clock';
import { PG_POOL } from '../tokens';
import { streamIdOf } from './stream-cache';
import { streamChange, TaskStore } from './task-store';
import { TaskWriter, type Decision } from './task-writer';

export interface Execution {
  before: TaskAggregate;
  after: TaskAggregate;
  events: TaskEvent[];
}

const MAX_TRIES = 4;

/**
 * One task stream's decisions, for callers that decide one stream at a time (the write path's top layer,
 * over the group-commit {@link TaskWriter} and the SQL of {@link TaskStore}): {@link execute} goes through the
 * writer; {@link executeIn} runs inside a caller's own transaction (the lease sweeper, which locks the work
 * row it acts on): load → decide → append with the expected version → project inline → notify. And a
 * stream's state folded from the log ({@link state}), for what the view does not show.
 */
@Injectable()
export class TaskDecisions {
  /** The streams each open transaction of {@link transact} changed. */
  private readonly touched = new Map<PoolClient, TaskRef[]>();
  private readonly log: TaskLog;

  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly writer: TaskWriter,
    private readonly store: TaskStore,
    private readonly ids: IdGenerator,
  ) {
    this.log = new TaskLog(pool);
  }

  async execute(
    task: TaskRef,
    decision: Decision,
    metadata: EventMetadata,
    audit?: AuditEntry,
  ): Promise<Execution> {
    const { tenantId, taskId } = task;
    const outcome = await this.writer.write({
      tenantId,
      taskId,
      decide: decision,
      metadata,
      ...(audit ? { audit } : {}),
    });
    switch (outcome.kind) {
      case 'written':
        return { before: outcome.before, after: outcome.after, events: outcome.events };
      case 'unchanged':
        return { before: outcome.state, after: outcome.state, events: [] };
      case 'duplicate':
        throw new Error('a write without a messageId claim cannot be a duplicate');
    }
  }

  /**
   * Runs `work` in a transaction, again from the start when a stream moved on concurrently. The writer's
   * cached state of every stream it changed is forgotten once the transaction is over.
   */
  async transact<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const touched: TaskRef[] = [];
      try {
        return await withTransaction(this.pool, (client) => {
          this.touched.set(client, touched);
          return work(client).finally(() => this.touched.delete(client));
        });
      } catch (error) {
        if (!(error instanceof ConcurrencyConflict) || attempt >= MAX_TRIES) {
          throw error;
        }
        await sleep(Math.random() * 20 * attempt);
      } finally {
        touched.forEach((task) => this.writer.forget(task));
      }
    }
  }

  /**
   * The trace context of the task's latest message (its `TaskSubmitted` or `UserMessageAppended`): the
   * request the task's queued work is for. Dispatch continues that trace.
   */
  requestTrace(task: TaskRef, within?: PoolClient): Promise<string | undefined> {
    return this.log.requestTrace({ tenantId: task.tenantId, streamId: streamIdOf(task) }, within);
  }

  /**
   * The task's state folded from its stream, for an exchange the view does not show as a task (ADR 0009);
   * with `until`, the state just before the first one for which it holds.
   */
  async state(task: TaskRef, until?: (next: TaskAggregate) => boolean): Promise<TaskAggregate> {
    let state = initialTaskState();
    for (const event of await this.events(task)) {
      const next = evolve(state, event);
      if (until?.(next)) {
        break;
      }
      state = next;
    }
    return state;
  }

  /** The task stream's events, read from the log. */
  async events(task: TaskRef): Promise<TaskEvent[]> {
    const streamId = streamIdOf(task);
    const history = await this.store.readStreams([{ tenantId: task.tenantId, streamId }]);
    return history.get(streamId)?.events ?? [];
  }

  /** Same as {@link execute} inside the caller's transaction (no retry: the caller owns it). */
  async executeIn(
    client: PoolClient,
    task: TaskRef,
    decision: Decision,
    metadata: EventMetadata,
  ): Promise<Execution> {
    const { tenantId } = task;
    const streamId = streamIdOf(task);
    // The writer's cached state of this stream is about to be stale (and forgotten again after the commit).
    this.writer.forget(task);
    this.touched.get(client)?.push(task);
    const history = (await this.store.readStreams([{ tenantId, streamId }], client)).get(streamId);
    const before = foldTask(history?.events ?? []);
    // A command carrying an idempotency key (its causation id) that the stream already holds is a repeat.
    const key = metadata.idempotencyKey;
    if (key && history?.idempotencyKeys.includes(key)) {
      return { before, after: before, events: [] };
    }
    const events = decision(before);
    const after = foldTask(events, before);
    if (events.length === 0 || after.status !== 'present') {
      return { before, after: before, events: [] };
    }
    const change = streamChange(tenantId, streamId, before, events, after, metadata, () =>
      this.ids.eventId(),
    );
    // The same statement as the writer's batches, inside the caller's transaction.
    const refused = await this.store.append([change], client);
    if (refused.size > 0) {
      throw new ConcurrencyConflict(streamId, before.version);
    }
    return { before, after, events };
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

import {
  appendToStream,
  ConcurrencyConflict,
  NOTICE_CHANNEL,
  readStream,
  withTransaction,
  type EventMetadata,
} from '@lib/event-store';
import {
  foldTask,
  TASK_EVENT_SCHEMA_VERSION,
  taskStreamId,
  type TaskAggregate,
  type TaskEvent,
} from '@lib/task-domain';
import { Inject, Injectable } from '@nestjs/common';
import type { Pool, PoolClient } from 'pg';
import { noticesFor } from './notices';
import { syncTaskWork, upsertTaskView } from './projections/task-view.projection';
import { PG_POOL } from './tokens';
import { TaskWriter, type Decision } from './write/task-writer';

export interface Execution {
  before: TaskAggregate;
  after: TaskAggregate;
  events: TaskEvent[];
}

const MAX_TRIES = 4;

/**
 * Task streams for callers that decide one stream at a time: {@link execute} goes through the group-commit
 * writer; {@link executeIn} runs inside a caller's own transaction (the lease sweeper, which locks the work
 * row it acts on): load → decide → append with the expected version → project inline → notify.
 */
@Injectable()
export class TaskRepository {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly writer: TaskWriter,
  ) {}

  async execute(
    tenantId: string,
    taskId: string,
    decision: Decision,
    metadata: EventMetadata,
  ): Promise<Execution> {
    const outcome = await this.writer.write({ tenantId, taskId, decide: decision, metadata });
    switch (outcome.kind) {
      case 'written':
        return { before: outcome.before, after: outcome.after, events: outcome.events };
      case 'unchanged':
        return { before: outcome.state, after: outcome.state, events: [] };
      case 'duplicate':
        throw new Error('a write without a messageId claim cannot be a duplicate');
    }
  }

  /** Runs `work` in a transaction, again from the start when a stream moved on concurrently. */
  async transact<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await withTransaction(this.pool, work);
      } catch (error) {
        if (!(error instanceof ConcurrencyConflict) || attempt >= MAX_TRIES) {
          throw error;
        }
        await sleep(Math.random() * 20 * attempt);
      }
    }
  }

  /** Same as {@link execute} inside the caller's transaction (no retry: the caller owns it). */
  async executeIn(
    client: PoolClient,
    tenantId: string,
    taskId: string,
    decision: Decision,
    metadata: EventMetadata,
  ): Promise<Execution> {
    const streamId = taskStreamId(tenantId, taskId);
    // The writer's cached state of this stream is about to be stale.
    this.writer.forget(tenantId, taskId);
    const history = await readStream<TaskEvent>(client, tenantId, streamId);
    const before = foldTask(history.map((e) => e.event));
    // A command carrying an idempotency key (its causation id) that the stream already holds is a repeat.
    const key = metadata.idempotencyKey;
    if (key && history.some((e) => e.metadata.idempotencyKey === key)) {
      return { before, after: before, events: [] };
    }
    const events = decision(before);
    if (events.length === 0) {
      return { before, after: before, events: [] };
    }
    await appendToStream(
      client,
      tenantId,
      streamId,
      before.version,
      events.map((event) => ({ event, schemaVersion: TASK_EVENT_SCHEMA_VERSION })),
      metadata,
    );
    const after = foldTask(events, before);
    if (after.status === 'present') {
      await upsertTaskView(client, tenantId, after);
      await syncTaskWork(client, tenantId, after);
      const byWorker = metadata.actor.kind === 'agent-worker';
      for (const notice of noticesFor(tenantId, before, events, after, byWorker)) {
        await client.query('SELECT pg_notify($1, $2)', [NOTICE_CHANNEL, JSON.stringify(notice)]);
      }
    }
    return { before, after, events };
  }

  async load(tenantId: string, taskId: string): Promise<TaskAggregate> {
    const events = await readStream<TaskEvent>(this.pool, tenantId, taskStreamId(tenantId, taskId));
    return foldTask(events.map((e) => e.event));
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

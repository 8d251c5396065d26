import {
  appendToStream,
  ConcurrencyConflict,
  NOTICE_CHANNEL,
  readStream,
  withTransaction,
  type EventMetadata,
  type StoredEvent,
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

export interface Execution {
  before: TaskAggregate;
  after: TaskAggregate;
  appended: StoredEvent<TaskEvent>[];
}

/** Decides on the freshest state; returning no events changes nothing. */
export type Decision = (state: TaskAggregate) => TaskEvent[];

const MAX_TRIES = 4;

/**
 * The write path of task streams: load → decide → append with the expected version → project inline →
 * notify, all in one transaction. A concurrency conflict re-reads and decides again.
 */
@Injectable()
export class TaskRepository {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  async execute(
    tenantId: string,
    taskId: string,
    decision: Decision,
    metadata: EventMetadata,
  ): Promise<Execution> {
    return this.transact((client) => this.executeIn(client, tenantId, taskId, decision, metadata));
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
    const history = await readStream<TaskEvent>(client, tenantId, streamId);
    const before = foldTask(history.map((e) => e.event));
    // A command carrying an idempotency key (its causation id) that the stream already holds is a repeat.
    const key = metadata.idempotencyKey;
    if (key && history.some((e) => e.metadata.idempotencyKey === key)) {
      return { before, after: before, appended: [] };
    }
    const events = decision(before);
    if (events.length === 0) {
      return { before, after: before, appended: [] };
    }
    const appended = await appendToStream(
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
    return { before, after, appended };
  }

  async load(tenantId: string, taskId: string): Promise<TaskAggregate> {
    const events = await readStream<TaskEvent>(this.pool, tenantId, taskStreamId(tenantId, taskId));
    return foldTask(events.map((e) => e.event));
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

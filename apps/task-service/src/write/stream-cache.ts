import { taskStreamId, type TaskAggregate } from '@lib/task-domain';
import type { TaskRef } from '@lib/tenancy';

declare const STREAM: unique symbol;

/** A task stream's id as the cache is keyed by it: made only by {@link streamIdOf}, from a branded task. */
export type StreamId = string & { readonly [STREAM]: 'StreamId' };

/** The id of the task's stream. */
export function streamIdOf(task: TaskRef): StreamId {
  return taskStreamId(task.tenantId, task.taskId) as StreamId;
}

/** A task stream's folded state at its version, with the idempotency keys its events carry. */
export interface CachedStream {
  state: TaskAggregate;
  idempotencyKeys: Set<string>;
}

/**
 * The folded state of recently written task streams, so that the writer decides without re-reading a
 * stream it wrote itself. Only a hint: every append is still guarded by the stream's expected version, and
 * a stream another writer moved on is re-read after its conflict. Least recently used entries go first.
 */
export class StreamCache {
  private readonly entries = new Map<StreamId, CachedStream>();

  constructor(private readonly capacity: number) {}

  get(streamId: StreamId): CachedStream | undefined {
    const entry = this.entries.get(streamId);
    if (entry) {
      this.entries.delete(streamId);
      this.entries.set(streamId, entry);
    }
    return entry;
  }

  /** The entry without marking it used. */
  peek(streamId: StreamId): CachedStream | undefined {
    return this.entries.get(streamId);
  }

  set(streamId: StreamId, entry: CachedStream): void {
    this.entries.delete(streamId);
    this.entries.set(streamId, entry);
    if (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) {
        this.entries.delete(oldest.value);
      }
    }
  }

  delete(streamId: StreamId): void {
    this.entries.delete(streamId);
  }
}

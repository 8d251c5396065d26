import type { TaskStreamHistory } from '@lib/event-store';
import type { PresentTask, TaskEvent } from '@lib/task-domain';
import type { TaskId, TenantId } from '@lib/tenancy';
import {
  TaskStore,
  type ChangeRefusal,
  type MessageIdClaim,
  type StreamChange,
} from '../../src/write/task-store';

interface StoredStream {
  events: TaskEvent[];
  idempotencyKeys: string[];
}

/**
 * {@link TaskStore} in memory, with the Postgres store's rules (expected versions, messageId claims, one
 * batch applied per stream or not at all), for unit tests of the write path. Failures can be scripted.
 */
export class InMemoryTaskStore extends TaskStore {
  readonly streams = new Map<string, StoredStream>();
  /** The latest state of every task written, as the task view would hold it. */
  readonly views = new Map<string, PresentTask>();
  /** Claimed messages (messageId and digest) and their tasks. */
  readonly messageIds = new Map<string, TaskId>();
  /** Every batch appended (after scripted failures), in order. */
  readonly batches: StreamChange[][] = [];
  reads = 0;
  /** Thrown by the next appends, one each, before anything is applied. */
  readonly failNextAppends: Error[] = [];
  /** While set, appends wait for it (a commit that takes its time). */
  hold: Promise<void> | null = null;
  /** Appends under way. */
  appending = 0;
  /** Called before a batch is applied: a test can move streams on to make it conflict. */
  beforeAppend: (changes: readonly StreamChange[]) => void = () => undefined;

  readStreams(
    streams: readonly { tenantId: TenantId; streamId: string }[],
  ): Promise<Map<string, TaskStreamHistory>> {
    this.reads += 1;
    const found = new Map<string, TaskStreamHistory>();
    for (const { streamId } of streams) {
      const stream = this.streams.get(streamId);
      if (stream) {
        found.set(streamId, {
          events: [...stream.events],
          idempotencyKeys: [...stream.idempotencyKeys],
        });
      }
    }
    return Promise.resolve(found);
  }

  async append(changes: readonly StreamChange[]): Promise<Map<number, ChangeRefusal>> {
    this.appending += 1;
    try {
      await this.hold;
      return this.apply(changes);
    } finally {
      this.appending -= 1;
    }
  }

  private apply(changes: readonly StreamChange[]): Map<number, ChangeRefusal> {
    const failure = this.failNextAppends.shift();
    if (failure) {
      throw failure;
    }
    this.beforeAppend(changes);
    this.batches.push([...changes]);
    const refused = new Map<number, ChangeRefusal>();
    changes.forEach((change, index) => {
      const claimKey = change.claim ? messageKey(change.tenantId, change.claim) : null;
      if (claimKey !== null && this.messageIds.has(claimKey)) {
        refused.set(index, 'duplicate');
        return;
      }
      const stream = this.streams.get(change.streamId) ?? { events: [], idempotencyKeys: [] };
      if (stream.events.length !== change.expectedVersion) {
        refused.set(index, 'conflict');
        return;
      }
      stream.events.push(...change.events);
      if (change.metadata.idempotencyKey !== undefined) {
        stream.idempotencyKeys.push(change.metadata.idempotencyKey);
      }
      this.streams.set(change.streamId, stream);
      this.views.set(change.streamId, change.after);
      if (claimKey !== null && change.claim) {
        this.messageIds.set(claimKey, change.claim.taskId);
      }
    });
    return refused;
  }

  findMessageId(tenantId: TenantId, claim: MessageIdClaim): Promise<TaskId | null> {
    return Promise.resolve(this.messageIds.get(messageKey(tenantId, claim)) ?? null);
  }

  /** Appends events to a stream behind the writer's back (another replica, the sweeper). */
  appendBehind(streamId: string, events: TaskEvent[]): void {
    const stream = this.streams.get(streamId) ?? { events: [], idempotencyKeys: [] };
    stream.events.push(...events);
    this.streams.set(streamId, stream);
  }
}

function messageKey(tenantId: TenantId, claim: MessageIdClaim): string {
  return JSON.stringify([
    tenantId,
    claim.agentId,
    claim.principalId,
    claim.messageId,
    claim.digest,
  ]);
}

import type { PresentTask } from '@lib/task-domain';
import { taskIdOf, tenantIdOf, type TaskId, type TaskRef } from '@lib/tenancy';
import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import type { CallContext } from '../call-context';
import { NoticeBus } from '../notice-bus';
import { TaskViews, type TaskViewRecord } from '../queries/task-views';
import { TaskWriter } from './task-writer';

/** Backstop when neither a local commit nor a notice says that the task moved. */
const FALLBACK_POLL_MS = 1_000;

/** A waiter of one task: woken by this replica's commits (with the new state) and by notices (a version). */
interface Waiter {
  committed(after: PresentTask): void;
  noticed(version: number): void;
}

/**
 * Waits for a task to reach a state. A change this replica committed wakes the waiter in-process with the
 * new state (no read); a change made elsewhere arrives as a notice and is read from the task view; polling
 * backs both up.
 */
@Injectable()
export class TaskWatch implements OnModuleDestroy {
  private readonly waiters = new Map<string, Set<Waiter>>();
  private readonly unsubscribe: () => void;

  constructor(
    private readonly writer: TaskWriter,
    private readonly bus: NoticeBus,
    private readonly views: TaskViews,
  ) {
    const unsubscribeCommits = writer.onCommitted((task, after) =>
      this.waiters.get(watchKey(task))?.forEach((w) => w.committed(after)),
    );
    const unsubscribeNotices = bus.subscribe((notice) => {
      if (notice.k !== 'task') {
        return;
      }
      // A notice names a task the platform wrote: its ids are trusted, as the rows it was read with.
      const task: TaskRef = { tenantId: tenantIdOf(notice.t), taskId: taskIdOf(notice.id) };
      // Changes made elsewhere (another replica, the sweeper) make the writer's cached state stale.
      writer.moved(task, notice.v);
      const tell = (): void =>
        this.waiters.get(watchKey(task))?.forEach((w) => w.noticed(notice.v));
      // The notice of a commit of this replica's writer can arrive before the commit's own result: when a
      // batch of it holds the task, its end tells the waiters the new state without a read.
      const settling = writer.settling(task);
      if (settling) {
        void settling.then(tell);
      } else {
        tell();
      }
    });
    this.unsubscribe = () => {
      unsubscribeCommits();
      unsubscribeNotices();
    };
  }

  onModuleDestroy(): void {
    this.unsubscribe();
  }

  /**
   * Resolves with the caller's task once `done` holds, or with the latest record when `timeoutMs` passes.
   * `known`: the record the caller already holds (saves the first read). `read`: how the record is read
   * when a change was made elsewhere (default: the task view).
   */
  async waitFor(
    ctx: CallContext,
    taskId: TaskId,
    done: (record: TaskViewRecord) => boolean,
    timeoutMs: number,
    known?: TaskViewRecord,
    read: () => Promise<TaskViewRecord> = () => this.views.get(ctx, taskId),
  ): Promise<TaskViewRecord> {
    const task: TaskRef = { tenantId: ctx.tenantId, taskId };
    const key = watchKey(task);
    // What woke the waiter since it last looked: the newest state committed here, or only "it moved".
    // `seen`: the newest version the waiter knows of; a notice of it or of an older one says nothing new
    // (the notice of the waiter's own accepted message, above all).
    const box: { signal: { after: PresentTask | null } | null; seen: number } = {
      signal: null,
      seen: known?.version ?? 0,
    };
    let notify: () => void = () => undefined;
    const wake = (after: PresentTask | null): void => {
      const held = box.signal?.after ?? null;
      box.signal = { after: after && (!held || after.version > held.version) ? after : held };
      notify();
    };
    const waiter: Waiter = {
      committed: (after) => {
        box.seen = Math.max(box.seen, after.version);
        wake(after);
      },
      noticed: (version) => {
        if (version > box.seen) {
          wake(null);
        }
      },
    };
    const waiters = this.waiters.get(key) ?? new Set<Waiter>();
    waiters.add(waiter);
    this.waiters.set(key, waiters);
    const deadline = Date.now() + timeoutMs;
    try {
      let record = this.newest(task, known) ?? (await read());
      for (;;) {
        box.seen = Math.max(box.seen, record.version);
        const left = deadline - Date.now();
        if (done(record) || left <= 0) {
          return record;
        }
        if (!box.signal) {
          let timer: NodeJS.Timeout | undefined;
          await new Promise<void>((resolve) => {
            notify = resolve;
            timer = setTimeout(resolve, Math.min(left, FALLBACK_POLL_MS));
          });
          clearTimeout(timer);
          notify = () => undefined;
        }
        const woken = box.signal;
        box.signal = null;
        record =
          woken?.after && woken.after.version > record.version
            ? recordOf(woken.after)
            : await read();
      }
    } finally {
      waiters.delete(waiter);
      if (waiters.size === 0) {
        this.waiters.delete(key);
      }
    }
  }

  /** `known`, or the writer's newer state of the task if it holds one. */
  private newest(task: TaskRef, known: TaskViewRecord | undefined): TaskViewRecord | undefined {
    const cached = this.writer.peek(task);
    if (known && cached?.status === 'present' && cached.version > known.version) {
      return recordOf(cached);
    }
    return known;
  }
}

/** The task view record of a folded task (the same document the view row holds, if it has one). */
export function recordOf(state: PresentTask): TaskViewRecord {
  const record = { task: state.task, state: state.task.status.state, version: state.version };
  switch (state.answer.kind) {
    case 'task':
      return record;
    case 'pending':
      return { ...record, exchange: { reply: null } };
    case 'reply':
      return { ...record, exchange: { reply: state.answer.message } };
  }
}

function watchKey(task: TaskRef): string {
  return `${task.tenantId}\u0000${task.taskId}`;
}

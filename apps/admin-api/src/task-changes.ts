import type { AdminApiConfig } from '@lib/config';
import { NoticeListener, type LogCursor, type Notice } from '@lib/event-store';
import { isId, tenantIdOf, type TenantId } from '@lib/ids';
import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { TaskAdminStore, type TaskChange } from './task-admin.store';
import { ADMIN_CONFIG } from './tokens';

/** How often the log is read for changes whose notice was lost (notices are hints). */
const POLL_MS = 1_000;
/** Most tasks whose last sent version the feed remembers (to send each version once). */
const REMEMBERED_TASKS = 10_000;

/** Who watches a tenant's task changes, and which of them. */
export interface ChangeWatcher {
  tenantId: TenantId;
  matches(change: TaskChange): boolean;
  send(change: TaskChange): void;
  /** Ends the watcher's stream (the process drains). */
  end(): void;
}

/**
 * The admin API's live view of task changes (`GET …/tasks/changes`): while anyone watches, it listens to the
 * platform's notices (`a2a_platform`, a `task` notice per committed change) and reads the changed tasks'
 * current state from the view, the notices of a moment read together; and every {@link POLL_MS} it reads the
 * log for changes whose notice was lost (in the relay's order, behind the oldest running transaction, so none
 * is skipped), and at once when the notice connection comes back. Each (task, version) is sent once.
 */
@Injectable()
export class TaskChangeFeed implements OnModuleDestroy {
  private readonly logger = new Logger(TaskChangeFeed.name);
  private readonly watchers = new Map<TenantId, Set<ChangeWatcher>>();
  /** task key → the last version sent, oldest first. */
  private readonly sent = new Map<string, number>();
  /** tenant → tasks whose notice arrived since the last read. */
  private pending = new Map<TenantId, Set<string>>();
  private listener: NoticeListener | null = null;
  private unsubscribe: (() => void)[] = [];
  private timer: NodeJS.Timeout | null = null;
  private cursor: LogCursor | null = null;
  private reading: Promise<void> | null = null;
  private polling = false;
  private failures = 0;

  constructor(
    private readonly store: TaskAdminStore,
    @Inject(ADMIN_CONFIG) private readonly config: AdminApiConfig,
  ) {}

  /** Sends `watcher` the changes of its tenant from now on; the returned function stops that. */
  watch(watcher: ChangeWatcher): () => void {
    const set = this.watchers.get(watcher.tenantId) ?? new Set<ChangeWatcher>();
    set.add(watcher);
    this.watchers.set(watcher.tenantId, set);
    if (!this.listener) {
      this.start();
    }
    return () => {
      set.delete(watcher);
      if (set.size === 0) {
        this.watchers.delete(watcher.tenantId);
      }
      if (this.watchers.size === 0) {
        void this.stop();
      }
    };
  }

  /** Ends every watcher's stream (the drain of the process: clients reconnect to another replica). */
  endAll(): void {
    [...this.watchers.values()].flatMap((set) => [...set]).forEach((watcher) => watcher.end());
  }

  async onModuleDestroy(): Promise<void> {
    this.watchers.clear();
    await this.stop();
  }

  private start(): void {
    const listener = new NoticeListener(this.config.POSTGRES_URL, {
      applicationName: 'a2a-admin:changes',
      // Open while anyone watches, closed when the last one leaves (docs/admin.md).
      ownConnection: true,
      warn: (message) => this.logger.warn(message),
    });
    this.listener = listener;
    this.unsubscribe = [
      listener.subscribe((notice) => this.onNotice(notice)),
      listener.onReconnected(() => this.poll()),
    ];
    void listener.start();
    this.timer = setInterval(() => this.poll(), POLL_MS);
    this.timer.unref();
    this.poll();
  }

  private async stop(): Promise<void> {
    const listener = this.listener;
    this.listener = null;
    this.unsubscribe.forEach((unsubscribe) => unsubscribe());
    this.unsubscribe = [];
    if (this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    }
    this.cursor = null;
    this.pending = new Map();
    this.sent.clear();
    await listener?.stop();
  }

  private onNotice(notice: Notice): void {
    // A tenant no watcher can have (watchers' tenants are ids) is not watched.
    if (notice.k !== 'task' || !isId(notice.t)) {
      return;
    }
    const tenantId = tenantIdOf(notice.t);
    if (!this.watchers.has(tenantId)) {
      return;
    }
    if ((this.sent.get(taskKey(tenantId, notice.id)) ?? 0) >= notice.v) {
      return;
    }
    const tasks = this.pending.get(tenantId) ?? new Set<string>();
    tasks.add(notice.id);
    this.pending.set(tenantId, tasks);
    this.read();
  }

  /**
   * Reads the pending tasks' state, one statement per tenant; notices arriving meanwhile wait for the next. A
   * tenant whose read failed keeps its tasks pending for the next notice or poll.
   */
  private read(): void {
    if (this.reading) {
      return;
    }
    const batch = this.pending;
    this.pending = new Map();
    let failed = false;
    this.reading = Promise.all(
      [...batch].map(async ([tenantId, tasks]) => {
        if (!this.watchers.has(tenantId)) {
          return;
        }
        try {
          this.deliver(tenantId, await this.store.changes(tenantId, [...tasks]));
        } catch (error) {
          failed = true;
          this.failed(error);
          const again = this.pending.get(tenantId) ?? new Set<string>();
          tasks.forEach((task) => again.add(task));
          this.pending.set(tenantId, again);
        }
      }),
    )
      .then(() => undefined)
      .finally(() => {
        this.reading = null;
        if (!failed && this.pending.size > 0) {
          this.read();
        }
      });
  }

  /** Reads the log since the last poll and queues the watched tenants' changed tasks for {@link read}. */
  private poll(): void {
    const listener = this.listener;
    if (this.polling || !listener) {
      return;
    }
    this.polling = true;
    void (async () => {
      try {
        if (!this.cursor) {
          const horizon = await this.store.logHorizon();
          this.cursor = this.listener === listener ? horizon : null;
          return;
        }
        for (let full = true; full && this.cursor && this.listener === listener; ) {
          const changes = await this.store.changedSince(this.cursor);
          if (this.listener !== listener) {
            return;
          }
          this.cursor = changes.next;
          full = changes.full;
          for (const { tenantId, taskId } of changes.tasks) {
            if (this.watchers.has(tenantId)) {
              const tasks = this.pending.get(tenantId) ?? new Set<string>();
              tasks.add(taskId);
              this.pending.set(tenantId, tasks);
            }
          }
        }
        if (this.pending.size > 0) {
          this.read();
        }
        this.failures = 0;
      } catch (error) {
        this.failed(error);
      } finally {
        this.polling = false;
      }
    })();
  }

  private deliver(tenantId: TenantId, changes: TaskChange[]): void {
    const watchers = this.watchers.get(tenantId);
    for (const change of changes) {
      const key = taskKey(tenantId, change.taskId);
      if ((this.sent.get(key) ?? 0) >= change.version) {
        continue;
      }
      this.sent.delete(key);
      this.sent.set(key, change.version);
      if (this.sent.size > REMEMBERED_TASKS) {
        const oldest = this.sent.keys().next().value;
        if (oldest !== undefined) {
          this.sent.delete(oldest);
        }
      }
      watchers?.forEach((watcher) => {
        if (watcher.matches(change)) {
          watcher.send(change);
        }
      });
    }
  }

  /** A failed read is retried by the next notice or poll; an outage is logged once. */
  private failed(error: unknown): void {
    if (this.failures++ === 0) {
      this.logger.warn(`task changes not read (retried within ${POLL_MS} ms): ${String(error)}`);
    }
  }
}

function taskKey(tenantId: TenantId, taskId: string): string {
  return `${tenantId}\u0000${taskId}`;
}

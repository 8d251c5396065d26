import type { TaskServiceConfig } from '@lib/config';
import { isTransientDatabaseError } from '@lib/event-store';
import { STALE_AFTER_REFRESHES, WorkerSessionStore } from '@lib/work-queue';
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { TASK_SERVICE_CONFIG } from '../tokens';
import type { WorkerSession } from './worker-session';

/** How soon after a registration or a disconnect the replica's sessions are written. */
const SOON_MS = 100;

/**
 * Makes this replica's worker sessions visible to operators on every replica (`ops.worker_sessions`, read by
 * the admin API): all of them in one statement, every WORKER_SESSIONS_REFRESH_MS and {@link SOON_MS} after a
 * session opens or closes, changes in between coalesced. Nothing here runs on the path of a request, a
 * heartbeat or an update; a write that fails is tried again at the next refresh. On shutdown the replica's
 * rows are removed; a replica that dies leaves them to go stale (see the migration).
 */
@Injectable()
export class WorkerRegistry implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(WorkerRegistry.name);
  private readonly live = new Set<WorkerSession>();
  private timer: NodeJS.Timeout | null = null;
  private soon: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;
  /** Refreshes failed since the last one that worked (an outage is logged once). */
  private failures = 0;

  constructor(
    private readonly store: WorkerSessionStore,
    @Inject(TASK_SERVICE_CONFIG) private readonly config: TaskServiceConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => this.refresh(), this.config.WORKER_SESSIONS_REFRESH_MS);
    this.timer.unref();
  }

  opened(session: WorkerSession): void {
    this.live.add(session);
    this.refreshSoon();
  }

  closed(session: WorkerSession): void {
    if (this.live.delete(session)) {
      this.refreshSoon();
    }
  }

  /** Stops refreshing and removes this replica's rows (its sessions end with the process). */
  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    if (this.timer) {
      clearInterval(this.timer);
    }
    if (this.soon) {
      clearTimeout(this.soon);
    }
    await this.running;
    await this.write([]).catch((error: unknown) =>
      this.logger.warn(`worker sessions of this replica not removed: ${String(error)}`),
    );
  }

  private refreshSoon(): void {
    if (this.soon || this.stopped) {
      return;
    }
    this.soon = setTimeout(() => {
      this.soon = null;
      this.refresh();
    }, SOON_MS);
    this.soon.unref();
  }

  /** One write at a time; a refresh asked for meanwhile runs once more after it. */
  private refresh(): void {
    if (this.stopped) {
      return;
    }
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.write([...this.live])
      .then(() => {
        if (this.failures > 0) {
          this.logger.log(`worker sessions written again after ${this.failures} failure(s)`);
          this.failures = 0;
        }
      })
      .catch((error: unknown) => {
        if (!isTransientDatabaseError(error) || this.failures === 0) {
          this.logger.warn(`worker sessions not written (next refresh retries): ${String(error)}`);
        }
        this.failures += 1;
      })
      .finally(() => {
        this.running = null;
        if (this.again) {
          this.again = false;
          this.refresh();
        }
      });
  }

  private async write(sessions: WorkerSession[]): Promise<void> {
    const refreshMs = this.config.WORKER_SESSIONS_REFRESH_MS;
    await this.store.replace(
      this.config.REPLICA_ID,
      sessions,
      STALE_AFTER_REFRESHES * refreshMs,
      this.config.WORKER_SESSIONS_RETAIN_STALE_MS,
    );
  }
}

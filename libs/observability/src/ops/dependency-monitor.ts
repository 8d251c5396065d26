import { Logger, type LoggerService } from '@nestjs/common';
import type { ProcessLifecycle, SharedDependency } from './lifecycle';
import type { PlatformMetrics } from './metrics';

/** A check that does not answer within this counts as down. */
const CHECK_TIMEOUT_MS = 2_000;

/** What the last check found of one shared dependency. */
export interface DependencyState {
  status: 'up' | 'down';
  /** Why it is down: the first failing component's error. */
  message?: string;
  /** Since when (ISO 8601) it has had this status, as this process saw it. */
  since: string;
}

/**
 * Checks the shared dependencies the process's components registered (Postgres, Kafka, Redis) every
 * interval and keeps what it found for `/readyz`'s body and `a2a_dependency_up`; logs when one goes away and
 * when it is back. It never decides readiness: an outage of a dependency every replica shares would empty
 * the Services, where clients are better served by an answer (503 + Retry-After, docs/failure-model.md).
 */
export class DependencyMonitor {
  private readonly states = new Map<SharedDependency, DependencyState>();
  private timer: NodeJS.Timeout | null = null;
  private round: Promise<void> | null = null;

  constructor(
    private readonly lifecycle: ProcessLifecycle,
    private readonly registry: PlatformMetrics,
    private readonly intervalMs: number,
    private readonly logger: LoggerService = new Logger('Dependencies'),
  ) {}

  /** Checks now, then every interval, until {@link stop}. */
  start(): void {
    if (this.timer) {
      return;
    }
    void this.checkNow();
    this.timer = setInterval(() => void this.checkNow(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  /** The state of each dependency the process uses, as last checked. */
  snapshot(): Record<string, DependencyState> {
    return Object.fromEntries(this.states);
  }

  /** One round of checks (a round already running is joined, not doubled). */
  checkNow(): Promise<void> {
    this.round ??= this.check().finally(() => (this.round = null));
    return this.round;
  }

  private async check(): Promise<void> {
    const results = await Promise.all(
      this.lifecycle.dependencyChecks().map(async ({ dependency, component, check }) => {
        try {
          await withTimeout(check(), CHECK_TIMEOUT_MS);
          return { dependency, failure: null };
        } catch (error) {
          const reason = error instanceof Error ? error.message : String(error);
          return { dependency, failure: `${component}: ${reason}` };
        }
      }),
    );
    const found = new Map<SharedDependency, string | null>();
    for (const { dependency, failure } of results) {
      // Down when any component's check failed: the first failure says why.
      found.set(dependency, found.get(dependency) ?? failure);
    }
    for (const dependency of this.states.keys()) {
      if (!found.has(dependency)) {
        // No component uses it any more (it was shut down).
        this.states.delete(dependency);
        this.registry.dependencyUp.remove({ dependency });
      }
    }
    for (const [dependency, failure] of found) {
      this.record(dependency, failure);
    }
  }

  private record(dependency: SharedDependency, failure: string | null): void {
    const status = failure === null ? 'up' : 'down';
    const previous = this.states.get(dependency);
    const since = previous?.status === status ? previous.since : new Date().toISOString();
    this.states.set(
      dependency,
      failure === null ? { status, since } : { status, message: failure, since },
    );
    this.registry.dependencyUp.set({ dependency }, failure === null ? 1 : 0);
    if (previous?.status === status || (!previous && status === 'up')) {
      return;
    }
    if (status === 'down') {
      this.logger.warn(
        `${dependency} is unavailable (${failure ?? ''}); the process stays ready and answers what needs it with a retryable error`,
      );
    } else {
      this.logger.log(`${dependency} is available again (down since ${previous?.since ?? '?'})`);
    }
  }
}

export function withTimeout(work: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    work,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

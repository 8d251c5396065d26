import type { LoggerService, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';

/** Resolves when the thing checked is usable; rejects with why not. */
export type ReadinessCheck = () => Promise<void>;

/** A dependency that other processes share: its outage shows, but never makes a process unready. */
export type SharedDependency = 'postgres' | 'kafka' | 'redis';

/** One component's check of a shared dependency. */
export interface DependencyCheck {
  dependency: SharedDependency;
  /** The component that uses it (a process may host several, each with its own connection). */
  component: string;
  check: ReadinessCheck;
}

/**
 * One part of a graceful drain (docs/deploy.md "Drain"): stop taking new work, finish or hand back what is
 * in flight, close long-lived streams so that clients resume elsewhere. It must settle by `deadline` (epoch
 * ms); whatever it has not finished by then is cut by the close that follows.
 */
export type DrainStep = (deadline: number) => Promise<void>;

export type LifecycleState = 'starting' | 'serving' | 'draining';

export interface DrainReport {
  step: string;
  ms: number;
  outcome: 'done' | 'timed out' | 'failed';
}

/**
 * Where the process stands for the ops listener: starting (not ready; maybe waiting for something it says),
 * serving (ready while its own readiness checks pass) or draining (never ready again). Components register
 * their own readiness checks, the checks of the shared dependencies they use (reported, never a reason to be
 * unready: docs/failure-model.md "Readiness") and the steps of their drain while they run, and remove them
 * when they stop, so one process that hosts several apps (`npm start`) reports and drains them all.
 */
export class ProcessLifecycle {
  private current: LifecycleState = 'starting';
  private waiting: string | null = null;
  private readonly checks = new Map<string, ReadinessCheck>();
  private readonly dependencies = new Map<string, DependencyCheck>();
  private readonly steps = new Map<string, DrainStep>();

  get state(): LifecycleState {
    return this.current;
  }

  /** What a starting process waits for (the schema, …), for `/readyz`; null once it no longer waits. */
  get waitingFor(): string | null {
    return this.current === 'starting' ? this.waiting : null;
  }

  waitFor(reason: string | null): void {
    this.waiting = reason;
  }

  /** The process listens and has started its work. */
  serving(): void {
    if (this.current === 'starting') {
      this.current = 'serving';
    }
  }

  get draining(): boolean {
    return this.current === 'draining';
  }

  addReadinessCheck(name: string, check: ReadinessCheck): () => void {
    this.checks.set(name, check);
    return () => {
      if (this.checks.get(name) === check) {
        this.checks.delete(name);
      }
    };
  }

  readinessChecks(): [string, ReadinessCheck][] {
    return [...this.checks];
  }

  /** Registers a component's check of a shared dependency; returns what removes it. */
  addDependency(
    dependency: SharedDependency,
    component: string,
    check: ReadinessCheck,
  ): () => void {
    const key = `${dependency}/${component}`;
    const entry = { dependency, component, check };
    this.dependencies.set(key, entry);
    return () => {
      if (this.dependencies.get(key) === entry) {
        this.dependencies.delete(key);
      }
    };
  }

  dependencyChecks(): DependencyCheck[] {
    return [...this.dependencies.values()];
  }

  addDrainStep(name: string, step: DrainStep): () => void {
    this.steps.set(name, step);
    return () => {
      if (this.steps.get(name) === step) {
        this.steps.delete(name);
      }
    };
  }

  /**
   * Turns the process unready for good and runs every drain step at once, each bounded by `graceMs`.
   * Never rejects: a failed or late step is reported, and the close that follows cuts what is left.
   */
  async drain(graceMs: number): Promise<DrainReport[]> {
    this.current = 'draining';
    const deadline = Date.now() + graceMs;
    return Promise.all(
      [...this.steps].map(async ([step, run]): Promise<DrainReport> => {
        const started = Date.now();
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<'timed out'>((resolve) => {
          timer = setTimeout(() => resolve('timed out'), Math.max(0, deadline - started));
        });
        const outcome = await Promise.race([
          run(deadline).then(
            () => 'done' as const,
            () => 'failed' as const,
          ),
          late,
        ]);
        clearTimeout(timer);
        return { step, ms: Date.now() - started, outcome };
      }),
    );
  }
}

/** The lifecycle of this process. */
export const lifecycle = new ProcessLifecycle();

/**
 * How a start-up step (the schema, `prepareSchema` of `@lib/event-store`) tells what it waits for: in
 * `/readyz` while the process starts, and in its log.
 */
export function startupReport(
  logger: LoggerService,
  state: ProcessLifecycle = lifecycle,
): { waiting: (reason: string | null) => void; warn: (message: string) => void } {
  return {
    waiting: (reason) => state.waitFor(reason),
    warn: (message) => {
      logger.warn(message);
    },
  };
}

/**
 * A component's registrations with the process (readiness checks, drain steps, metrics sources): made when
 * the application has started, removed when it shuts down. Each app's `*-ops.ts` provider extends it.
 */
export abstract class OpsRegistrations implements OnApplicationBootstrap, OnApplicationShutdown {
  private removers: (() => void)[] = [];

  /** Registers what the component tells the ops listener; returns what removes each registration. */
  protected abstract register(): (() => void)[];

  onApplicationBootstrap(): void {
    this.removers = this.register();
  }

  onApplicationShutdown(): void {
    this.removers.splice(0).forEach((remove) => remove());
  }
}

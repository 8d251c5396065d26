import type { OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';

/** Resolves when the dependency is usable; rejects with why not. */
export type ReadinessCheck = () => Promise<void>;

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
 * Where the process stands for the ops listener: starting (not ready), serving (ready while its readiness
 * checks pass) or draining (never ready again). Components register the checks of the dependencies they
 * need and the steps of their drain while they run, and remove them when they stop, so one process that
 * hosts several apps (`npm start`) reports and drains them all.
 */
export class ProcessLifecycle {
  private current: LifecycleState = 'starting';
  private readonly checks = new Map<string, ReadinessCheck>();
  private readonly steps = new Map<string, DrainStep>();

  get state(): LifecycleState {
    return this.current;
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

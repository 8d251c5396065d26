import { spawn, type ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import type { PodPlan, ProbePlan } from './plan';

/** How one replica ended a graceful termination. */
export interface Shutdown {
  replica: string;
  /** The preStop pause, then SIGTERM to exit. */
  preStopMs: number;
  exitMs: number;
  exitCode: number | null;
  /** Still running at terminationGracePeriodSeconds: the kubelet's SIGKILL ended it. */
  killedAtDeadline: boolean;
  /** What the process logged as its own shutdown time (`shut down in N ms`), if it did. */
  reportedMs: number | null;
}

/** Something a kubelet would act on or an operator would see. */
export interface ReplicaEvent {
  at: number;
  replica: string;
  what: 'liveness failed' | 'exited unexpectedly' | 'not ready in time';
  detail: string;
}

const OUTPUT_LIMIT = 64_000;
/** The kubelet's first back-off before it restarts a container that exited. */
const RESTART_BACKOFF_MS = 10_000;
/**
 * The least time a liveness probe is given to answer. The manifests' timeoutSeconds (2 s) is a latency a busy
 * machine (CI's) can miss three times in a row without anything being wrong; a process that does not answer
 * at all is what the drill must catch (issue 30: no rule of the drill is a speed). Readiness probes keep the
 * manifests' timeouts: a late answer only takes the replica out of the endpoints for a while.
 */
const LIVENESS_TIMEOUT_FLOOR_MS = 10_000;

/**
 * One pod slot of a workload on this machine: its process (`node <entry> …` from the repository root, as
 * the image runs it from /app), its local ports (kept across restarts, as a pod keeps its address when the
 * kubelet restarts its container), and the kubelet's probes with the manifest's period, timeout and
 * thresholds. Ready means: the readiness probe passed and the replica is not terminating; only ready
 * replicas are endpoints.
 */
export class Replica {
  private child: ChildProcess | null = null;
  private exited: Promise<number | null> = Promise.resolve(null);
  private output = '';
  private probing: AbortController | null = null;
  private readyNow = false;
  private terminating = false;
  /** Set while a stop was asked for, so that an exit is not reported as a crash. */
  private stopping = false;
  startedAt = 0;
  killedAt: number | null = null;

  constructor(
    readonly name: string,
    readonly plan: PodPlan,
    readonly env: Record<string, string>,
    /** Container port → local port. */
    readonly localPorts: Map<number, number>,
    private readonly repoRoot: string,
    private readonly onEvent: (event: ReplicaEvent) => void,
  ) {}

  /** Serving: ready, and not being terminated. */
  get ready(): boolean {
    return this.readyNow && !this.terminating && this.running;
  }

  get running(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** The local port of a container port. */
  port(containerPort: number): number {
    const local = this.localPorts.get(containerPort);
    if (local === undefined) {
      throw new Error(`${this.name}: no container port ${containerPort}`);
    }
    return local;
  }

  /** The last lines the process printed. */
  get log(): string {
    return this.output;
  }

  start(): void {
    const [node, entry, ...args] = this.plan.argv;
    if (node !== 'node' || entry === undefined) {
      throw new Error(`${this.name}: the drill runs \`node <script> …\` commands only`);
    }
    this.output = '';
    this.readyNow = false;
    this.terminating = false;
    this.stopping = false;
    this.killedAt = null;
    this.startedAt = Date.now();
    const child = spawn(process.execPath, [entry, ...args], {
      cwd: this.repoRoot,
      env: this.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const keep = (chunk: Buffer): void => {
      this.output = (this.output + chunk.toString('utf8')).slice(-OUTPUT_LIMIT);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    void this.exited.then(() => {
      this.readyNow = false;
      if (this.stopping || this.child !== child) {
        return;
      }
      this.onEvent({
        at: Date.now(),
        replica: this.name,
        what: 'exited unexpectedly',
        detail: this.output.slice(-1_000),
      });
      // restartPolicy Always: the kubelet starts the container again after its first back-off.
      setTimeout(() => {
        if (!this.stopping && this.child === child) {
          this.start();
        }
      }, RESTART_BACKOFF_MS);
    });
    this.child = child;
    this.probe();
  }

  /** Waits until the readiness probe passes (a Job: until the process exits 0). */
  async waitReady(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.ready) {
      if (Date.now() > deadline) {
        this.onEvent({
          at: Date.now(),
          replica: this.name,
          what: 'not ready in time',
          detail: this.output.slice(-2_000),
        });
        throw new Error(
          `${this.name} not ready after ${timeoutMs} ms:\n${this.output.slice(-2_000)}`,
        );
      }
      await sleep(50);
    }
  }

  /** Runs a Job's pod to completion; returns its exit code. */
  async complete(timeoutMs: number): Promise<number | null> {
    this.stopping = true;
    const timer = setTimeout(() => this.child?.kill('SIGKILL'), timeoutMs);
    const code = await this.exited;
    clearTimeout(timer);
    this.stopProbes();
    return code;
  }

  /**
   * A pod's graceful termination: out of the endpoints at once, the preStop pause, SIGTERM, then SIGKILL at
   * terminationGracePeriodSeconds (counted from the start of preStop, as the kubelet does).
   */
  async terminate(): Promise<Shutdown> {
    const started = Date.now();
    this.terminating = true;
    this.stopping = true;
    // The kubelet stops liveness probing a terminating container; readiness no longer matters to endpoints.
    this.stopProbes();
    await sleep(this.plan.preStopMs);
    const signalled = Date.now();
    this.child?.kill('SIGTERM');
    let killedAtDeadline = false;
    const timer = setTimeout(
      () => {
        killedAtDeadline = true;
        this.child?.kill('SIGKILL');
      },
      Math.max(0, started + this.plan.terminationGraceMs - Date.now()),
    );
    const exitCode = await this.exited;
    clearTimeout(timer);
    const reported = /shut down in (\d+) ms/.exec(this.output)?.[1];
    return {
      replica: this.name,
      preStopMs: signalled - started,
      exitMs: Date.now() - signalled,
      exitCode,
      killedAtDeadline,
      reportedMs: reported === undefined ? null : Number(reported),
    };
  }

  /** SIGKILL: the process dies mid-whatever; the kubelet sees the exit and the pod is unready at once. */
  async kill(): Promise<void> {
    this.stopping = true;
    this.killedAt = Date.now();
    this.stopProbes();
    this.child?.kill('SIGKILL');
    await this.exited;
  }

  /** Stops the probes and the process (SIGTERM, SIGKILL after the grace), without measuring anything. */
  async stop(): Promise<void> {
    if (this.running) {
      await this.terminate();
    }
    this.stopProbes();
  }

  private stopProbes(): void {
    this.probing?.abort();
    this.probing = null;
  }

  private probe(): void {
    this.stopProbes();
    const control = new AbortController();
    this.probing = control;
    if (this.plan.readiness) {
      void this.runProbe(this.plan.readiness, control.signal, (ready) => {
        this.readyNow = ready;
      });
    }
    if (this.plan.liveness) {
      const liveness = {
        ...this.plan.liveness,
        timeoutMs: Math.max(this.plan.liveness.timeoutMs, LIVENESS_TIMEOUT_FLOOR_MS),
      };
      void this.runProbe(liveness, control.signal, (alive, detail) => {
        if (!alive) {
          this.onEvent({ at: Date.now(), replica: this.name, what: 'liveness failed', detail });
        }
      });
    }
  }

  /** Probes every period; reports a change of state after successThreshold / failureThreshold results. */
  private async runProbe(
    probe: ProbePlan,
    signal: AbortSignal,
    onChange: (up: boolean, detail: string) => void,
  ): Promise<void> {
    const url = `http://127.0.0.1:${this.port(probe.containerPort)}${probe.path}`;
    let successes = 0;
    let failures = 0;
    let up: boolean | null = null;
    await sleep(probe.initialDelayMs);
    while (!signal.aborted) {
      const started = Date.now();
      let detail = '';
      try {
        const response = await fetch(url, { signal: AbortSignal.timeout(probe.timeoutMs) });
        await response.arrayBuffer();
        detail = `HTTP ${response.status}`;
        if (response.status >= 200 && response.status < 400) {
          successes += 1;
          failures = 0;
        } else {
          failures += 1;
          successes = 0;
        }
      } catch (error) {
        detail = String((error as { cause?: unknown }).cause ?? error);
        failures += 1;
        successes = 0;
      }
      if (signal.aborted) {
        return;
      }
      if (successes >= probe.successThreshold && up !== true) {
        up = true;
        onChange(true, detail);
      } else if (
        failures >= probe.failureThreshold &&
        (up !== false || failures % probe.failureThreshold === 0)
      ) {
        up = false;
        onChange(false, detail);
      }
      await sleep(Math.max(0, started + probe.periodMs - Date.now()));
    }
  }
}

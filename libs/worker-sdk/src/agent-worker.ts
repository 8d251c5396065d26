import { status as GrpcStatus } from '@grpc/grpc-js';
import type { workerPb } from '@lib/a2a-protocol';
import { hostname } from 'node:os';
import type { AgentExecutor } from './agent-executor';
import { backoffDelayMs, pause } from './backoff';
import type { WorkerAgent } from './execution-span';
import { HeartbeatCadence } from './heartbeat-cadence';
import { TaskExecution } from './task-execution';
import { WorkerChannel, type SessionEnd, type WorkerSession } from './worker-channel';
import { consoleWorkerLogger, type WorkerLogger } from './worker-logger';
import { WorkerError } from './worker.errors';

/** `INITIALIZED → RUNNING → DRAINING → STOPPED`, or `FAILED` when `run()` rejects. */
export type WorkerState = 'INITIALIZED' | 'RUNNING' | 'DRAINING' | 'STOPPED' | 'FAILED';

export interface AgentWorkerOptions {
  /** `host:port` of the platform's WorkerService (the task-service's worker port). */
  target: string;
  /** The worker credential's secret; it binds the worker to one (tenant, agent) pair. */
  credential: string;
  /** The agent. */
  executor: AgentExecutor;
  /** Free-form name shown to operators. Default: `<hostname>-<pid>`. */
  identity?: string;
  /** How many tasks the platform may assign at once. Default: 8. */
  maxConcurrentTasks?: number;
  /**
   * On `shutdown()`, how long in-flight tasks may keep running before their signals are aborted and the
   * worker stops (their leases then expire and the platform re-dispatches them). Default: 10 000 ms.
   */
  shutdownGraceMs?: number;
  /** Where the worker logs. Default: one line per entry on stdout/stderr, without debug entries. */
  logger?: WorkerLogger;
  /** Use TLS (system roots) instead of a plaintext connection. Default: false. */
  tls?: boolean;
}

/** How long to wait for `welcome` after `hello` before giving the session up. */
const WELCOME_TIMEOUT_MS = 10_000;
/** Longest wait for one `ReleaseLease` answer at shutdown. */
const RELEASE_TIMEOUT_MS = 2_000;

/** Status codes that mean the credential itself was refused. */
const REFUSED: ReadonlySet<GrpcStatus> = new Set([
  GrpcStatus.UNAUTHENTICATED,
  GrpcStatus.PERMISSION_DENIED,
]);

interface Running {
  readonly execution: TaskExecution;
  /** Settles when the execution has ended (it never rejects). */
  readonly settled: Promise<void>;
}

/**
 * Runs an {@link AgentExecutor} as an agent worker (modelled on Temporal's `Worker`): it holds a session
 * with the platform, runs the tasks assigned to it, renews their leases with heartbeats, and reconnects
 * with backoff whenever the session breaks, keeping its in-flight tasks going.
 *
 * ```ts
 * const worker = AgentWorker.create({ target, credential, executor });
 * process.once('SIGTERM', () => void worker.shutdown());
 * await worker.run();
 * ```
 */
export class AgentWorker {
  private currentState: WorkerState = 'INITIALIZED';
  private readonly channel: WorkerChannel;
  /** Leases abandoned at shutdown, handed back once the session has closed. */
  private readonly handBack: workerPb.LeaseRef[] = [];
  private readonly logger: WorkerLogger;
  private readonly identity: string;
  private readonly maxConcurrentTasks: number;
  private readonly shutdownGraceMs: number;
  /** The assignments being worked on, by task id. */
  private readonly executions = new Map<string, Running>();
  /** Aborted when the worker stops holding sessions. */
  private readonly stopping = new AbortController();
  /** The session the platform welcomed, while it lasts. */
  private live: WorkerSession | undefined;
  private ticker: NodeJS.Timeout | undefined;
  private tickEveryMs = 0;
  private readonly heartbeats = new HeartbeatCadence();
  private leaseTtlMs = 0;
  /** The agent the platform's welcome named (the worker's credential is bound to it). */
  private agent: WorkerAgent = { tenantId: '', agentId: '' };
  private everWelcomed = false;
  private running: Promise<void> | undefined;
  private draining: Promise<void> | undefined;

  private constructor(private readonly options: AgentWorkerOptions) {
    this.logger = options.logger ?? consoleWorkerLogger;
    this.identity = options.identity ?? `${hostname()}-${process.pid}`;
    this.maxConcurrentTasks = options.maxConcurrentTasks ?? 8;
    this.shutdownGraceMs = options.shutdownGraceMs ?? 10_000;
    this.channel = new WorkerChannel(options.target, options.credential, options.tls ?? false);
  }

  /** Validates the options and builds a worker; nothing connects before `run()`. */
  static create(options: AgentWorkerOptions): AgentWorker {
    const problems = [
      options.target.trim() === '' && 'target is empty',
      options.credential.trim() === '' && 'credential is empty',
      options.maxConcurrentTasks !== undefined &&
        !(Number.isInteger(options.maxConcurrentTasks) && options.maxConcurrentTasks >= 1) &&
        'maxConcurrentTasks must be a positive integer',
      options.shutdownGraceMs !== undefined &&
        !(options.shutdownGraceMs >= 0) &&
        'shutdownGraceMs must not be negative',
    ].filter((problem): problem is string => typeof problem === 'string');
    if (problems.length > 0) {
      throw new WorkerError('INVALID_OPTIONS', `invalid worker options: ${problems.join('; ')}`);
    }
    return new AgentWorker(options);
  }

  get state(): WorkerState {
    return this.currentState;
  }

  /**
   * Connects and serves assignments until `shutdown()` completes. Rejects (state `FAILED`) only when the
   * platform refuses the credential on the first connection; any other broken session is reconnected.
   */
  run(): Promise<void> {
    if (this.currentState !== 'INITIALIZED') {
      const message = `run() needs an INITIALIZED worker, not ${this.currentState}`;
      return Promise.reject(new WorkerError('ILLEGAL_STATE', message));
    }
    this.currentState = 'RUNNING';
    this.running = this.holdSessions().then(
      () => {
        this.currentState = 'STOPPED';
      },
      (error: unknown) => {
        this.currentState = 'FAILED';
        for (const { execution } of this.executions.values()) {
          execution.abandon();
        }
        throw error;
      },
    );
    return this.running;
  }

  /**
   * Stops taking new work, lets in-flight tasks finish for `shutdownGraceMs`, aborts the rest and closes
   * the session. Resolves once the worker is stopped; calling it again returns the same promise.
   */
  shutdown(): Promise<void> {
    if (this.currentState === 'INITIALIZED') {
      this.currentState = 'STOPPED';
      return Promise.resolve();
    }
    this.draining ??= this.drain();
    return this.draining;
  }

  private async drain(): Promise<void> {
    if (this.currentState === 'RUNNING') {
      this.currentState = 'DRAINING';
      this.logger.info('draining', {
        inFlight: this.executions.size,
        graceMs: this.shutdownGraceMs,
      });
      // No task starts while draining, so the ones running now are all there is to wait for.
      const graceOver = new AbortController();
      await Promise.race([
        Promise.all([...this.executions.values()].map((running) => running.settled)),
        pause(this.shutdownGraceMs, graceOver.signal),
      ]);
      graceOver.abort();
      for (const { execution } of this.executions.values()) {
        if (execution.holdsLease) {
          this.handBack.push(execution.leaseRef());
        }
        execution.abandon();
      }
    }
    this.stopping.abort();
    await this.running?.catch(() => undefined);
  }

  /** Holds one session after another until the worker stops. */
  private async holdSessions(): Promise<void> {
    try {
      for (let failures = 0; !this.stopping.signal.aborted; ) {
        const { welcomed, end } = await this.holdSession();
        failures = welcomed ? 0 : failures + 1;
        if (this.stopping.signal.aborted) {
          break;
        }
        if (REFUSED.has(end.code) && !this.everWelcomed) {
          const message = `the platform refused the worker: ${end.message}`;
          throw new WorkerError('CONNECT_REJECTED', message, { code: GrpcStatus[end.code] });
        }
        const delayMs = backoffDelayMs(Math.max(0, failures - 1));
        // While the platform stays down, say so now and then rather than on every attempt.
        const level = failures <= 1 || failures % 20 === 0 ? 'warn' : 'debug';
        this.logger[level]('session ended; reconnecting', {
          code: GrpcStatus[end.code],
          reason: end.message,
          failures,
          inFlight: this.executions.size,
          delayMs,
        });
        await pause(delayMs, this.stopping.signal);
      }
    } finally {
      clearInterval(this.ticker);
      // The session is closed, so the platform cannot grant these straight back to this worker.
      await this.releaseLeases();
      this.channel.close();
    }
  }

  /**
   * Hands the tasks abandoned at shutdown back to the platform, which queues them for another worker at
   * once. Best effort: a lease that could not be handed back expires as it would have without it.
   */
  private async releaseLeases(): Promise<void> {
    const leases = this.handBack.splice(0);
    await Promise.all(
      leases.map(async (lease) => {
        const result = await this.channel.release(
          lease,
          'worker shutting down',
          RELEASE_TIMEOUT_MS,
        );
        if (!result.ok) {
          this.logger.warn('could not hand a task back; its lease will expire', {
            taskId: lease.taskId,
            err: result.failure.message,
          });
        }
      }),
    );
    if (leases.length > 0) {
      this.logger.info('handed tasks back', { count: leases.length });
    }
  }

  /** One `Connect` stream, from `hello` to its end. */
  private async holdSession(): Promise<{ welcomed: boolean; end: SessionEnd }> {
    let welcomed = false;
    let timedOut = false;
    const session = this.channel.connect((message) => {
      if (message.welcome) {
        welcomed = true;
        this.onWelcome(session, message.welcome);
      } else if (welcomed) {
        this.onPlatformMessage(message);
      }
    });
    const closeSession = (): void => session.close();
    this.stopping.signal.addEventListener('abort', closeSession, { once: true });
    const welcomeTimer = setTimeout(() => {
      if (!welcomed) {
        timedOut = true;
        session.close();
      }
    }, WELCOME_TIMEOUT_MS);
    session.write({
      hello: {
        identity: this.identity,
        maxConcurrentTasks: this.maxConcurrentTasks,
        leases: [...this.executions.values()]
          .filter(({ execution }) => execution.holdsLease)
          .map(({ execution }) => execution.leaseRef()),
        takesAssignmentBatches: true,
      },
    });
    const end = await session.ended;
    clearTimeout(welcomeTimer);
    this.stopping.signal.removeEventListener('abort', closeSession);
    if (this.live === session) {
      this.live = undefined;
    }
    if (timedOut) {
      const message = `no welcome within ${WELCOME_TIMEOUT_MS} ms (is the credential valid?)`;
      return { welcomed, end: { code: GrpcStatus.DEADLINE_EXCEEDED, message } };
    }
    return { welcomed, end };
  }

  private onWelcome(session: WorkerSession, welcome: workerPb.Welcome): void {
    this.live = session;
    this.channel.workerId = welcome.workerId;
    // Zero means the platform left the field unset (proto3); fall back to its documented defaults.
    this.leaseTtlMs = welcome.leaseTtlMs || 10_000;
    this.agent = { tenantId: welcome.tenantId, agentId: welcome.agentId };
    const heartbeatIntervalMs = welcome.heartbeatIntervalMs || 2_000;
    this.logger.info(this.everWelcomed ? 'reconnected' : 'connected', {
      target: this.options.target,
      workerId: welcome.workerId,
      tenantId: welcome.tenantId,
      agentId: welcome.agentId,
      inFlight: this.executions.size,
    });
    this.everWelcomed = true;
    if (this.tickEveryMs !== heartbeatIntervalMs) {
      clearInterval(this.ticker);
      this.tickEveryMs = heartbeatIntervalMs;
      this.ticker = setInterval(() => this.tick(), this.tickEveryMs);
    }
    // Tell the new session at once which leases this worker still holds, so they are renewed and counted.
    this.tick(true);
  }

  /**
   * Gives up leases gone stale, then renews the others on the live session. A worker that holds no lease
   * heartbeats only every few ticks ({@link HeartbeatCadence}; at once with `atOnce`): its heartbeat
   * renews nothing and only keeps its session's last heartbeat fresh for operators (ADR 0016).
   */
  private tick(atOnce = false): void {
    const now = Date.now();
    const held: TaskExecution[] = [];
    for (const { execution } of this.executions.values()) {
      execution.expireIfStale(now);
      if (execution.holdsLease) {
        held.push(execution);
      }
    }
    if (!this.heartbeats.due(held.length > 0, atOnce)) {
      return;
    }
    if (this.live?.write({ heartbeat: { leases: held.map((e) => e.leaseRef()) } })) {
      for (const execution of held) {
        execution.renewed(now);
      }
    }
  }

  private onPlatformMessage(message: workerPb.PlatformMessage): void {
    if (message.assignment) {
      this.onAssignment(message.assignment);
    } else if (message.assignments) {
      // Granted together: started in this turn, so what they produce in it is sent together too.
      message.assignments.assignments.forEach((assignment) => this.onAssignment(assignment));
    } else if (message.cancel) {
      this.current(message.cancel)?.requestCancel();
    } else if (message.leaseRevoked) {
      this.current(message.leaseRevoked)?.loseLease(
        message.leaseRevoked.reason || 'revoked by the platform',
      );
    }
  }

  /** The execution a cancel or revocation is about, if it still runs under that lease epoch. */
  private current(ref: { taskId: string; leaseEpoch: number }): TaskExecution | undefined {
    const execution = this.executions.get(ref.taskId)?.execution;
    return execution?.leaseEpoch === ref.leaseEpoch ? execution : undefined;
  }

  private onAssignment(assignment: workerPb.Assignment): void {
    const { taskId, leaseEpoch } = assignment;
    if (this.currentState !== 'RUNNING') {
      // The protocol has no way to hand work back: the lease expires and the platform re-dispatches.
      this.logger.warn('not starting a task while draining', { taskId });
      return;
    }
    const previous = this.executions.get(taskId)?.execution;
    if (previous && previous.leaseEpoch >= leaseEpoch) {
      return;
    }
    previous?.loseLease(`superseded by lease epoch ${leaseEpoch}`);
    if (this.executions.size >= this.maxConcurrentTasks) {
      this.logger.warn('running more tasks than maxConcurrentTasks', { taskId });
    }
    const execution = new TaskExecution(assignment, {
      executor: this.options.executor,
      sender: this.channel,
      logger: this.logger,
      leaseTtlMs: this.leaseTtlMs,
      agent: this.agent,
    });
    const settled = execution
      .run()
      .catch((error: unknown) =>
        this.logger.error('task execution crashed', { taskId, err: error }),
      )
      .finally(() => {
        if (this.executions.get(taskId)?.execution === execution) {
          this.executions.delete(taskId);
        }
      });
    this.executions.set(taskId, { execution, settled });
  }
}

import { Logger } from '@nestjs/common';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

const FIRST_RESTART_DELAY_MS = 100;
const MAX_RESTART_DELAY_MS = 5_000;
/** A child that ran this long before it died is restarted quickly again (its crash was not a loop). */
const STABLE_RUN_MS = 30_000;

/**
 * Runs the example agents as real worker processes (`apps/agents`), and on request the bridge and the example
 * A2A server, restarting one that dies, with backoff.
 * Each process connects to the task-service over gRPC like any external worker would. Every child holds an
 * IPC channel to this process and exits when it closes, so the workers never outlive the platform, even when
 * it is killed with SIGKILL.
 */
export class WorkerSupervisor {
  private readonly logger = new Logger(WorkerSupervisor.name);
  private readonly children = new Map<string, ChildProcess>();
  private stopping = false;

  constructor(
    private readonly target: string,
    private readonly secretFor: (agentId: string) => string,
    private readonly env: Record<string, string | undefined>,
  ) {}

  /** Runs the example agent `agentId` as a worker. */
  start(agentId: string): void {
    this.run(agentId, join(__dirname, '..', '..', 'agents', 'src', 'main.js'), [agentId], {
      WORKER_TARGET: this.target,
      WORKER_SECRET: this.secretFor(agentId),
    });
  }

  /** Runs the bridge, which serves the imported agents over the same worker port. */
  startBridge(): void {
    this.run('bridge', join(__dirname, '..', '..', 'bridge', 'src', 'main.js'), [], {
      WORKER_TARGET: this.target,
    });
  }

  /** Runs the example A2A server (`examples/upstream-agent`) on its HTTP and gRPC ports. */
  startUpstreamExample(httpPort: number, grpcPort: number): void {
    const root = join(__dirname, '..', '..', '..', '..');
    this.run('upstream-example', join(root, 'examples', 'upstream-agent', 'server.mjs'), [], {
      UPSTREAM_HTTP_PORT: String(httpPort),
      UPSTREAM_GRPC_PORT: String(grpcPort),
    });
  }

  private run(
    name: string,
    entry: string,
    args: string[],
    env: Record<string, string>,
    restartDelayMs = FIRST_RESTART_DELAY_MS,
  ): void {
    const child = spawn(process.execPath, [entry, ...args], {
      env: { ...this.env, ...env },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const startedAt = Date.now();
    this.children.set(name, child);
    child.on('exit', (code, signal) => {
      this.children.delete(name);
      if (this.stopping) {
        return;
      }
      const delayMs =
        Date.now() - startedAt > STABLE_RUN_MS ? FIRST_RESTART_DELAY_MS : restartDelayMs;
      this.logger.warn(`${name} exited (${signal ?? code}); restarting in ${delayMs} ms`);
      setTimeout(
        () => this.run(name, entry, args, env, Math.min(delayMs * 2, MAX_RESTART_DELAY_MS)),
        delayMs,
      );
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(
      [...this.children.values()].map(
        (child) =>
          new Promise<void>((resolve) => {
            child.once('exit', () => resolve());
            child.kill('SIGTERM');
            // Past the worker SDK's default drain grace (10 s), in-flight tasks are given up.
            setTimeout(() => child.kill('SIGKILL'), 15_000).unref();
          }),
      ),
    );
  }
}

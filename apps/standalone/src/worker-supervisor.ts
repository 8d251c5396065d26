import { Logger } from '@nestjs/common';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

const MAX_RESTART_DELAY_MS = 5_000;

/**
 * Runs the example agents as real worker processes (`apps/agents`), restarting one that dies, with backoff.
 * Each process connects to the task-service over gRPC like any external worker would.
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

  start(agentId: string, restartDelayMs = 100): void {
    const entry = join(__dirname, '..', '..', 'agents', 'src', 'main.js');
    const child = spawn(process.execPath, [entry, agentId], {
      env: { ...this.env, WORKER_TARGET: this.target, WORKER_SECRET: this.secretFor(agentId) },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    this.children.set(agentId, child);
    child.on('exit', (code, signal) => {
      this.children.delete(agentId);
      if (this.stopping) {
        return;
      }
      this.logger.warn(`worker ${agentId} exited (${signal ?? code}); restarting`);
      setTimeout(
        () => this.start(agentId, Math.min(restartDelayMs * 2, MAX_RESTART_DELAY_MS)),
        restartDelayMs,
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

/**
 * A server the bench runs as a child process of its own (the reference server, the durable peer): `node
 * server.mjs` in its installed folder, what it prints kept, stopped with SIGTERM (SIGKILL after 5 s).
 */
import { processEnv } from '@lib/config';
import { sleep } from '@lib/testing';
import { spawn, type ChildProcess } from 'node:child_process';

const STOP_TIMEOUT_MS = 5_000;

export class ServerProcess {
  private output = '';

  private constructor(private readonly child: ChildProcess) {
    const keep = (chunk: Buffer): void => {
      this.output = (this.output + chunk.toString('utf8')).slice(-16_000);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
  }

  /**
   * Starts `node <nodeArgs> server.mjs` in `dir` with `env` (and PATH); resolves once `ready` says from what
   * it printed that it listens, or rejects with what it printed after `timeoutMs` or when it exits.
   */
  static async start(
    what: string,
    dir: string,
    env: Record<string, string>,
    nodeArgs: readonly string[],
    ready: (output: string) => boolean,
    timeoutMs: number,
  ): Promise<ServerProcess> {
    const child = spawn(process.execPath, [...nodeArgs, 'server.mjs'], {
      cwd: dir,
      env: { PATH: processEnv()['PATH'] ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const server = new ServerProcess(child);
    const deadline = Date.now() + timeoutMs;
    while (!ready(server.output)) {
      if (!server.running || Date.now() > deadline) {
        await server.stop();
        throw new Error(`${what} did not start:\n${server.output.slice(-4_000)}`);
      }
      await sleep(50);
    }
    return server;
  }

  get pid(): number {
    return this.child.pid ?? 0;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** What it printed (the last 16 000 characters). */
  get log(): string {
    return this.output;
  }

  /** SIGTERM, SIGKILL if it has not exited after 5 s. */
  async stop(): Promise<void> {
    if (!this.running) {
      return;
    }
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  }
}

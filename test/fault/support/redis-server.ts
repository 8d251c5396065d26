import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * A private Redis server of a fault test (`redis-server` from the machine), without persistence: killing it
 * loses every key, which is the fault the push dispatcher must survive (its truth is in Postgres).
 */
export class RedisServer {
  private child: ChildProcess | null = null;

  private constructor(readonly port: number) {}

  static async start(port: number): Promise<RedisServer> {
    const server = new RedisServer(port);
    await server.launch();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** SIGKILL: every key is gone. */
  async kill(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }
  }

  /** A fresh, empty server on the same port. */
  async launch(): Promise<void> {
    this.child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    for (let attempt = 0; attempt < 100; attempt++) {
      if (await accepts(this.port)) {
        return;
      }
      await sleep(100);
    }
    throw new Error(`redis-server on port ${this.port} did not start`);
  }
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

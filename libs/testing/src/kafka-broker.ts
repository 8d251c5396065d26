import { processEnv } from '@lib/config';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { commandOutcome } from './command-outcome';
import { freePort, repoRoot, sleep } from './platform-processes';

const execFileAsync = promisify(execFile);

/** Seconds the script may wait for readiness (its KAFKA_START_TIMEOUT) and for a graceful stop. */
const START_TIMEOUT_SECONDS = 90;
const STOP_TIMEOUT_SECONDS = 30;
/** The start is retried on fresh ports this often when another process took a free port first. */
const PORT_ATTEMPTS = 3;

/**
 * A private single-node Kafka broker for tests that stop, restart or kill it: `scripts/kafka/broker.sh` with a
 * state dir (pid file, config, logs, data) in a temp dir and free ports of its own, so the shared broker on 9092
 * stays untouched. It runs the version pinned in scripts/kafka/pom.xml from the shared jar cache. Callers own
 * its life: `start()` in beforeAll, `destroy()` in afterAll.
 */
export class KafkaBroker {
  private isRunning = false;
  private destroying: Promise<void> | undefined;

  private constructor(
    /** The temp dir holding the broker's pid file, config, logs and data. */
    readonly stateDir: string,
    private port: number,
    private controllerPort: number,
  ) {}

  /** Starts a broker on two free ports; resolves once it answers metadata requests. */
  static async start(): Promise<KafkaBroker> {
    const stateDir = await mkdtemp(join(tmpdir(), 'a2a-kafka-'));
    const broker = new KafkaBroker(stateDir, 0, 0);
    try {
      for (let attempt = 1; ; attempt++) {
        [broker.port, broker.controllerPort] = await twoFreePorts();
        try {
          await broker.startAgain();
          return broker;
        } catch (err) {
          // freePort() only guarantees a port was free a moment ago: another process may have bound it.
          if (
            attempt >= PORT_ATTEMPTS ||
            !/is taken|is served by|already in use/i.test(String(err))
          ) {
            throw err;
          }
        }
      }
    } catch (err) {
      await broker.destroy();
      throw err;
    }
  }

  /** The client listener as `host:port`, for a client's `brokers` list. */
  get bootstrap(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** Whether the broker was started and has not been stopped or killed since (as far as this object knows). */
  get running(): boolean {
    return this.isRunning;
  }

  /** A graceful stop and a start on the same ports with the same data. */
  async restart(): Promise<void> {
    await this.stop();
    await this.startAgain();
  }

  /** A graceful stop (SIGTERM; SIGKILL after 30 s). A no-op when the broker is not running. */
  async stop(): Promise<void> {
    if (!this.isRunning) {
      return;
    }
    this.isRunning = false;
    await this.script('stop');
  }

  /** SIGKILL: the broker dies mid-whatever, as in a crash; `startAgain()` recovers its logs. */
  async kill(): Promise<void> {
    if (!this.isRunning) {
      return;
    }
    this.isRunning = false;
    const pidFile = join(this.stateDir, 'broker.pid');
    const pid = Number((await readFile(pidFile, 'utf8')).trim());
    if (!Number.isInteger(pid) || pid <= 0) {
      throw new Error(`KafkaBroker: no pid in ${pidFile}`);
    }
    process.kill(pid, 'SIGKILL');
    const deadline = Date.now() + 10_000;
    while (await alive(pid)) {
      if (Date.now() > deadline) {
        throw new Error(`KafkaBroker: pid ${pid} still alive 10 s after SIGKILL`);
      }
      await sleep(50);
    }
  }

  /** Starts the stopped broker again (same ports, same data; a no-op when it runs); resolves once it is ready. */
  async startAgain(): Promise<void> {
    if (this.isRunning) {
      return;
    }
    if (this.destroying) {
      throw new Error(`KafkaBroker ${this.stateDir} is destroyed`);
    }
    await this.script('start');
    this.isRunning = true;
  }

  /** Stops the broker (errors ignored) and removes its state dir. Idempotent. */
  destroy(): Promise<void> {
    this.destroying ??= (async () => {
      this.isRunning = false;
      // 'stop' acts only on the pid file of this state dir, so it is safe whatever ran before.
      await this.script('stop').catch(() => undefined);
      await rm(this.stateDir, { recursive: true, force: true });
    })();
    return this.destroying;
  }

  private async script(command: 'start' | 'stop'): Promise<string> {
    const script = join(repoRoot(), 'scripts', 'kafka', 'broker.sh');
    try {
      const { stdout, stderr } = await execFileAsync('bash', [script, command], {
        env: {
          ...processEnv(),
          KAFKA_STATE_DIR: this.stateDir,
          // Set explicitly: an inherited KAFKA_DATA_DIR would point this broker at another one's data.
          KAFKA_DATA_DIR: join(this.stateDir, 'data'),
          KAFKA_PORT: String(this.port),
          KAFKA_CONTROLLER_PORT: String(this.controllerPort),
          KAFKA_SMOKE: '0',
          KAFKA_HEAP_OPTS: '-Xmx384m -Xms384m',
          KAFKA_START_TIMEOUT: String(START_TIMEOUT_SECONDS),
          KAFKA_STOP_TIMEOUT: String(STOP_TIMEOUT_SECONDS),
        },
        // A first run on a machine also fetches the broker jars with Maven.
        timeout: (START_TIMEOUT_SECONDS + STOP_TIMEOUT_SECONDS + 300) * 1_000,
        maxBuffer: 4 * 1024 * 1024,
      });
      return stdout + stderr;
    } catch (err) {
      throw new Error(
        `broker.sh ${command} failed for the broker in ${this.stateDir} (port ${this.port}): ` +
          commandOutcome(err),
        { cause: err },
      );
    }
  }
}

async function twoFreePorts(): Promise<[number, number]> {
  const first = await freePort();
  let second = await freePort();
  while (second === first) {
    second = await freePort();
  }
  return [first, second];
}

/**
 * Alive, or a zombie with threads still exiting (which still hold the broker's sockets). A killed broker,
 * detached from its starter, stays a zombie until pid 1 reaps it, which some container inits do late or never.
 */
async function alive(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  let status: string;
  try {
    status = await readFile(`/proc/${pid}/status`, 'utf8');
  } catch {
    // Gone in the meantime; or no procfs (not Linux), where kill(pid, 0) has the last word.
    return !existsSync('/proc');
  }
  const zombie = /^State:\s*Z/m.test(status);
  const threads = /^Threads:\s*(\d+)/m.exec(status)?.[1];
  return !zombie || threads !== '1';
}

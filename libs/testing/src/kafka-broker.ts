import { processEnv } from '@lib/config';
import {
  AclPermissionTypes,
  AclResourceTypes,
  Kafka,
  logLevel,
  ResourcePatternTypes,
  type AclOperationTypes,
} from 'kafkajs';
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

/** What a SCRAM user may do on one topic or consumer group, as a Strimzi KafkaUser's `acls` say it. */
export interface KafkaGrant {
  resource: 'topic' | 'group';
  name: string;
  operations: AclOperationTypes[];
}

/** A broker listener like a secured cluster's (Strimzi's TLS listener with SCRAM users). */
export interface SecureListenerOptions {
  /** The SCRAM-SHA-512 users it knows: name → password. */
  scramUsers: Readonly<Record<string, string>>;
}

/**
 * A private single-node Kafka broker for tests that stop, restart or kill it: `scripts/kafka/broker.sh` with a
 * state dir (pid file, config, logs, data) in a temp dir and free ports of its own, so the shared broker on 9092
 * stays untouched. It runs the version pinned in scripts/kafka/pom.xml from the shared jar cache. Callers own
 * its life: `start()` in beforeAll, `destroy()` in afterAll.
 *
 * With `secure`, it also has a SASL_SSL listener (SCRAM-SHA-512, a certificate signed by a CA of its own, ACLs
 * enforced): clients of {@link secureBootstrap} trust {@link caFile} and log in as one of the SCRAM users,
 * which are allowed only what ACLs grant them; the plaintext listener ({@link bootstrap}) is the super user
 * that creates topics and ACLs.
 */
export class KafkaBroker {
  private isRunning = false;
  private destroying: Promise<void> | undefined;

  private constructor(
    /** The temp dir holding the broker's pid file, config, logs and data. */
    readonly stateDir: string,
    private readonly secure: SecureListenerOptions | undefined,
    private port = 0,
    private controllerPort = 0,
    private securePort = 0,
  ) {}

  /** Starts a broker on free ports; resolves once it answers metadata requests. */
  static async start(options: { secure?: SecureListenerOptions } = {}): Promise<KafkaBroker> {
    const stateDir = await mkdtemp(join(tmpdir(), 'a2a-kafka-'));
    const broker = new KafkaBroker(stateDir, options.secure);
    try {
      for (let attempt = 1; ; attempt++) {
        // The third is the SASL_SSL listener's (unused without `secure`).
        [broker.port, broker.controllerPort, broker.securePort] = await threeFreePorts();
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

  /** The SASL_SSL listener as `host:port` (a broker started with `secure` only). */
  get secureBootstrap(): string {
    if (!this.secure) {
      throw new Error('KafkaBroker: started without a secure listener');
    }
    return `127.0.0.1:${this.securePort}`;
  }

  /** The PEM file of the CA that signed the SASL_SSL listener's certificate (made by broker.sh). */
  get caFile(): string {
    return join(this.stateDir, 'tls', 'ca.crt');
  }

  /**
   * Through the plaintext listener, whose anonymous user is the super user: creates `topics` (three
   * partitions each) and allows `user` what `grants` say, nothing else.
   */
  async prepare(topics: string[], user: string, grants: KafkaGrant[]): Promise<void> {
    const admin = new Kafka({ brokers: [this.bootstrap], logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      await admin.createTopics({
        topics: topics.map((topic) => ({ topic, numPartitions: 3 })),
        waitForLeaders: true,
      });
      await admin.createAcls({
        acl: grants.flatMap(({ resource, name, operations }) =>
          operations.map((operation) => ({
            resourceType: resource === 'topic' ? AclResourceTypes.TOPIC : AclResourceTypes.GROUP,
            resourceName: name,
            resourcePatternType: ResourcePatternTypes.LITERAL,
            principal: `User:${user}`,
            host: '*',
            operation,
            permissionType: AclPermissionTypes.ALLOW,
          })),
        ),
      });
    } finally {
      await admin.disconnect();
    }
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
          // Set explicitly, like KAFKA_DATA_DIR: an inherited port would give a plain broker a second listener.
          KAFKA_SASL_SSL_PORT: this.secure ? String(this.securePort) : '',
          KAFKA_SCRAM_USERS: Object.entries(this.secure?.scramUsers ?? {})
            .map(([name, password]) => `${name}:${password}`)
            .join(' '),
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

/** Three distinct free ports (freePort never hands out a port twice in one process). */
async function threeFreePorts(): Promise<[number, number, number]> {
  return [await freePort(), await freePort(), await freePort()];
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

/**
 * The relay as a process (`dist/apps/relay/src/main.js`; `npm run build` first) while writers append task
 * events continuously, then the topic compared with the log (every event present, each task's generations in
 * increasing order on one partition, duplicates counted and printed: at-least-once allows them):
 *
 * 1. the relay is SIGKILLed mid-way and restarted: it must resume from its checkpoint and lose nothing;
 * 2. the Kafka broker is restarted under load (`scripts/kafka/broker.sh restart`): the relay must ride it out.
 *
 * The broker restart disturbs everything using the broker, so it lives only here (end-to-end files run one at
 * a time), and the broker is started again at the end whatever happens.
 */
import { createPool } from '@lib/event-store';
import {
  createTestDatabase,
  kafkaBrokers,
  LOCAL_KAFKA_BROKER,
  PlatformProcess,
  repoRoot,
  uniqueTopic,
  type TestDatabase,
} from '@lib/testing';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import type { Pool } from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  newTasks,
  randomInt,
  readLog,
  relayCheckpoint,
  runWriters,
  sleep,
  waitForCatchUp,
  type Cursor,
  type LogTask,
} from '../../apps/relay/test/support/task-log';
import {
  compareTopicToLog,
  createTopic,
  deleteTopic,
  describeComparison,
  readTopic,
} from '../../apps/relay/test/support/topic';

const RELAY_NAME = 'task-events';
const EVENTS = 3_000;
const BROKER_SCRIPT_TIMEOUT_MS = 150_000;

interface Scenario {
  db: TestDatabase;
  writers: Pool;
  brokers: string[];
  topic: string;
  relay: PlatformProcess;
  tasks: Map<string, LogTask>;
}

const open: Scenario[] = [];

async function startScenario(prefix: string): Promise<Scenario> {
  const brokers = await kafkaBrokers();
  const topic = uniqueTopic(`relay-e2e-${prefix}`);
  await createTopic(brokers, topic);
  const db = await createTestDatabase(`relay_e2e_${prefix}`);
  const relay = new PlatformProcess('relay', 'apps/relay/src/main.js', [], {
    POSTGRES_URL: db.url,
    KAFKA_BROKERS: brokers.join(','),
    TASK_EVENTS_TOPIC: topic,
    RELAY_NAME,
    RELAY_BATCH_SIZE: '100',
    RELAY_IDLE_POLL_MS: '100',
  });
  const scenario: Scenario = {
    db,
    writers: createPool(db.url, { max: 9, applicationName: 'a2a-test:writers' }),
    brokers,
    topic,
    relay,
    tasks: new Map(),
  };
  open.push(scenario);
  relay.start();
  await relay.waitForOutput(/relaying to/);
  return scenario;
}

async function closeScenario(scenario: Scenario): Promise<void> {
  await scenario.relay.stop();
  await scenario.writers.end();
  await deleteTopic(scenario.brokers, scenario.topic);
  await scenario.db.drop();
}

/** The position the relay said it resumed after (`relaying to <topic> after <xid>/<position>`). */
function resumedAfter(log: string): Cursor | null {
  const match = /relaying to \S+ after (\d+)\/(\d+)/.exec(log);
  return match ? { transactionId: match[1]!, position: match[2]! } : null;
}

interface Kill {
  /** Events committed when the relay was frozen before the kill. */
  atCommitted: number;
  committed: () => number;
  /** Events after the checkpoint when the relay died. */
  backlog: number;
  /** The checkpoint the dead relay left. */
  checkpoint: Cursor | null;
  /** Where the restarted relay said it resumed. */
  resumedAfter: Cursor | null;
}

async function backlogAfter(pool: Pool, cursor: Cursor | null): Promise<number> {
  const result = await pool.query<{ n: string }>(
    `SELECT count(*) AS n FROM events.messages
      WHERE (transaction_id, global_position) > ($1::xid8, $2::bigint)`,
    [cursor?.transactionId ?? '0', cursor?.position ?? '0'],
  );
  return Number(result.rows[0]?.n ?? 0);
}

function isAfter(a: Cursor, b: Cursor | null): boolean {
  if (!b) {
    return true;
  }
  const [ax, bx] = [BigInt(a.transactionId), BigInt(b.transactionId)];
  return ax > bx || (ax === bx && BigInt(a.position) > BigInt(b.position));
}

/**
 * SIGKILLs the relay while it is working through a backlog: once it is publishing (its checkpoint moved past
 * `since`), it is frozen (SIGSTOP) for a second while the writers go on, let go (SIGCONT) for a few ms, so
 * that it is reading, publishing and checkpointing batches, then killed; then started again.
 */
async function killMidBatch(
  scenario: Scenario,
  kill: Kill,
  since: Cursor | null,
  frozen: () => void,
): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const checkpoint = await relayCheckpoint(scenario.db.pool, RELAY_NAME);
    if (checkpoint && isAfter(checkpoint, since)) {
      break;
    }
    if (Date.now() > deadline) {
      throw new Error(`the relay made no progress past ${JSON.stringify(since)} within 30 s`);
    }
    await sleep(50);
  }
  const pid = scenario.relay.pid;
  if (pid === undefined) {
    throw new Error('the relay is not running');
  }
  kill.atCommitted = kill.committed();
  process.kill(pid, 'SIGSTOP');
  frozen();
  await sleep(1_000);
  process.kill(pid, 'SIGCONT');
  await sleep(randomInt(5, 40));
  await scenario.relay.kill();
  // A statement the relay sent just before it died still runs to its end in its Postgres backend (a
  // checkpoint of a batch Kafka had acknowledged may land after the process is gone): give it a moment.
  await sleep(300);
  kill.checkpoint = await relayCheckpoint(scenario.db.pool, RELAY_NAME);
  kill.backlog = await backlogAfter(scenario.db.pool, kill.checkpoint);
  scenario.relay.start();
  await scenario.relay.waitForOutput(/relaying to/);
  kill.resumedAfter = resumedAfter(scenario.relay.log);
}

function broker(
  command: 'restart' | 'start' | 'status',
): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      'bash',
      [join(repoRoot(), 'scripts/kafka/broker.sh'), command],
      { timeout: BROKER_SCRIPT_TIMEOUT_MS, env: { ...process.env, KAFKA_SMOKE: '0' } },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, output: `${stdout}${stderr}` });
      },
    );
  });
}

function brokerPid(statusOutput: string): string | null {
  return /pid (\d+)/.exec(statusOutput)?.[1] ?? null;
}

async function compareAfterCatchUp(scenario: Scenario, label: string) {
  const caughtUpMs = await waitForCatchUp(scenario.db.pool, RELAY_NAME, 90_000);
  const log = await readLog(scenario.db.pool);
  const records = await readTopic(scenario.brokers, scenario.topic, 60_000);
  const result = compareTopicToLog(log, records, scenario.tasks);
  console.log(
    `[${label}] relay caught up ${Math.round(caughtUpMs)} ms after the writers (and any broker restart) were done\n` +
      describeComparison(result) +
      (result.duplicates.length > 0
        ? `\nduplicates (allowed, at-least-once):\n${result.duplicates
            .map((d) => `  ${d.event} ×${d.copies} at ${d.offsets.join(' ')}`)
            .join('\n')}`
        : ''),
  );
  return { log, records, result };
}

afterEach(async () => {
  for (const scenario of open.splice(0)) {
    await closeScenario(scenario).catch((error: unknown) => console.error(error));
  }
});

afterAll(async () => {
  // Whatever happened above, leave the broker running for everything else.
  const started = await broker('start');
  if (started.code !== 0) {
    console.error(`[relay e2e] broker.sh start failed after the suite:\n${started.output}`);
  }
}, BROKER_SCRIPT_TIMEOUT_MS + 10_000);

describe('relay process under load', () => {
  it('SIGKILLed mid-way (twice) and restarted: resumes from its checkpoint, every event on the topic, order per task kept', async () => {
    const scenario = await startScenario('kill');
    const tasks = newTasks(['acme', 'globex'], 120);
    tasks.forEach((t) => scenario.tasks.set(t.taskId, t));
    const kills: Kill[] = [];
    let killing: Promise<void> = Promise.resolve();
    let killFailed: Error | undefined;
    let committedNow = 0;
    // Each kill freezes the relay while the writers still have events to write, however slow the machine:
    // the writers do not pass the next gate before the relay of the kill before it is frozen.
    const frozen = [deferred(), deferred()];
    const load = await runWriters(scenario.writers, {
      writers: 8,
      tasks,
      events: EVENTS,
      eventsPerSecond: 250,
      maxSleepMs: 5,
      notify: true,
      timeoutMs: 170_000,
      gates: [
        { at: EVENTS / 2, open: frozen[0]!.promise },
        { at: (EVENTS * 3) / 4, open: frozen[1]!.promise },
      ],
      onProgress: (committed) => {
        committedNow = committed;
        const due = [EVENTS / 4, EVENTS / 2][kills.length];
        if (due !== undefined && committed >= due) {
          const previous = kills[kills.length - 1];
          const kill: Kill = {
            atCommitted: committed,
            committed: () => committedNow,
            backlog: 0,
            checkpoint: null,
            resumedAfter: null,
          };
          const gate = frozen[kills.length]!;
          kills.push(kill);
          killing = killing
            .then(() => killMidBatch(scenario, kill, previous?.checkpoint ?? null, gate.open))
            .catch((error: unknown) => {
              killFailed ??= error instanceof Error ? error : new Error(String(error));
            })
            // A kill that failed lets the writers finish; the failure is thrown below.
            .finally(gate.open);
        }
      },
    });
    await killing;
    if (killFailed) {
      throw killFailed;
    }
    const { log, records, result } = await compareAfterCatchUp(scenario, 'relay SIGKILL');
    console.log(
      `[relay SIGKILL] ${load.committed} events in ${Math.round(load.elapsedMs)} ms; kills:\n` +
        kills
          .map(
            (k) =>
              `  frozen after ${k.atCommitted} commits, killed with ${k.backlog} events not yet checkpointed; ` +
              `checkpoint ${JSON.stringify(k.checkpoint)}, restarted after ${JSON.stringify(k.resumedAfter)}`,
          )
          .join('\n'),
    );

    expect(kills).toHaveLength(2);
    for (const kill of kills) {
      expect(kill.atCommitted).toBeLessThan(EVENTS);
      // The relay died with work in hand, and the new process resumed from the checkpoint it left.
      expect(kill.backlog).toBeGreaterThan(0);
      expect(kill.checkpoint).not.toBeNull();
      expect(kill.resumedAfter).toEqual(kill.checkpoint);
    }
    expect(log.length).toBe(load.committed);
    expect(log.length).toBeGreaterThanOrEqual(EVENTS);
    expect(result.missing, describeComparison(result)).toEqual([]);
    expect(result.unknown, describeComparison(result)).toEqual([]);
    expect(result.outOfOrder, describeComparison(result)).toEqual([]);
    expect(result.splitTasks, describeComparison(result)).toEqual([]);
    expect(result.mismatched, describeComparison(result)).toEqual([]);
    expect(records.length).toBe(log.length + result.duplicateRecords);
    expect(scenario.relay.running).toBe(true);
  }, 180_000);

  it('Kafka broker restarted under load: the relay rides it out, every event on the topic, order per task kept', async () => {
    const before = await broker('status');
    const brokers = await kafkaBrokers();
    expect(
      before.code === 0 && brokers.includes(LOCAL_KAFKA_BROKER),
      `this test restarts the broker of scripts/kafka/broker.sh on ${LOCAL_KAFKA_BROKER}; tests use ` +
        `${brokers.join(',')}; broker.sh status said:\n${before.output}`,
    ).toBe(true);
    const scenario = await startScenario('broker');
    const tasks = newTasks(['acme', 'globex'], 120);
    tasks.forEach((t) => scenario.tasks.set(t.taskId, t));
    let restart: Promise<{ code: number; output: string; ms: number }> | undefined;
    const load = await runWriters(scenario.writers, {
      writers: 8,
      tasks,
      events: EVENTS,
      eventsPerSecond: 200,
      maxSleepMs: 5,
      notify: true,
      timeoutMs: 90_000,
      onProgress: (committed) => {
        if (!restart && committed >= EVENTS / 5) {
          const started = Date.now();
          restart = broker('restart').then((r) => ({ ...r, ms: Date.now() - started }));
        }
      },
    });
    const restarted = await restart!;
    const after = await broker('status');
    console.log(
      `[broker restart] writers: ${load.committed} events in ${Math.round(load.elapsedMs)} ms; ` +
        `broker.sh restart took ${restarted.ms} ms (exit ${restarted.code}); pid ${brokerPid(
          before.output,
        )} -> ${brokerPid(after.output)}\n${restarted.output.trim()}`,
    );
    expect(restarted.code, restarted.output).toBe(0);
    expect(restarted.output).toMatch(/stopping pid/);
    expect(restarted.output).toMatch(/ready on/);
    expect(after.code, after.output).toBe(0);
    expect(brokerPid(after.output)).not.toBe(brokerPid(before.output));

    const { log, records, result } = await compareAfterCatchUp(scenario, 'broker restart');
    const interruptions = scenario.relay.log.match(/relay interrupted/g)?.length ?? 0;
    console.log(`[broker restart] the relay logged ${interruptions} interruption(s)`);
    expect(log.length).toBe(load.committed);
    expect(log.length).toBeGreaterThanOrEqual(EVENTS);
    expect(result.missing, describeComparison(result)).toEqual([]);
    expect(result.unknown, describeComparison(result)).toEqual([]);
    expect(result.outOfOrder, describeComparison(result)).toEqual([]);
    expect(result.splitTasks, describeComparison(result)).toEqual([]);
    expect(result.mismatched, describeComparison(result)).toEqual([]);
    expect(records.length).toBe(log.length + result.duplicateRecords);
    expect(scenario.relay.running, scenario.relay.log.slice(-4_000)).toBe(true);
  }, 300_000);
});

/** A promise and the function that settles it. */
function deferred(): { promise: Promise<void>; open: () => void } {
  let open = (): void => undefined;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/**
 * `npm run bench:batch`: what the write path's one statement per batch (`events.append_task_batch`) costs
 * Postgres, alone, per task and per batch size. Each task is a blocking SendMessage to `echo` as the writer
 * appends it: one batch accepts it with its lease (TaskSubmitted, TaskLeaseGranted, messageId claim, audit
 * record), the next one ends it (WORKING, artifact, COMPLETED). Built by the real store
 * (`PostgresTaskStore.append`), on one connection, on a fresh database per run.
 *
 * Per batch size: wall time and the CPU of the connection's backend (/proc, so Postgres must run on this
 * machine) per task. `--against <git revision>` runs each size also on a database given the function files of
 * that revision (alternated, same batches; docs/adr/0014-function-files.md), to measure a change of the
 * function: `--against HEAD` compares the working tree's definitions with the committed ones. Options:
 * `--sizes 1,16,64,200`, `--tasks N` (tasks per run, default 3,000), `--rounds N` (runs per size and side,
 * default 3).
 */
import { sealAuditEntry } from '@lib/audit';
import { loadConfig, testSchema } from '@lib/config';
import type { EventMetadata } from '@lib/event-store';
import { createPool, migrationsDir } from '@lib/event-store';
import {
  foldTask,
  initialTaskState,
  type PresentTask,
  type TaskAggregate,
  type TaskEvent,
} from '@lib/task-domain';
import { agentIdOf, principalIdOf, taskIdOf, tenantIdOf } from '@lib/tenancy';
import { createTestDatabase, type TestDatabase } from '@lib/testing';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { dirname } from 'node:path';
import { performance } from 'node:perf_hooks';
import { v7 as uuidv7 } from 'uuid';
import {
  PostgresTaskStore,
  streamChange,
  type StreamChange,
} from '../apps/task-service/src/write/task-store';
import { fmt, printMachine, table } from './support/figures';
import { CLOCK_TICKS, processTicks } from './support/proc-stats';

const TENANT = tenantIdOf('bench');
const AGENT = agentIdOf('echo');
const OWNER = principalIdOf('bench-user');
const WORKER = randomUUID();

interface Options {
  sizes: number[];
  tasks: number;
  rounds: number;
  /** The git revision whose function files the previous side runs, if any. */
  against: string | null;
}

function parseOptions(argv: readonly string[]): Options {
  const options: Options = {
    sizes: [1, 16, 64, 200],
    tasks: 3_000,
    rounds: 3,
    against: null,
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i] ?? '';
    const value = argv[i + 1] ?? '';
    switch (flag) {
      case '--sizes':
        options.sizes = value.split(',').map(Number);
        i++;
        break;
      case '--tasks':
        options.tasks = Number(value);
        i++;
        break;
      case '--rounds':
        options.rounds = Number(value);
        i++;
        break;
      case '--against':
        options.against = value;
        i++;
        break;
      default:
        throw new Error(`unknown option ${flag}`);
    }
  }
  if (
    options.sizes.some((n) => !Number.isInteger(n) || n < 1 || n > 256) ||
    !(options.tasks > 0) ||
    !(options.rounds > 0)
  ) {
    throw new Error('--sizes takes integers from 1 to 256, --tasks and --rounds positive numbers');
  }
  return options;
}

/** The change of one stream from `before` by `events`, as the writer makes it. */
function change(
  taskId: string,
  before: TaskAggregate,
  events: TaskEvent[],
  metadata: EventMetadata,
): StreamChange {
  const after = foldTask(events, before);
  if (after.status !== 'present') {
    throw new Error('the bench task did not fold to a task');
  }
  return streamChange(TENANT, `task:${TENANT}:${taskId}`, before, events, after, metadata, () =>
    uuidv7(),
  );
}

/** A SendMessage accepted and leased to the worker at once. */
function accepted(taskId: string): StreamChange {
  const now = new Date();
  const contextId = randomUUID();
  const messageId = randomUUID();
  const message = {
    role: 'ROLE_USER' as const,
    parts: [{ text: 'hello' }],
    messageId,
    taskId,
    contextId,
  };
  const events: TaskEvent[] = [
    {
      type: 'TaskSubmitted',
      data: {
        taskId,
        contextId,
        agentId: AGENT,
        ownerId: OWNER,
        message,
        submittedAt: now.toISOString(),
      },
    },
    {
      type: 'TaskLeaseGranted',
      data: {
        leaseEpoch: 1,
        workerId: WORKER,
        expiresAt: new Date(now.getTime() + 10_000).toISOString(),
        attempt: 1,
      },
    },
  ];
  const requestId = randomUUID();
  const result = change(taskId, initialTaskState(), events, {
    actor: { kind: 'caller', id: OWNER },
    binding: 'JSONRPC',
    causationId: requestId,
    correlationId: requestId,
  });
  return {
    ...result,
    claim: {
      taskId: taskIdOf(taskId),
      agentId: AGENT,
      principalId: OWNER,
      messageId,
      digest: randomUUID().replaceAll('-', '').repeat(2),
    },
    audit: sealAuditEntry(
      {
        tenantId: TENANT,
        principalId: OWNER,
        credentialId: 'bench-key',
        sourceAddress: '127.0.0.1',
        operation: 'a2a.SendMessage',
        binding: 'JSONRPC',
        resource: `task/${taskId}`,
        outcome: 'ok',
        reason: null,
        traceId: null,
        occurredAt: now,
      },
      uuidv7(),
    ),
  };
}

/** The worker's one update: WORKING, the echoed artifact, COMPLETED. */
function completed(taskId: string, before: PresentTask): StreamChange {
  const at = new Date().toISOString();
  const events: TaskEvent[] = [
    { type: 'TaskStatusUpdated', data: { status: { state: 'TASK_STATE_WORKING', timestamp: at } } },
    {
      type: 'ArtifactChunkAppended',
      data: {
        artifact: { artifactId: 'echo', name: 'echo', parts: [{ text: 'hello' }] },
        append: false,
        lastChunk: true,
      },
    },
    {
      type: 'TaskStatusUpdated',
      data: { status: { state: 'TASK_STATE_COMPLETED', timestamp: at } },
    },
  ];
  return change(taskId, before, events, {
    actor: { kind: 'agent-worker', id: WORKER },
    binding: 'worker',
    idempotencyKey: `1:${randomUUID()}`,
  });
}

interface Measured {
  wallMsPerTask: number;
  cpuMsPerTask: number;
}

/** `tasks` tasks in batches of `size` (accept batch, then end batch) on one connection of `db`. */
async function run(db: TestDatabase, size: number, tasks: number): Promise<Measured> {
  const pool = createPool(db.url, { max: 1, applicationName: 'a2a-bench-batch' });
  const client = await pool.connect();
  try {
    const store = new PostgresTaskStore(pool);
    const pid =
      (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid ?? 0;
    const appendAll = async (changes: StreamChange[]): Promise<void> => {
      const refused = await store.append(changes, client);
      if (refused.size > 0) {
        throw new Error(`the batch refused ${refused.size} changes`);
      }
    };
    const batches = async (count: number): Promise<void> => {
      for (let done = 0; done < count; done += size) {
        const ids = Array.from({ length: Math.min(size, count - done) }, () => randomUUID());
        const accepts = ids.map(accepted);
        await appendAll(accepts);
        await appendAll(accepts.map((c, i) => completed(ids[i] ?? '', c.after)));
      }
    };
    await batches(Math.min(tasks, 200));
    const ticksBefore = processTicks(pid);
    const started = performance.now();
    await batches(tasks);
    const wallMs = performance.now() - started;
    const ticksAfter = processTicks(pid);
    if (ticksBefore === null || ticksAfter === null) {
      throw new Error(`backend ${pid} is not in /proc: Postgres must run on this machine`);
    }
    return {
      wallMsPerTask: wallMs / tasks,
      cpuMsPerTask: ((ticksAfter - ticksBefore) * 1000) / CLOCK_TICKS / tasks,
    };
  } finally {
    client.release();
    await pool.end();
  }
}

/** The function files of the repository at `revision` (git), by name. */
function functionFilesAt(revision: string): string[] {
  const git = (...args: string[]): string =>
    execFileSync('git', ['-C', dirname(migrationsDir()), ...args], { encoding: 'utf8' });
  const names = git('ls-tree', '--name-only', `${revision}:migrations/functions/`)
    .split('\n')
    .filter((name) => name.endsWith('.sql'));
  if (names.length === 0) {
    throw new Error(`${revision} has no function files`);
  }
  return names.map((name) => git('show', `${revision}:migrations/functions/${name}`));
}

/** A fresh database, with `functionFiles` run on it after the migrations. */
async function database(functionFiles: readonly string[]): Promise<TestDatabase> {
  const db = await createTestDatabase('bench_batch');
  for (const sql of functionFiles) {
    await db.pool.query(sql);
  }
  return db;
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const previousFiles = options.against === null ? null : functionFilesAt(options.against);
  const sides = previousFiles ? (['current', 'previous'] as const) : (['current'] as const);
  const admin = createPool(loadConfig(testSchema).TEST_POSTGRES_URL, {
    max: 1,
    applicationName: 'a2a-bench-batch',
  });
  const version = (await admin.query<{ v: string }>('SELECT version() AS v')).rows[0]?.v ?? '?';
  await admin.end();
  console.log(
    '# events.append_task_batch: Postgres CPU per task, by batch size (npm run bench:batch)',
  );
  console.log(
    `tasks per run: ${options.tasks}; runs per size and side: ${options.rounds}; sides: ${sides.join(', ')}` +
      (options.against === null ? '' : ` (previous: the function files of ${options.against})`),
  );
  printMachine(version);
  const rows: string[][] = [];
  for (const size of options.sizes) {
    const results = new Map<string, Measured[]>(sides.map((side) => [side, []]));
    for (let round = 0; round < options.rounds; round++) {
      for (const side of sides) {
        const db = await database(side === 'previous' ? (previousFiles ?? []) : []);
        try {
          const measured = await run(db, size, options.tasks);
          results.get(side)?.push(measured);
          console.log(
            `size ${size}, ${side}, run ${round + 1}: ${fmt(measured.cpuMsPerTask, 3)} ms CPU/task, ` +
              `${fmt(measured.wallMsPerTask, 3)} ms wall/task`,
          );
        } finally {
          await db.drop();
        }
      }
    }
    const mean = (side: string, pick: (m: Measured) => number): number => {
      const list = results.get(side) ?? [];
      return list.reduce((sum, m) => sum + pick(m), 0) / list.length;
    };
    for (const side of sides) {
      const cpu = mean(side, (m) => m.cpuMsPerTask);
      const vsCurrent =
        side === 'current' ? '-' : fmt(cpu / mean('current', (m) => m.cpuMsPerTask), 2);
      rows.push([
        String(size),
        side,
        fmt(cpu, 3),
        fmt(
          mean(side, (m) => m.wallMsPerTask),
          3,
        ),
        vsCurrent,
      ]);
    }
  }
  console.log('');
  console.log(
    table(
      [
        'batch size',
        'function',
        'PG CPU ms/task (mean)',
        'wall ms/task (mean)',
        'previous / current',
      ],
      rows,
      [1],
    ),
  );
  console.log(
    'PG CPU: user + system time of the one backend that ran the batches (/proc), over the tasks; a task is two\n' +
      'batches (accept with lease, then WORKING + artifact + COMPLETED), each its own commit.',
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

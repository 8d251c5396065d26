import type { ListTasksResponse, SendMessageResponse, Task } from '@lib/a2a-protocol';
import { createTestDatabase, RawWorker, type TestDatabase } from '@lib/testing';
import type { INestApplicationContext } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  captureTemplate,
  seedTasks,
  TASK_TABLES,
  type SeedPlan,
  type TaskTemplate,
} from '../../../bench/support/seed-tasks';
import { diffRebuiltTaskView, rebuildTaskView } from '../src/projections/task-view.rebuild';
import {
  CommandClient,
  seedTestTenant,
  startReplica,
  workerSecret,
  type Caller,
} from './task-service.harness';

/**
 * The bulk seeding path of the scale benchmark (bench/support/seed-tasks.ts) writes what the real write path
 * writes: a seeded task has the same rows as a task sent through SendMessage and a worker, ids and times aside,
 * and the platform treats it as its own (GetTask, ListTasks, a retried message, a continued task, a rebuild).
 */

const alice: Caller = { tenantId: 'acme', agentId: 'echo', principalId: 'alice' };
const SEEDED = 40;
const CONTEXT_SIZE = 4;

type Kind = 'completed' | 'input-required';

const taskOf = (r: SendMessageResponse): Task => {
  if (!('task' in r)) {
    throw new Error('expected a task');
  }
  return r.task;
};

/**
 * Every UUID in order of first appearance as `<id n>`, every time as `<time>`, every SHA-256 as `<digest>` (the
 * message digest differs with the messageId; a retried message shows the seeded one is right).
 */
function normalized(rows: unknown): string {
  const ids = new Map<string, string>();
  return JSON.stringify(rows)
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, (uuid) => {
      if (!ids.has(uuid)) {
        ids.set(uuid, `<id ${ids.size}>`);
      }
      return ids.get(uuid) ?? uuid;
    })
    .replace(/\b[0-9a-f]{64}\b/g, '<digest>')
    .replace(/\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}(:\d{2})?)/g, '<time>');
}

describe('bulk-seeded tasks are what the write path writes', () => {
  let db: TestDatabase;
  let app: INestApplicationContext;
  let commands: CommandClient;
  let worker: RawWorker;
  const templates = new Map<Kind, TaskTemplate>();
  let plan: SeedPlan;
  const realIds = new Set<string>();

  /** One task through SendMessage and the worker, as the `tck` example agent would answer it. */
  async function realTask(kind: Kind, contextId = randomUUID()): Promise<Task> {
    const pending = commands.call<SendMessageResponse>('sendMessage', alice, {
      message: {
        messageId: `${kind}-${randomUUID()}`,
        role: 'ROLE_USER',
        parts: [{ text: 'hello' }],
        contextId,
      },
    });
    const job = await worker.nextAssignment();
    if (kind === 'completed') {
      await worker.publishArtifact(
        job.taskId,
        job.leaseEpoch,
        { artifactId: 'echo', name: 'echo', parts: [{ text: 'hello' }] },
        false,
        true,
      );
      await worker.publishStatus(job.taskId, job.leaseEpoch, { state: 'TASK_STATE_COMPLETED' });
    } else {
      await worker.publishStatus(job.taskId, job.leaseEpoch, {
        state: 'TASK_STATE_INPUT_REQUIRED',
        message: { messageId: randomUUID(), role: 'ROLE_AGENT', parts: [{ text: 'Your name?' }] },
      });
    }
    const task = taskOf(await pending);
    realIds.add(task.id);
    return task;
  }

  /** The rows of one task in every table the write path writes, database-filled columns left out. */
  async function rowsOf(taskId: string): Promise<Record<string, unknown[]>> {
    const rows: Record<string, unknown[]> = {};
    for (const spec of TASK_TABLES) {
      const key = spec.key === 'stream' ? 'stream_id' : 'task_id';
      const found = await db.pool.query<{ row: Record<string, unknown> }>(
        `SELECT to_jsonb(t) - 'global_position' - 'transaction_id' AS row FROM ${spec.table} t
          WHERE tenant_id = $1 AND ${key} = $2 ORDER BY ${spec.orderBy}`,
        [alice.tenantId, spec.key === 'stream' ? `task:${alice.tenantId}:${taskId}` : taskId],
      );
      rows[spec.table] = found.rows.map((r) => r.row);
    }
    return rows;
  }

  async function seededTask(kind: Kind, n: number): Promise<{ id: string; contextId: string }> {
    const found = await db.pool.query<{ task_id: string; context_id: string }>(
      `SELECT task_id, context_id FROM read.task_view
        WHERE tenant_id = $1 AND task->'history'->0->>'messageId' LIKE $2 || '-%'
          AND task_id NOT IN (SELECT unnest($3::text[]))
        ORDER BY status_timestamp OFFSET $4 LIMIT 1`,
      [alice.tenantId, kind, [...realIds], n],
    );
    const row = found.rows[0];
    if (!row) {
      throw new Error(`no seeded ${kind} task number ${n}`);
    }
    return { id: row.task_id, contextId: row.context_id };
  }

  beforeAll(async () => {
    db = await createTestDatabase('seed_tasks');
    await seedTestTenant(db, 'acme', [{ agentId: 'echo' }]);
    const replica = await startReplica(db);
    app = replica.app;
    commands = new CommandClient(replica.commandTarget);
    worker = new RawWorker(replica.workerTarget, workerSecret('echo'));
    await worker.connect();
    for (const kind of ['completed', 'input-required'] as const) {
      const task = await realTask(kind);
      templates.set(kind, await captureTemplate(db.pool, alice.tenantId, task.id, kind));
    }
    plan = {
      mix: [
        { template: templates.get('completed')!, weight: 3 },
        { template: templates.get('input-required')!, weight: 1 },
      ],
      contextSize: CONTEXT_SIZE,
      start: new Date(Date.now() - 3_600_000),
      stepMs: 1_000,
      seed: 'seed-tasks-test',
    };
    // Two calls and small batches: seeding in parts gives the same tasks as seeding at once.
    await seedTasks(db.pool, plan, 0, 10, { batchSize: 3 });
    await seedTasks(db.pool, plan, 10, SEEDED, { batchSize: 7 });
  });

  afterAll(async () => {
    worker?.vanish();
    commands?.close();
    await app?.close();
    await db?.drop();
  });

  it('writes a task the same rows in the same tables as SendMessage and a worker do, ids and times aside', async () => {
    for (const kind of ['completed', 'input-required'] as const) {
      const real = await realTask(kind);
      const seeded = await seededTask(kind, 2);
      expect(normalized(await rowsOf(seeded.id))).toEqual(normalized(await rowsOf(real.id)));
    }
  });

  it('covers every table in which the write path keeps rows of a task', async () => {
    const real = await realTask('completed');
    const tables = await db.pool.query<{ name: string }>(
      `SELECT table_schema || '.' || table_name AS name FROM information_schema.tables
        WHERE table_schema IN ('events', 'read', 'ops') AND table_type = 'BASE TABLE'`,
    );
    const holding: string[] = [];
    for (const { name } of tables.rows) {
      const found = await db.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${name} t WHERE t::text LIKE '%' || $1 || '%'`,
        [real.id],
      );
      if ((found.rows[0]?.n ?? 0) > 0) {
        holding.push(name);
      }
    }
    expect(TASK_TABLES.map((t) => t.table)).toEqual(expect.arrayContaining(holding));
  });

  it('seeds exactly the planned tasks: one stream, one view row and one claim each, contexts of the planned size', async () => {
    const counts = await db.pool.query<{ streams: number; views: number; claims: number }>(
      `SELECT (SELECT count(*)::int FROM events.streams) AS streams,
              (SELECT count(*)::int FROM read.task_view) AS views,
              (SELECT count(*)::int FROM ops.message_ids) AS claims`,
    );
    const realTasks = realIds.size;
    expect(counts.rows[0]).toEqual({
      streams: SEEDED + realTasks,
      views: SEEDED + realTasks,
      claims: SEEDED + realTasks,
    });
    const seeded = await seededTask('completed', 0);
    const listed = await commands.call<ListTasksResponse>('listTasks', alice, {
      contextId: seeded.contextId,
    });
    expect(listed.totalSize).toBe(CONTEXT_SIZE);
    expect(listed.tasks.map((t) => t.id)).toContain(seeded.id);
  });

  it('serves a seeded task through GetTask and counts seeded tasks in ListTasks by state', async () => {
    const seeded = await seededTask('completed', 5);
    const task = await commands.call<Task>('getTask', alice, { id: seeded.id });
    expect(task.id).toBe(seeded.id);
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(task.artifacts?.[0]?.parts).toEqual([{ text: 'hello' }]);
    const view = await db.pool.query<{ state: string; n: number }>(
      `SELECT state, count(*)::int AS n FROM read.task_view WHERE tenant_id = 'acme' GROUP BY state`,
    );
    for (const { state, n } of view.rows) {
      const listed = await commands.call<ListTasksResponse>('listTasks', alice, {
        status: state,
        pageSize: 1,
      });
      expect(listed.totalSize).toBe(n);
    }
  });

  it('recognises a retry of a seeded task’s message as that task (its message digest is right)', async () => {
    const seeded = await seededTask('completed', 7);
    const first = (await commands.call<Task>('getTask', alice, { id: seeded.id })).history?.[0];
    expect(first).toBeDefined();
    const { taskId: _taskId, ...sent } = first!;
    const retried = taskOf(
      await commands.call<SendMessageResponse>('sendMessage', alice, {
        message: sent,
        configuration: { returnImmediately: true },
      }),
    );
    expect(retried.id).toBe(seeded.id);
  });

  it('continues a seeded INPUT_REQUIRED task through the write path (§10.3)', async () => {
    const seeded = await seededTask('input-required', 1);
    const answer = commands.call<SendMessageResponse>('sendMessage', alice, {
      message: {
        messageId: randomUUID(),
        role: 'ROLE_USER',
        parts: [{ text: 'Ada' }],
        taskId: seeded.id,
        contextId: seeded.contextId,
      },
    });
    const job = await worker.nextAssignment();
    expect(job.taskId).toBe(seeded.id);
    expect(job.leaseEpoch).toBe(2);
    await worker.publishStatus(job.taskId, job.leaseEpoch, { state: 'TASK_STATE_COMPLETED' });
    const done = taskOf(await answer);
    expect(done.status.state).toBe('TASK_STATE_COMPLETED');
    expect(done.history?.map((m) => m.parts[0]?.text)).toEqual(['hello', 'Your name?', 'Ada']);
  });

  it('rebuilds into exactly the seeded view (npm run db:rebuild -- --verify), and keeps the counts after a live rebuild', async () => {
    await rebuildTaskView(db.pool, 'scratch');
    expect(await diffRebuiltTaskView(db.pool)).toEqual({ onlyLive: 0, onlyRebuilt: 0 });
    // Keys whose kept count differs from counting the view, both ways.
    const counts = async (): Promise<unknown[]> => {
      const differing = await db.pool.query<Record<string, unknown>>(
        `WITH viewed AS (SELECT tenant_id, agent_id, owner_id, state, count(*)::int AS n
                           FROM read.task_view GROUP BY 1, 2, 3, 4),
              kept AS (SELECT tenant_id, agent_id, owner_id, state, sum(tasks)::int AS n
                         FROM read.task_counts GROUP BY 1, 2, 3, 4 HAVING sum(tasks) <> 0)
         (TABLE viewed EXCEPT TABLE kept) UNION ALL (TABLE kept EXCEPT TABLE viewed)`,
      );
      return differing.rows;
    };
    expect(await counts()).toEqual([]);
    await rebuildTaskView(db.pool, 'live');
    expect(await counts()).toEqual([]);
    const total = await commands.call<ListTasksResponse>('listTasks', alice, { pageSize: 1 });
    const views = await db.pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM read.task_view',
    );
    expect(total.totalSize).toBe(views.rows[0]?.n);
  });
});

import type { AdminApiConfig } from '@lib/config';
import { tenantIdOf } from '@lib/ids';
import { taskStreamId } from '@lib/task-domain';
import { createTestDatabase, type TestDatabase } from '@lib/testing';
import { WorkQueue } from '@lib/work-queue';
import { randomUUID } from 'node:crypto';
import type { PoolClient } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TaskAdminStore, type TaskChange } from './task-admin.store';
import { TaskChangeFeed } from './task-changes';

/**
 * The change feed's fallback when notices are lost (they are hints): its notice connection points at a server
 * that does not exist, so every change here reaches it through its poll of the log alone. The changes are
 * written as the task-service's batches leave them (an event in the log, the task's view row), in
 * transactions of the test's own.
 */
let db: TestDatabase;
let feed: TaskChangeFeed;

/** Appends an event of `taskId` at `version` and sets its view row, in `client`'s transaction or its own. */
async function change(
  tenantId: string,
  taskId: string,
  version: number,
  state: string,
  client?: PoolClient,
): Promise<void> {
  await (client ?? db.pool).query(
    `WITH event AS (
       INSERT INTO events.messages (event_id, tenant_id, stream_id, stream_version, event_type, schema_version,
                                    data, metadata)
       VALUES ($1, $2, $3, $4, 'TaskStatusUpdated', 1, '{}', '{"actor":{"kind":"system","id":"test"}}'))
     INSERT INTO read.task_view (tenant_id, task_id, agent_id, owner_id, context_id, state, status_timestamp,
                                 version, task)
     VALUES ($2, $5, 'echo', 'alice', 'ctx', $6, now(), $4, '{}')
     ON CONFLICT (tenant_id, task_id) DO UPDATE SET state = EXCLUDED.state, version = EXCLUDED.version`,
    [randomUUID(), tenantId, taskStreamId(tenantIdOf(tenantId), taskId), version, taskId, state],
  );
}

/** Watches `tenantId`'s changes (of agent `agentId`, when given) into a list. */
function watch(tenantId: string, agentId?: string): { seen: TaskChange[]; stop: () => void } {
  const seen: TaskChange[] = [];
  const stop = feed.watch({
    tenantId: tenantIdOf(tenantId),
    matches: (c) => agentId === undefined || c.agentId === agentId,
    send: (c) => seen.push(c),
    end: () => undefined,
  });
  return { seen, stop };
}

async function until(done: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) {
      throw new Error(`not within ${timeoutMs} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  db = await createTestDatabase('admin_task_changes');
  feed = new TaskChangeFeed(new TaskAdminStore(db.pool, new WorkQueue(db.pool)), {
    POSTGRES_URL: 'postgres://postgres@127.0.0.1:1/nowhere',
  } as AdminApiConfig);
});

afterAll(async () => {
  await feed?.onModuleDestroy();
  await db?.drop();
});

describe('the task change feed without notices', () => {
  it('sends a change read from the log by its poll, each version once', async () => {
    const watcher = watch('t1');
    try {
      await sleep(300);
      const task = randomUUID();
      await change('t1', task, 1, 'TASK_STATE_WORKING');
      await until(() => watcher.seen.length === 1, 10_000);
      expect(watcher.seen[0]).toMatchObject({
        taskId: task,
        agentId: 'echo',
        contextId: 'ctx',
        state: 'TASK_STATE_WORKING',
        version: 1,
        updatedAt: expect.any(String) as string,
      });
      await change('t1', task, 2, 'TASK_STATE_COMPLETED');
      await until(() => watcher.seen.length === 2, 10_000);
      await sleep(1_500);
      expect(watcher.seen.map((c) => [c.version, c.state])).toEqual([
        [1, 'TASK_STATE_WORKING'],
        [2, 'TASK_STATE_COMPLETED'],
      ]);
    } finally {
      watcher.stop();
    }
  });

  it('does not skip a change whose transaction commits after a younger one was read', async () => {
    const watcher = watch('t2');
    const client = await db.pool.connect();
    try {
      await sleep(300);
      const late = randomUUID();
      const early = randomUUID();
      await client.query('BEGIN');
      await change('t2', late, 1, 'TASK_STATE_WORKING', client);
      await change('t2', early, 1, 'TASK_STATE_WORKING');
      // At least one poll runs while the older transaction is still open.
      await sleep(1_500);
      await client.query('COMMIT');
      await until(() => watcher.seen.length === 2, 10_000);
      expect(watcher.seen.map((c) => c.taskId).sort()).toEqual([late, early].sort());
    } finally {
      client.release();
      watcher.stop();
    }
  });

  it('sends a watcher only its tenant’s changes that match it', async () => {
    const mine = watch('t3', 'echo');
    const other = watch('t3', 'countdown');
    try {
      await sleep(300);
      const foreign = randomUUID();
      const own = randomUUID();
      await change('t4', foreign, 1, 'TASK_STATE_WORKING');
      await change('t3', own, 1, 'TASK_STATE_WORKING');
      await until(() => mine.seen.length === 1, 10_000);
      await sleep(1_200);
      expect(mine.seen.map((c) => c.taskId)).toEqual([own]);
      expect(other.seen).toEqual([]);
    } finally {
      mine.stop();
      other.stop();
    }
  });
});

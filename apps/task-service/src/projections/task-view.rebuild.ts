import { TaskLog, withTransaction } from '@lib/event-store';
import { foldTask, TASK_STREAM_CATEGORY } from '@lib/task-domain';
import { tenantIdOf } from '@lib/tenancy';
import type { Pool } from 'pg';
import { upsertTaskView } from './task-view.projection';

/** Scratch table that `--verify` rebuilds into, next to the live one. */
export const REBUILD_TABLE = 'read.task_view_rebuild';

export interface RebuildReport {
  streams: number;
  events: number;
}

/**
 * Rebuilds the task view from the log. `target: 'live'` replaces `read.task_view` in one transaction (reads
 * keep seeing the old rows until it commits); `target: 'scratch'` builds {@link REBUILD_TABLE} beside it.
 */
export async function rebuildTaskView(
  pool: Pool,
  target: 'live' | 'scratch',
): Promise<RebuildReport> {
  return withTransaction(pool, async (client) => {
    const table = target === 'live' ? 'read.task_view' : REBUILD_TABLE;
    if (target === 'live') {
      await client.query('LOCK TABLE read.task_view IN EXCLUSIVE MODE');
      await client.query('DELETE FROM read.task_view');
    } else {
      await client.query(`DROP TABLE IF EXISTS ${REBUILD_TABLE}`);
      await client.query(`CREATE TABLE ${REBUILD_TABLE} (LIKE read.task_view INCLUDING ALL)`);
    }
    const log = new TaskLog(client);
    const streams = await log.streamsOf(TASK_STREAM_CATEGORY);
    let events = 0;
    for (const stream of streams) {
      const history = (await log.histories([stream])).get(stream.streamId)?.events ?? [];
      events += history.length;
      await upsertTaskView(client, tenantIdOf(stream.tenantId), foldTask(history), table);
    }
    return { streams: streams.length, events };
  });
}

/** Rows that differ between the live view and the rebuilt scratch table (both directions). */
export async function diffRebuiltTaskView(
  pool: Pool,
): Promise<{ onlyLive: number; onlyRebuilt: number }> {
  const columns =
    'tenant_id, task_id, agent_id, owner_id, context_id, state, status_timestamp, version, task';
  const onlyLive = await pool.query<{ count: string }>(
    `SELECT count(*) AS count FROM (SELECT ${columns} FROM read.task_view
       EXCEPT SELECT ${columns} FROM ${REBUILD_TABLE}) d`,
  );
  const onlyRebuilt = await pool.query<{ count: string }>(
    `SELECT count(*) AS count FROM (SELECT ${columns} FROM ${REBUILD_TABLE}
       EXCEPT SELECT ${columns} FROM read.task_view) d`,
  );
  return {
    onlyLive: Number(onlyLive.rows[0]?.count ?? 0),
    onlyRebuilt: Number(onlyRebuilt.rows[0]?.count ?? 0),
  };
}

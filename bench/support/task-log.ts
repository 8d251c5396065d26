import { tenantIdOf } from '@lib/ids';
import { taskStreamId } from '@lib/task-domain';
import type { Pool } from 'pg';

/** One event of a task's log as the benches check streams against it. */
export interface LogEntry {
  version: number;
  type: string;
  /** When it was recorded (wall-clock ms). */
  atMs: number;
}

/** The log of each task, in generation order (a task without events has an empty one). */
export async function readTaskLogs(
  pool: Pool,
  tenantId: string,
  taskIds: readonly string[],
): Promise<Map<string, LogEntry[]>> {
  const tenant = tenantIdOf(tenantId);
  const result = await pool.query<{
    stream_id: string;
    stream_version: number;
    event_type: string;
    at_ms: number;
  }>(
    `SELECT stream_id, stream_version, event_type,
            (extract(epoch FROM recorded_at) * 1000)::float8 AS at_ms
       FROM events.messages
      WHERE tenant_id = $1 AND stream_id = ANY($2::text[])
      ORDER BY stream_id, stream_version`,
    [tenantId, taskIds.map((id) => taskStreamId(tenant, id))],
  );
  const byStream = new Map<string, LogEntry[]>();
  for (const row of result.rows) {
    const entries = byStream.get(row.stream_id) ?? [];
    entries.push({ version: row.stream_version, type: row.event_type, atMs: row.at_ms });
    byStream.set(row.stream_id, entries);
  }
  return new Map(taskIds.map((id) => [id, byStream.get(taskStreamId(tenant, id)) ?? []]));
}

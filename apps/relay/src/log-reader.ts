import type { EventMetadata } from '@lib/event-store';
import type { Client, Pool, PoolClient } from 'pg';
import type { LogRow } from './task-event-record';

/** A position in commit-safe log order: (writing transaction id, global position). */
export interface LogCursor {
  transactionId: string;
  position: string;
}

export const LOG_START: LogCursor = { transactionId: '0', position: '0' };

interface Row {
  event_id: string;
  tenant_id: string;
  stream_id: string;
  stream_version: number;
  global_position: string;
  transaction_id: string;
  event_type: string;
  schema_version: number;
  data: unknown;
  metadata: EventMetadata;
  recorded_at: Date;
  context_id: string | null;
  agent_id: string | null;
}

/**
 * Reads the log after `cursor` in (transaction id, position) order, only from transactions older than every
 * transaction still running (`pg_snapshot_xmin`). Sequence values are not commit order: a transaction that
 * took a lower position may commit after a higher one is visible. Gating on xmin means nothing can ever
 * appear behind the cursor, so no event is skipped.
 */
export async function readCommittedLog(
  db: Pool | PoolClient,
  cursor: LogCursor,
  limit: number,
): Promise<LogRow[]> {
  const result = await db.query<Row>(
    `SELECT m.event_id, m.tenant_id, m.stream_id, m.stream_version, m.global_position,
            m.transaction_id::text AS transaction_id, m.event_type, m.schema_version, m.data,
            m.metadata, m.recorded_at, f.data ->> 'contextId' AS context_id,
            f.data ->> 'agentId' AS agent_id
       FROM events.messages m
       LEFT JOIN events.messages f
         ON f.tenant_id = m.tenant_id AND f.stream_id = m.stream_id AND f.stream_version = 1
      WHERE (m.transaction_id, m.global_position) > ($1::xid8, $2::bigint)
        AND m.transaction_id < pg_snapshot_xmin(pg_current_snapshot())
      ORDER BY m.transaction_id, m.global_position
      LIMIT $3`,
    [cursor.transactionId, cursor.position, limit],
  );
  return result.rows.map((row) => ({
    eventId: row.event_id,
    tenantId: row.tenant_id,
    streamId: row.stream_id,
    streamVersion: row.stream_version,
    globalPosition: row.global_position,
    transactionId: row.transaction_id,
    eventType: row.event_type,
    schemaVersion: row.schema_version,
    data: row.data,
    metadata: row.metadata,
    recordedAt: row.recorded_at.toISOString(),
    contextId: row.context_id,
    agentId: row.agent_id,
  }));
}

export async function loadCheckpoint(db: Pool | Client, relayName: string): Promise<LogCursor> {
  const result = await db.query<{ last_transaction_id: string; last_position: string }>(
    `SELECT last_transaction_id::text AS last_transaction_id, last_position
       FROM ops.relay_checkpoints WHERE relay_name = $1`,
    [relayName],
  );
  const row = result.rows[0];
  return row ? { transactionId: row.last_transaction_id, position: row.last_position } : LOG_START;
}

/**
 * Moves the checkpoint forward, never back: a relay that lost its leadership while a batch was in flight
 * cannot undo the progress of the one that took over.
 */
export async function saveCheckpoint(
  db: Pool | Client,
  relayName: string,
  cursor: LogCursor,
): Promise<void> {
  await db.query(
    `INSERT INTO ops.relay_checkpoints AS c (relay_name, last_transaction_id, last_position)
     VALUES ($1, $2::xid8, $3)
     ON CONFLICT (relay_name) DO UPDATE SET last_transaction_id = EXCLUDED.last_transaction_id,
       last_position = EXCLUDED.last_position, updated_at = now()
     WHERE (c.last_transaction_id, c.last_position) < (EXCLUDED.last_transaction_id, EXCLUDED.last_position)`,
    [relayName, cursor.transactionId, cursor.position],
  );
}

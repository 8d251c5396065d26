import { LOG_START, type LogCursor } from '@lib/event-store';
import type { Client, Pool } from 'pg';

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

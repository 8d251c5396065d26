import { tenantIdOf, type TenantId } from '@lib/ids';
import type { PoolClient } from 'pg';
import { v7 as uuidv7 } from 'uuid';

/** Who caused an event and through what; stored with every event. */
export interface EventMetadata {
  actor: { kind: 'caller' | 'agent-worker' | 'system'; id: string };
  /** Binding the command arrived through (JSONRPC, HTTP+JSON, GRPC, worker, sweeper). */
  binding?: string;
  traceparent?: string;
  /** The event or request that caused this one. */
  causationId?: string;
  correlationId?: string;
  /** Set by a sender that may retry: a command with a key already in the stream is not applied again. */
  idempotencyKey?: string;
}

export interface NewEvent<
  E extends { type: string; data: unknown } = { type: string; data: unknown },
> {
  event: E;
  schemaVersion: number;
}

export interface StoredEvent<
  E extends { type: string; data: unknown } = { type: string; data: unknown },
> {
  event: E;
  eventId: string;
  tenantId: TenantId;
  streamId: string;
  streamVersion: number;
  globalPosition: string;
  schemaVersion: number;
  metadata: EventMetadata;
  recordedAt: string;
}

/** The stream moved on since it was read: re-read and decide again (never overwrite). */
export class ConcurrencyConflict extends Error {
  override readonly name = 'ConcurrencyConflict';

  constructor(
    readonly streamId: string,
    readonly expectedVersion: number,
  ) {
    super(`stream ${streamId} is not at version ${expectedVersion}`);
  }
}

interface EventRow {
  event_id: string;
  tenant_id: string;
  stream_id: string;
  stream_version: number;
  global_position: string;
  event_type: string;
  schema_version: number;
  data: unknown;
  metadata: EventMetadata;
  recorded_at: Date;
}

function toStored<E extends { type: string; data: unknown }>(row: EventRow): StoredEvent<E> {
  return {
    event: { type: row.event_type, data: row.data } as E,
    eventId: row.event_id,
    tenantId: tenantIdOf(row.tenant_id),
    streamId: row.stream_id,
    streamVersion: row.stream_version,
    globalPosition: row.global_position,
    schemaVersion: row.schema_version,
    metadata: row.metadata,
    recordedAt: row.recorded_at.toISOString(),
  };
}

const COLUMNS =
  'event_id, tenant_id, stream_id, stream_version, global_position, event_type, schema_version, data, metadata, recorded_at';

/** Reads one stream in version order, optionally only events after `afterVersion`. */
export async function readStream<E extends { type: string; data: unknown }>(
  client: PoolClient | { query: PoolClient['query'] },
  tenantId: TenantId,
  streamId: string,
  afterVersion = 0,
): Promise<StoredEvent<E>[]> {
  const result = await client.query<EventRow>(
    `SELECT ${COLUMNS} FROM events.messages
      WHERE tenant_id = $1 AND stream_id = $2 AND stream_version > $3
      ORDER BY stream_version`,
    [tenantId, streamId, afterVersion],
  );
  return result.rows.map((row) => toStored<E>(row));
}

/**
 * Appends events at `expectedVersion + 1 …` inside the caller's transaction. The stream row is the
 * concurrency guard: its version must equal `expectedVersion`, which keeps versions gap-free.
 */
export async function appendToStream<E extends { type: string; data: unknown }>(
  client: PoolClient,
  tenantId: TenantId,
  streamId: string,
  expectedVersion: number,
  events: readonly NewEvent<E>[],
  metadata: EventMetadata,
): Promise<StoredEvent<E>[]> {
  if (events.length === 0) {
    return [];
  }
  const nextVersion = expectedVersion + events.length;
  const guard =
    expectedVersion === 0
      ? await client.query(
          `INSERT INTO events.streams (tenant_id, stream_id, version) VALUES ($1, $2, $3)
             ON CONFLICT DO NOTHING`,
          [tenantId, streamId, nextVersion],
        )
      : // A transaction with an older xid than the one that wrote the previous event must not append after it:
        // the relay publishes in xid order, so that would reorder the stream. It conflicts and retries with a
        // new transaction (hence a younger xid) instead.
        await client.query(
          `UPDATE events.streams SET version = $4
             WHERE tenant_id = $1 AND stream_id = $2 AND version = $3
               AND NOT EXISTS (
                 SELECT 1 FROM events.messages
                  WHERE tenant_id = $1 AND stream_id = $2 AND stream_version = $3
                    AND transaction_id > pg_current_xact_id())`,
          [tenantId, streamId, expectedVersion, nextVersion],
        );
  if (guard.rowCount !== 1) {
    throw new ConcurrencyConflict(streamId, expectedVersion);
  }
  const ids = events.map(() => uuidv7());
  const result = await client.query<EventRow>(
    `INSERT INTO events.messages
       (event_id, tenant_id, stream_id, stream_version, event_type, schema_version, data, metadata)
     SELECT e.event_id, $1, $2, $3 + e.ord, e.event_type, e.schema_version, e.data, $4
       FROM unnest($5::uuid[], $6::text[], $7::smallint[], $8::jsonb[]) WITH ORDINALITY
         AS e(event_id, event_type, schema_version, data, ord)
     ORDER BY e.ord
     RETURNING ${COLUMNS}`,
    [
      tenantId,
      streamId,
      expectedVersion,
      JSON.stringify(metadata),
      ids,
      events.map((e) => e.event.type),
      events.map((e) => e.schemaVersion),
      events.map((e) => JSON.stringify(e.event.data)),
    ],
  );
  return result.rows
    .map((row) => toStored<E>(row))
    .sort((a, b) => a.streamVersion - b.streamVersion);
}

import type { TaskEvent } from '@lib/task-domain';
import type { TenantId } from '@lib/tenancy';
import type { Pool } from 'pg';

/** One event of a task stream as the feed needs it: its generation and the event. */
export interface LogEvent {
  version: number;
  event: TaskEvent;
}

/** A task stream the feed follows, and the generation it has read up to. */
export interface WatchedStream {
  tenantId: TenantId;
  streamId: string;
  position: number;
}

/** The one method of a pool the feed uses (tests pass a wrapper that counts or fails queries). */
export type LogQueryable = Pick<Pool, 'query'>;

/**
 * Most streams checked by one version query. One statement covers every task a replica follows at the
 * scale measured (10,000); beyond that the poll sends one statement per this many tasks.
 */
const VERSIONS_PER_QUERY = 10_000;

/** The ingress's reads of the task log: events after a generation, and which followed streams moved. */
export class TaskLogReader {
  constructor(private readonly db: LogQueryable) {}

  /** At most `limit` events of one stream after generation `after`, in generation order. */
  async eventsAfter(
    tenantId: TenantId,
    streamId: string,
    after: number,
    limit: number,
  ): Promise<LogEvent[]> {
    const result = await this.db.query<{
      stream_version: number;
      event_type: string;
      data: unknown;
    }>(
      `SELECT stream_version, event_type, data FROM events.messages
        WHERE tenant_id = $1 AND stream_id = $2 AND stream_version > $3
        ORDER BY stream_version
        LIMIT $4`,
      [tenantId, streamId, after, limit],
    );
    return result.rows.map((row) => ({
      version: row.stream_version,
      event: { type: row.event_type, data: row.data } as TaskEvent,
    }));
  }

  /**
   * The streams among `watched` whose version (`events.streams`, written in the append's transaction) is
   * past the position given, with that version: index in `watched` → version. One statement per
   * {@link VERSIONS_PER_QUERY} streams, whatever the number of subscribers.
   */
  async moved(watched: readonly WatchedStream[]): Promise<Map<number, number>> {
    const moved = new Map<number, number>();
    for (let from = 0; from < watched.length; from += VERSIONS_PER_QUERY) {
      const slice = watched.slice(from, from + VERSIONS_PER_QUERY);
      const result = await this.db.query<{ i: string; version: number }>(
        `SELECT w.i, s.version
           FROM unnest($1::text[], $2::text[], $3::int[]) WITH ORDINALITY
                  AS w(tenant_id, stream_id, position, i)
           JOIN events.streams s USING (tenant_id, stream_id)
          WHERE s.version > w.position`,
        [slice.map((w) => w.tenantId), slice.map((w) => w.streamId), slice.map((w) => w.position)],
      );
      for (const row of result.rows) {
        moved.set(from + Number(row.i) - 1, row.version);
      }
    }
    return moved;
  }
}

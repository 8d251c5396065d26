import { withTransaction } from '@lib/event-store';
import type { Pool, PoolClient } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import {
  chainHash,
  checkEntry,
  GENESIS_HASH,
  type AuditEntry,
  type ChainedFields,
} from './audit-record';
import { AuditWriterClosed } from './audit.errors';

export interface AuditWriterOptions {
  /** Most records in one flush (one transaction, one insert statement). Default: 500. */
  maxBatch?: number;
  /** Record ids. Default: UUIDv7, time-ordered, so the unique index grows at its right edge. */
  newRecordId?: () => string;
}

/** What the writer has done since it was made: for metrics, and for tests to see batching happen. */
export interface AuditWriterStats {
  /** Transactions committed. */
  readonly flushes: number;
  /** Records in them. */
  readonly records: number;
  /** Flushes that failed, their callers rejected. */
  readonly failedFlushes: number;
}

interface Pending {
  entry: AuditEntry;
  resolve: () => void;
  reject: (error: unknown) => void;
}

interface Head {
  seq: number;
  hash: string;
}

/** Postgres types of `audit.records`' columns, in the order of the insert below. */
const RECORD_COLUMN_TYPES = [
  'text',
  'bigint',
  'uuid',
  'timestamptz',
  'text',
  'text',
  'text',
  'text',
  'text',
  'text',
  'text',
  'text',
  'text',
  'bytea',
  'bytea',
];

/** New records and the chain heads that now end at them, in one statement. */
const APPEND = `
WITH appended AS (
  INSERT INTO audit.records (tenant_id, seq, record_id, occurred_at, principal_id, credential_id,
                             source_address, operation, binding, resource, outcome, reason, trace_id,
                             prev_hash, hash)
  SELECT * FROM unnest(${RECORD_COLUMN_TYPES.map((type, i) => `$${i + 1}::${type}[]`).join(', ')})
)
UPDATE audit.chain_heads h SET seq = v.seq, hash = v.hash
  FROM unnest($16::text[], $17::bigint[], $18::bytea[]) AS v (tenant_id, seq, hash)
 WHERE h.tenant_id = v.tenant_id`;

/**
 * The write side of the audit log, with group commit: entries recorded while a flush commits are written
 * together by the next one (at most `maxBatch`), so the log costs one transaction per batch, not per call.
 * A flush locks its tenants' chain heads in tenant order, numbers and hashes the records in memory and inserts
 * them with one statement; writers in other processes on the same database wait for the heads they share, so
 * every tenant keeps one gap-free chain. Within one writer, a tenant's records are chained in call order.
 */
export class AuditWriter {
  private readonly maxBatch: number;
  private readonly newRecordId: () => string;
  private queue: Pending[] = [];
  /** The flush loop, while it runs; it stops when the queue is empty. */
  private draining: Promise<void> | undefined;
  private closed = false;
  private counts = { flushes: 0, records: 0, failedFlushes: 0 };

  constructor(
    private readonly pool: Pool,
    options: AuditWriterOptions = {},
  ) {
    this.maxBatch = options.maxBatch ?? 500;
    if (!Number.isSafeInteger(this.maxBatch) || this.maxBatch < 1) {
      throw new RangeError(`maxBatch must be a positive integer, not ${this.maxBatch}`);
    }
    this.newRecordId = options.newRecordId ?? uuidv7;
  }

  /**
   * Appends the entry to its tenant's chain. Resolves once the record is committed; rejects with
   * {@link InvalidAuditEntry} for an entry it will not store, or with the database's error when the flush it
   * was part of failed (nothing of that flush was written; whether to try again is the caller's call).
   */
  record(entry: AuditEntry): Promise<void> {
    if (this.closed) {
      return Promise.reject(new AuditWriterClosed());
    }
    let checked: AuditEntry;
    try {
      checked = checkEntry(entry);
    } catch (error) {
      return Promise.reject(error as Error);
    }
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ entry: checked, resolve, reject });
      this.draining ??= this.drain();
    });
  }

  get stats(): AuditWriterStats {
    return { ...this.counts };
  }

  /** Refuses new entries and resolves when everything recorded before has been flushed. */
  async close(): Promise<void> {
    this.closed = true;
    await this.draining;
  }

  private async drain(): Promise<void> {
    // Entries recorded in the same turn of the event loop join the first flush.
    await new Promise<void>((resolve) => setImmediate(resolve));
    while (this.queue.length > 0) {
      await this.flush(this.queue.splice(0, this.maxBatch));
    }
    // In the same synchronous step as the empty-queue check: a later `record` starts a new loop.
    this.draining = undefined;
  }

  private async flush(batch: Pending[]): Promise<void> {
    try {
      await withTransaction(this.pool, (client) => this.append(client, batch));
    } catch (error) {
      this.counts.failedFlushes += 1;
      for (const pending of batch) {
        pending.reject(error);
      }
      return;
    }
    this.counts.flushes += 1;
    this.counts.records += batch.length;
    for (const pending of batch) {
      pending.resolve();
    }
  }

  private async append(client: PoolClient, batch: Pending[]): Promise<void> {
    const tenants = [...new Set(batch.map(({ entry }) => entry.tenantId))];
    // Heads are created and locked in one order (the database's) by every writer: no deadlock between them.
    await client.query(
      `INSERT INTO audit.chain_heads (tenant_id, seq, hash)
       SELECT t, 0, $2 FROM unnest($1::text[]) AS t ORDER BY t
       ON CONFLICT (tenant_id) DO NOTHING`,
      [tenants, Buffer.from(GENESIS_HASH, 'hex')],
    );
    const locked = await client.query<{ tenant_id: string; seq: string; hash: Buffer }>(
      `SELECT tenant_id, seq, hash FROM audit.chain_heads
        WHERE tenant_id = ANY($1::text[]) ORDER BY tenant_id FOR UPDATE`,
      [tenants],
    );
    const heads = new Map<string, Head>(
      locked.rows.map((row) => [
        row.tenant_id,
        { seq: Number(row.seq), hash: row.hash.toString('hex') },
      ]),
    );
    const rows: unknown[][] = [];
    for (const { entry } of batch) {
      const head = heads.get(entry.tenantId);
      if (head === undefined) {
        // Only a purge committing right now removes a head between the insert and the lock.
        throw new Error(`audit chain head of tenant ${entry.tenantId} vanished during a flush`);
      }
      const fields: ChainedFields = {
        ...entry,
        seq: head.seq + 1,
        recordId: this.newRecordId(),
        occurredAt: entry.occurredAt.toISOString(),
      };
      const hash = chainHash(head.hash, fields);
      rows.push([
        fields.tenantId,
        fields.seq,
        fields.recordId,
        fields.occurredAt,
        fields.principalId,
        fields.credentialId,
        fields.sourceAddress,
        fields.operation,
        fields.binding,
        fields.resource,
        fields.outcome,
        fields.reason,
        fields.traceId,
        Buffer.from(head.hash, 'hex'),
        Buffer.from(hash, 'hex'),
      ]);
      head.seq = fields.seq;
      head.hash = hash;
    }
    const columns = RECORD_COLUMN_TYPES.map((_, i) => rows.map((row) => row[i]));
    const moved = [...heads];
    await client.query(APPEND, [
      ...columns,
      moved.map(([tenantId]) => tenantId),
      moved.map(([, head]) => head.seq),
      moved.map(([, head]) => Buffer.from(head.hash, 'hex')),
    ]);
  }
}

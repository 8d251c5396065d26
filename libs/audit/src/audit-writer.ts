import type { Pool } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { sealAuditEntry, type AuditEntry, type SealedAuditEntry } from './audit-record';
import { AuditWriterClosed } from './audit.errors';

export interface AuditWriterOptions {
  /** Most records in one flush (one statement, one transaction). Default: 500. */
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
  sealed: SealedAuditEntry;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** Appends sealed records to their tenants' chains; Postgres numbers and links them under the head locks. */
export const CHAIN_RECORDS = `SELECT audit.chain_records(${Array.from(
  { length: 13 },
  (_, i) => `$${i + 1}`,
).join(', ')})`;

/** The parameters of {@link CHAIN_RECORDS}: one array per column, the records in the given order. */
export function chainRecordsParams(records: readonly SealedAuditEntry[]): unknown[] {
  const column = <T>(value: (record: SealedAuditEntry) => T): T[] => records.map(value);
  return [
    column((record) => record.tenantId),
    column((record) => record.recordId),
    column((record) => record.occurredAt),
    column((record) => record.principalId),
    column((record) => record.credentialId),
    column((record) => record.sourceAddress),
    column((record) => record.operation),
    column((record) => record.binding),
    column((record) => record.resource),
    column((record) => record.outcome),
    column((record) => record.reason),
    column((record) => record.traceId),
    column((record) => Buffer.from(record.digest, 'hex')),
  ];
}

/**
 * The write side of the audit log, with group commit: entries recorded while a flush commits are written
 * together by the next one (at most `maxBatch`), so the log costs one statement per batch, not per call.
 * Each entry is checked and sealed (given its id and digest) when it is recorded; a flush hands the batch to
 * `audit.chain_records`, which locks the batch's chain heads in tenant order and chains the records after
 * them. So writers in several processes, and transactions that record their own changes, extend one gap-free
 * chain per tenant in one round trip, and within one writer a tenant's records are chained in call order.
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
    let sealed: SealedAuditEntry;
    try {
      sealed = sealAuditEntry(entry, this.newRecordId());
    } catch (error) {
      return Promise.reject(error as Error);
    }
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ sealed, resolve, reject });
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
      await this.pool.query(CHAIN_RECORDS, chainRecordsParams(batch.map(({ sealed }) => sealed)));
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
}

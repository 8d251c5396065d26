import type { Pool } from 'pg';
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
  /** Chain ends remembered (the tenants written to most recently). Default: 10,000. */
  maxKnownHeads?: number;
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

/** The end of a chain with no record yet. */
const GENESIS: Head = { seq: 0, hash: GENESIS_HASH };

/**
 * Records and the chain heads that now end at them, in one statement (`audit.append_records`): written only if
 * every head is where the writer expected it; otherwise nothing is written and the heads that moved come back.
 */
const APPEND = `SELECT moved_tenant, moved_seq, moved_hash
  FROM audit.append_records(${Array.from({ length: 20 }, (_, i) => `$${i + 1}`).join(', ')})`;

/** Flushes that found a head moved by another writer before this one gives up (and rejects its callers). */
const MAX_ATTEMPTS = 16;

/**
 * The write side of the audit log, with group commit: entries recorded while a flush commits are written
 * together by the next one (at most `maxBatch`), so the log costs one statement per batch, not per call.
 * The writer remembers where each tenant's chain ended after its last flush, numbers and hashes the batch on
 * those heads in memory and sends records and new heads in one statement, which locks the heads in tenant
 * order and writes only if none moved. A head another writer moved (a second replica, a purge) comes back
 * instead, and the batch is hashed again on it; so writers in several processes keep one gap-free chain per
 * tenant, and a writer pays a second round trip only for a tenant it has not seen or that another one wrote
 * to since. Within one writer, a tenant's records are chained in call order.
 */
export class AuditWriter {
  private readonly maxBatch: number;
  private readonly newRecordId: () => string;
  private readonly maxKnownHeads: number;
  /** Where chains ended when this writer last wrote or saw them, least recently used first. */
  private readonly heads = new Map<string, Head>();
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
    this.maxKnownHeads = options.maxKnownHeads ?? 10_000;
    if (!Number.isSafeInteger(this.maxKnownHeads) || this.maxKnownHeads < 1) {
      throw new RangeError(`maxKnownHeads must be a positive integer, not ${this.maxKnownHeads}`);
    }
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
      await this.append(batch);
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

  /** Writes the batch in one statement, again on the heads that moved until none did. */
  private async append(batch: Pending[]): Promise<void> {
    const tenants = [...new Set(batch.map(({ entry }) => entry.tenantId))].sort();
    for (let attempt = 1; ; attempt += 1) {
      const expected = tenants.map((tenantId) => this.heads.get(tenantId) ?? GENESIS);
      const { params, after } = this.chained(batch, tenants, expected);
      const { rows } = await this.pool.query<{
        moved_tenant: string;
        moved_seq: string;
        moved_hash: Buffer;
      }>(APPEND, params);
      if (rows.length === 0) {
        tenants.forEach((tenantId, i) => this.remember(tenantId, after[i] ?? GENESIS));
        return;
      }
      for (const row of rows) {
        this.remember(row.moved_tenant, {
          seq: Number(row.moved_seq),
          hash: row.moved_hash.toString('hex'),
        });
      }
      if (attempt === MAX_ATTEMPTS) {
        throw new Error(
          `audit chain heads moved by other writers in ${MAX_ATTEMPTS} flushes in a row: ${rows
            .map((row) => row.moved_tenant)
            .join(', ')}`,
        );
      }
    }
  }

  /**
   * The statement's parameters: the batch numbered and hashed on `expected` (one head per tenant of
   * `tenants`), and the heads it ends at.
   */
  private chained(
    batch: Pending[],
    tenants: string[],
    expected: Head[],
  ): { params: unknown[]; after: Head[] } {
    const ends = new Map(tenants.map((tenantId, i) => [tenantId, { ...(expected[i] ?? GENESIS) }]));
    const columns: unknown[][] = Array.from({ length: 15 }, () => []);
    for (const { entry } of batch) {
      const head = ends.get(entry.tenantId) ?? { ...GENESIS };
      const fields: ChainedFields = {
        ...entry,
        seq: head.seq + 1,
        recordId: this.newRecordId(),
        occurredAt: entry.occurredAt.toISOString(),
      };
      const hash = chainHash(head.hash, fields);
      const row = [
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
      ];
      row.forEach((value, i) => columns[i]?.push(value));
      head.seq = fields.seq;
      head.hash = hash;
    }
    const after = tenants.map((tenantId) => ends.get(tenantId) ?? GENESIS);
    return {
      params: [
        tenants,
        expected.map((head) => head.seq),
        expected.map((head) => Buffer.from(head.hash, 'hex')),
        after.map((head) => head.seq),
        after.map((head) => Buffer.from(head.hash, 'hex')),
        ...columns,
      ],
      after,
    };
  }

  /** Notes where a tenant's chain ends, forgetting the least recently used head beyond the bound. */
  private remember(tenantId: string, head: Head): void {
    this.heads.delete(tenantId);
    this.heads.set(tenantId, head);
    if (this.heads.size > this.maxKnownHeads) {
      const oldest = this.heads.keys().next();
      if (!oldest.done) {
        this.heads.delete(oldest.value);
      }
    }
  }
}

import { withTransaction } from '@lib/event-store';
import type { TenantId } from '@lib/ids';
import type { Pool } from 'pg';
import { ChainVerifier, type BrokenRecord, type ChainHead } from './audit-chain';
import { decodeCursor, encodeCursor } from './audit-cursor';
import {
  AUDIT_OUTCOMES,
  LATEST_TIME,
  type AuditBinding,
  type AuditHashVersion,
  type AuditOutcome,
  type AuditRecord,
} from './audit-record';
import { InvalidAuditQuery } from './audit.errors';

/** An operator's question to one tenant's log. Filters combine with AND; time is `from ≤ t < to`. */
export interface AuditQuery {
  readonly tenantId: TenantId;
  readonly from?: Date;
  readonly to?: Date;
  readonly principalId?: string;
  readonly operation?: string;
  readonly outcome?: AuditOutcome;
  readonly resource?: string;
  /** Records per page, 1 to {@link MAX_PAGE_SIZE}. Default: 100. */
  readonly limit?: number;
  /** `nextCursor` of the previous page, with the same filters. */
  readonly cursor?: string;
}

/** One page of records, newest first (by seq); `nextCursor` when older ones may follow. */
export interface AuditPage {
  readonly records: AuditRecord[];
  readonly nextCursor?: string;
}

/**
 * The outcome of `verify`: the number of intact records and where the chain ends (an operator who keeps the
 * head elsewhere can later tell that the chain was not rebuilt wholesale), or the first place it breaks.
 */
export type VerifyResult =
  | { readonly ok: true; readonly records: number; readonly head: ChainHead }
  | { readonly ok: false; readonly records: number; readonly firstBroken: BrokenRecord };

export interface AuditLogOptions {
  /** Records read per round trip by `verify`. Default: 1 000. */
  verifyPageSize?: number;
}

/** Most records one query returns. */
export const MAX_PAGE_SIZE = 500;

const COLUMNS = `tenant_id, seq, record_id, principal_id, credential_id, source_address, operation, binding,
  resource, outcome, reason, trace_id, hash_version, prev_hash, hash`;

interface RecordRow {
  tenant_id: string;
  seq: string;
  record_id: string;
  principal_id: string | null;
  credential_id: string | null;
  source_address: string | null;
  operation: string;
  binding: AuditBinding;
  resource: string | null;
  outcome: AuditOutcome;
  reason: string | null;
  trace_id: string | null;
  hash_version: AuditHashVersion;
  prev_hash: Buffer;
  hash: Buffer;
}

/**
 * The read side of the audit log: the operator's filtered, paginated listing, and `verify`, which recomputes a
 * tenant's chain from its first record and reports the first record an edit, deletion or reordering broke.
 */
export class AuditLog {
  private readonly verifyPageSize: number;

  constructor(
    private readonly pool: Pool,
    options: AuditLogOptions = {},
  ) {
    this.verifyPageSize = options.verifyPageSize ?? 1_000;
  }

  /** A page of the tenant's records matching the filters; throws {@link InvalidAuditQuery} on bad input. */
  async query(query: AuditQuery): Promise<AuditPage> {
    const limit = query.limit ?? 100;
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE) {
      throw new InvalidAuditQuery(`limit must be an integer from 1 to ${MAX_PAGE_SIZE}`);
    }
    if (query.outcome !== undefined && !AUDIT_OUTCOMES.includes(query.outcome)) {
      throw new InvalidAuditQuery(`outcome must be one of ${AUDIT_OUTCOMES.join(', ')}`);
    }
    const params: unknown[] = [query.tenantId];
    const where = ['tenant_id = $1'];
    const filter = (condition: string, value: unknown): void => {
      params.push(value);
      where.push(condition.replace('?', `$${params.length}`));
    };
    if (query.from !== undefined) {
      filter('occurred_at >= ?', validTime(query.from, 'from'));
    }
    if (query.to !== undefined) {
      filter('occurred_at < ?', validTime(query.to, 'to'));
    }
    if (query.principalId !== undefined) {
      filter('principal_id = ?', query.principalId);
    }
    if (query.operation !== undefined) {
      filter('operation = ?', query.operation);
    }
    if (query.outcome !== undefined) {
      filter('outcome = ?', query.outcome);
    }
    if (query.resource !== undefined) {
      filter('resource = ?', query.resource);
    }
    if (query.cursor !== undefined) {
      filter('seq < ?', decodeCursor(query.cursor));
    }
    params.push(limit + 1);
    const { rows } = await this.pool.query<RecordRow & { occurred_at: Date }>(
      `SELECT ${COLUMNS}, occurred_at FROM audit.records
        WHERE ${where.join(' AND ')} ORDER BY seq DESC LIMIT $${params.length}`,
      params,
    );
    const records = rows
      .slice(0, limit)
      .map((row) => ({ ...fromRow(row), occurredAt: row.occurred_at }));
    const last = records.at(-1);
    return rows.length > limit && last
      ? { records, nextCursor: encodeCursor(last.seq) }
      : { records };
  }

  /**
   * Recomputes the tenant's chain in seq order, page by page, each record by its own hash version, from one
   * snapshot (a repeatable-read transaction: records written meanwhile are neither half seen nor mistaken for
   * tampering), and compares its end with the tenant's chain head.
   */
  async verify(tenantId: TenantId): Promise<VerifyResult> {
    return withTransaction(this.pool, async (client) => {
      await client.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
      const heads = await client.query<{ seq: string; hash: Buffer }>(
        'SELECT seq, hash FROM audit.chain_heads WHERE tenant_id = $1',
        [tenantId],
      );
      const headRow = heads.rows[0];
      const verifier = new ChainVerifier(
        headRow ? { seq: Number(headRow.seq), hash: headRow.hash.toString('hex') } : null,
      );
      for (let after = 0; ; ) {
        const page = await client.query<RecordRow & { occurred_us: string }>(
          `SELECT ${COLUMNS}, (extract(epoch FROM occurred_at) * 1000000)::text AS occurred_us
             FROM audit.records WHERE tenant_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
          [tenantId, after, this.verifyPageSize],
        );
        for (const row of page.rows) {
          const broken = verifier.next({
            ...fromRow(row),
            occurredAt: storedTime(row.occurred_us),
          });
          if (broken) {
            return { ok: false, records: verifier.tip.seq, firstBroken: broken };
          }
        }
        const last = page.rows.at(-1);
        if (page.rows.length < this.verifyPageSize || !last) {
          break;
        }
        after = Number(last.seq);
      }
      const broken = verifier.end();
      if (broken) {
        return { ok: false, records: verifier.tip.seq, firstBroken: broken };
      }
      return { ok: true, records: verifier.tip.seq, head: verifier.tip };
    });
  }
}

function fromRow(row: RecordRow): Omit<AuditRecord, 'occurredAt'> {
  return {
    tenantId: row.tenant_id,
    seq: Number(row.seq),
    recordId: row.record_id,
    principalId: row.principal_id,
    credentialId: row.credential_id,
    sourceAddress: row.source_address,
    operation: row.operation,
    binding: row.binding,
    resource: row.resource,
    outcome: row.outcome,
    reason: row.reason,
    traceId: row.trace_id,
    hashVersion: row.hash_version,
    prevHash: row.prev_hash.toString('hex'),
    hash: row.hash.toString('hex'),
  };
}

/**
 * The stored time as the writer hashed it (`Date.toISOString`), from its exact value in microseconds since the
 * epoch. A time the writer cannot have written (sub-millisecond digits, beyond year 9999, infinite) is rendered
 * so that it matches no ISO string, and so no hash.
 */
export function storedTime(epochMicros: string): string {
  const exact = /^(-?\d+)(\.0*)?$/.exec(epochMicros);
  if (exact?.[1] !== undefined) {
    const micros = BigInt(exact[1]);
    const millis = Number(micros / 1000n);
    if (micros % 1000n === 0n && millis >= 0 && millis <= LATEST_TIME) {
      return new Date(millis).toISOString();
    }
  }
  return `${epochMicros} µs since the epoch`;
}

function validTime(value: Date, name: string): Date {
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) {
    throw new InvalidAuditQuery(`${name} must be a valid time`);
  }
  return value;
}

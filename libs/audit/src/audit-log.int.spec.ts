import { withTransaction } from '@lib/event-store';
import { tenantIdOf } from '@lib/ids';
import { createTestDatabase, type TestDatabase } from '@lib/testing';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditLog, type AuditQuery } from './audit-log';
import {
  chainHash,
  GENESIS_HASH,
  type AuditEntry,
  type AuditOutcome,
  type AuditRecord,
} from './audit-record';
import { AuditWriter } from './audit-writer';
import { InvalidAuditQuery } from './audit.errors';

const START = Date.UTC(2026, 11, 4, 9, 0, 0);
const OUTCOMES: AuditOutcome[] = ['ok', 'ok', 'denied', 'ok', 'failed', 'unauthenticated'];

/** The n-th of a tenant's seeded entries: principals, operations, outcomes and resources in cycles. */
function seeded(tenantId: string, n: number): AuditEntry {
  const outcome = OUTCOMES[n % OUTCOMES.length]!;
  return {
    tenantId,
    principalId: n % 5 === 4 ? null : `user-${n % 3}`,
    credentialId: `key-${n % 3}`,
    sourceAddress: '198.51.100.20',
    operation: n % 2 === 0 ? 'a2a.SendMessage' : 'a2a.GetTask',
    binding: 'HTTP+JSON',
    resource: `task/${n % 4}`,
    outcome,
    reason: outcome === 'ok' ? null : 'PERMISSION_DENIED',
    traceId: null,
    occurredAt: new Date(START + n * 60_000),
  };
}

describe('AuditLog (Postgres)', () => {
  let db: TestDatabase;
  let writer: AuditWriter;
  let log: AuditLog;
  /** The records of tenant `q`, newest first, as the database numbered them. */
  let stored: AuditRecord[];

  beforeAll(async () => {
    db = await createTestDatabase('audit_log');
    writer = new AuditWriter(db.pool);
    log = new AuditLog(db.pool, { verifyPageSize: 100 });
    for (let n = 0; n < 90; n++) {
      // Interleaved with another tenant's records, which no query of `q` may return.
      await Promise.all([writer.record(seeded('q', n)), writer.record(seeded('q-other', n))]);
    }
    stored = (await log.query({ tenantId: tenantIdOf('q'), limit: 500 })).records;
  });

  afterAll(async () => {
    await writer.close();
    await db.drop();
  });

  /** Every record of a query, page by page, with the number of pages it took. */
  async function allPages(query: AuditQuery): Promise<{ records: AuditRecord[]; pages: number }> {
    const records: AuditRecord[] = [];
    let cursor = query.cursor;
    let pages = 0;
    do {
      const page = await log.query({ ...query, cursor });
      records.push(...page.records);
      cursor = page.nextCursor;
      pages += 1;
    } while (cursor !== undefined);
    return { records, pages };
  }

  describe('query', () => {
    it('lists a tenant’s records newest first, only that tenant’s', () => {
      expect(stored.map((record) => record.seq)).toEqual(
        Array.from({ length: 90 }, (_, i) => 90 - i),
      );
      expect(stored.every((record) => record.tenantId === 'q')).toBe(true);
      expect(stored.at(-1)).toMatchObject(seeded('q', 0));
    });

    it('stops at the limit (100 by default) and says where the next page starts', async () => {
      const page = await log.query({ tenantId: tenantIdOf('q'), limit: 10 });
      expect(page.records).toEqual(stored.slice(0, 10));
      expect(page.nextCursor).toBeDefined();
      const next = await log.query({
        tenantId: tenantIdOf('q'),
        limit: 10,
        cursor: page.nextCursor,
      });
      expect(next.records).toEqual(stored.slice(10, 20));
      const all = await log.query({ tenantId: tenantIdOf('q') });
      expect(all.records).toHaveLength(90);
      expect(all.nextCursor).toBeUndefined();
    });

    it.each<[string, Omit<AuditQuery, 'tenantId'>, (record: AuditRecord) => boolean]>([
      ['principal', { principalId: 'user-1' }, (r) => r.principalId === 'user-1'],
      ['operation', { operation: 'a2a.GetTask' }, (r) => r.operation === 'a2a.GetTask'],
      ['outcome', { outcome: 'denied' }, (r) => r.outcome === 'denied'],
      ['resource', { resource: 'task/2' }, (r) => r.resource === 'task/2'],
      [
        'time range (from inclusive, to exclusive)',
        { from: new Date(START + 10 * 60_000), to: new Date(START + 40 * 60_000) },
        (r) =>
          r.occurredAt.getTime() >= START + 10 * 60_000 &&
          r.occurredAt.getTime() < START + 40 * 60_000,
      ],
      [
        'several filters at once',
        { principalId: 'user-0', outcome: 'ok', from: new Date(START + 30 * 60_000) },
        (r) =>
          r.principalId === 'user-0' &&
          r.outcome === 'ok' &&
          r.occurredAt.getTime() >= START + 30 * 60_000,
      ],
    ])('filters by %s, page by page without a duplicate or a gap', async (_, filters, matches) => {
      const expected = stored.filter(matches);
      expect(expected.length).toBeGreaterThan(3);
      const { records, pages } = await allPages({
        tenantId: tenantIdOf('q'),
        ...filters,
        limit: 4,
      });
      expect(records).toEqual(expected);
      // No empty last page: a page says there is a next one only when there is.
      expect(pages).toBe(Math.ceil(expected.length / 4));
    });

    it('pages on where they were while new records are written', async () => {
      const first = await log.query({
        tenantId: tenantIdOf('q'),
        operation: 'a2a.SendMessage',
        limit: 20,
      });
      for (let n = 90; n < 100; n++) {
        await writer.record(seeded('q', n));
      }
      const rest = await allPages({
        tenantId: tenantIdOf('q'),
        operation: 'a2a.SendMessage',
        limit: 20,
        cursor: first.nextCursor,
      });
      const seqs = [...first.records, ...rest.records].map((record) => record.seq);
      expect(seqs).toEqual(
        stored.filter((r) => r.operation === 'a2a.SendMessage').map((record) => record.seq),
      );
      stored = (await log.query({ tenantId: tenantIdOf('q'), limit: 500 })).records;
    });

    it('never shows another tenant’s records, with or without a cursor from elsewhere', async () => {
      const nobody = tenantIdOf('nobody');
      const cursor = (await log.query({ tenantId: tenantIdOf('q'), limit: 5 })).nextCursor;
      for (const query of [{ tenantId: nobody }, { tenantId: nobody, cursor }]) {
        expect((await log.query(query)).records).toEqual([]);
      }
      const other = await log.query({ tenantId: tenantIdOf('q-other'), cursor });
      expect(other.records.every((record) => record.tenantId === 'q-other')).toBe(true);
    });

    it.each<[string, Partial<AuditQuery>]>([
      ['a limit above 500', { limit: 501 }],
      ['a limit of 0', { limit: 0 }],
      ['a fractional limit', { limit: 2.5 }],
      ['a forged cursor', { cursor: 'not-a-cursor' }],
      ['an unknown outcome', { outcome: 'maybe' as AuditOutcome }],
      ['an invalid time', { from: new Date(Number.NaN) }],
    ])('refuses %s', async (_, bad) => {
      await expect(log.query({ tenantId: tenantIdOf('q'), ...bad })).rejects.toBeInstanceOf(
        InvalidAuditQuery,
      );
    });
  });

  describe('verify', () => {
    /** A fresh tenant with `n` records, and their ids by seq. */
    async function chainOf(tenantId: string, n: number): Promise<Map<number, string>> {
      await Promise.all(Array.from({ length: n }, (_, i) => writer.record(seeded(tenantId, i))));
      const { rows } = await db.pool.query<{
        seq: string;
        record_id: string;
        hash_version: number;
      }>('SELECT seq, record_id, hash_version FROM audit.records WHERE tenant_id = $1', [tenantId]);
      // The tampering below is of records chained by Postgres.
      expect(new Set(rows.map((row) => row.hash_version))).toEqual(new Set([2]));
      return new Map(rows.map((row) => [Number(row.seq), row.record_id]));
    }

    /** Runs SQL as the tamperer would: a superuser getting past the append-only triggers. */
    async function tamper(...statements: string[]): Promise<void> {
      await withTransaction(db.pool, async (client) => {
        await client.query(`SET LOCAL audit.allow_purge = 'on'`);
        for (const statement of statements) {
          await client.query(statement);
        }
      });
    }

    it('finds an intact chain, read over several pages, and gives its head', async () => {
      await chainOf('intact', 250);
      const result = await log.verify(tenantIdOf('intact'));
      const head = await db.pool.query<{ hash: Buffer }>(
        `SELECT hash FROM audit.records WHERE tenant_id = 'intact' AND seq = 250`,
      );
      expect(result).toEqual({
        ok: true,
        records: 250,
        head: { seq: 250, hash: head.rows[0]!.hash.toString('hex') },
      });
      expect(await log.verify(tenantIdOf('no-such-tenant'))).toMatchObject({
        ok: true,
        records: 0,
      });
    });

    it('names the record whose field was updated (hash mismatch), on a page boundary too', async () => {
      const ids = await chainOf('edited', 150);
      await tamper(
        `UPDATE audit.records SET principal_id = 'mallory' WHERE tenant_id = 'edited' AND seq = 101`,
      );
      expect(await log.verify(tenantIdOf('edited'))).toEqual({
        ok: false,
        records: 100,
        firstBroken: { seq: 101, recordId: ids.get(101), problem: 'hash mismatch' },
      });
    });

    it('sees a time moved by one microsecond', async () => {
      const ids = await chainOf('micro', 5);
      await tamper(
        `UPDATE audit.records SET occurred_at = occurred_at + interval '1 microsecond'
          WHERE tenant_id = 'micro' AND seq = 3`,
      );
      expect(await log.verify(tenantIdOf('micro'))).toMatchObject({
        ok: false,
        firstBroken: { seq: 3, recordId: ids.get(3), problem: 'hash mismatch' },
      });
    });

    it('names the seq of a deleted middle record (missing record), at the end of a page too', async () => {
      await chainOf('deleted', 150);
      await tamper(`DELETE FROM audit.records WHERE tenant_id = 'deleted' AND seq = 100`);
      expect(await log.verify(tenantIdOf('deleted'))).toEqual({
        ok: false,
        records: 99,
        firstBroken: { seq: 100, problem: 'missing record' },
      });
    });

    it('sees a deleted middle record even when the later ones were renumbered to hide the gap', async () => {
      const ids = await chainOf('renumbered', 10);
      await tamper(
        `DELETE FROM audit.records WHERE tenant_id = 'renumbered' AND seq = 5`,
        `UPDATE audit.records SET seq = seq - 1 WHERE tenant_id = 'renumbered' AND seq > 5`,
        `UPDATE audit.chain_heads SET seq = seq - 1 WHERE tenant_id = 'renumbered'`,
      );
      expect(await log.verify(tenantIdOf('renumbered'))).toEqual({
        ok: false,
        records: 4,
        firstBroken: { seq: 5, recordId: ids.get(6), problem: 'hash mismatch' },
      });
    });

    it('names the last record’s seq when it was deleted (head mismatch)', async () => {
      await chainOf('truncated', 10);
      await tamper(`DELETE FROM audit.records WHERE tenant_id = 'truncated' AND seq >= 9`);
      expect(await log.verify(tenantIdOf('truncated'))).toEqual({
        ok: false,
        records: 8,
        firstBroken: { seq: 9, problem: 'head mismatch' },
      });
    });

    it('names the first of two records swapped with each other (hash mismatch)', async () => {
      const ids = await chainOf('swapped', 10);
      await tamper(
        `UPDATE audit.records SET seq = 1000 WHERE tenant_id = 'swapped' AND seq = 3`,
        `UPDATE audit.records SET seq = 3 WHERE tenant_id = 'swapped' AND seq = 7`,
        `UPDATE audit.records SET seq = 7 WHERE tenant_id = 'swapped' AND seq = 1000`,
      );
      expect(await log.verify(tenantIdOf('swapped'))).toEqual({
        ok: false,
        records: 2,
        firstBroken: { seq: 3, recordId: ids.get(7), problem: 'hash mismatch' },
      });
    });

    it('names a record added behind the writers’ back (head mismatch)', async () => {
      const ids = await chainOf('added', 4);
      await tamper(
        `INSERT INTO audit.records
         SELECT tenant_id, 5, gen_random_uuid(), occurred_at, principal_id, credential_id, source_address,
                operation, binding, resource, outcome, reason, trace_id, hash, hash
           FROM audit.records WHERE tenant_id = 'added' AND seq = 4`,
      );
      const result = await log.verify(tenantIdOf('added'));
      expect(result).toMatchObject({ ok: false, records: 4 });
      expect(result.ok || result.firstBroken).toMatchObject({ seq: 5, problem: 'head mismatch' });
      expect(result.ok || result.firstBroken.recordId).not.toBe(ids.get(4));
    });

    /**
     * A tenant whose first `n` records were written by a version-1 writer (chained in Node, inserted here as
     * it did), continued by `m` records of the current writer; its record ids by seq.
     */
    async function mixedChainOf(
      tenantId: string,
      n: number,
      m: number,
    ): Promise<Map<number, string>> {
      let prevHash = GENESIS_HASH;
      for (let seq = 1; seq <= n; seq++) {
        const { occurredAt, ...entry } = seeded(tenantId, seq);
        const fields = {
          ...entry,
          seq,
          recordId: randomUUID(),
          occurredAt: occurredAt.toISOString(),
        };
        const hash = chainHash(prevHash, fields);
        await db.pool.query(
          `INSERT INTO audit.records (tenant_id, seq, record_id, occurred_at, principal_id, credential_id,
             source_address, operation, binding, resource, outcome, reason, trace_id, prev_hash, hash)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
          [
            tenantId,
            seq,
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
            Buffer.from(prevHash, 'hex'),
            Buffer.from(hash, 'hex'),
          ],
        );
        prevHash = hash;
      }
      await db.pool.query(
        `INSERT INTO audit.chain_heads (tenant_id, seq, hash) VALUES ($1, $2, $3)`,
        [tenantId, n, Buffer.from(prevHash, 'hex')],
      );
      for (let seq = n + 1; seq <= n + m; seq++) {
        await writer.record(seeded(tenantId, seq));
      }
      const { rows } = await db.pool.query<{
        seq: string;
        record_id: string;
        hash_version: number;
      }>(
        'SELECT seq, record_id, hash_version FROM audit.records WHERE tenant_id = $1 ORDER BY seq',
        [tenantId],
      );
      expect(rows.map((row) => row.hash_version)).toEqual([
        ...Array.from({ length: n }, () => 1),
        ...Array.from({ length: m }, () => 2),
      ]);
      return new Map(rows.map((row) => [Number(row.seq), row.record_id]));
    }

    it('verifies a chain of version-1 records continued by version-2 ones, over pages', async () => {
      await mixedChainOf('mixed', 120, 130);
      const result = await log.verify(tenantIdOf('mixed'));
      const head = await db.pool.query<{ hash: Buffer }>(
        `SELECT hash FROM audit.chain_heads WHERE tenant_id = 'mixed'`,
      );
      expect(result).toEqual({
        ok: true,
        records: 250,
        head: { seq: 250, hash: head.rows[0]!.hash.toString('hex') },
      });
      const { records } = await log.query({ tenantId: tenantIdOf('mixed'), limit: 500 });
      expect(records.map((record) => record.hashVersion)).toEqual(
        records.map((record) => (record.seq > 120 ? 2 : 1)),
      );
    });

    it.each([
      ['a version-1 record flipped to 2', 2, 2],
      ['a version-2 record flipped to 1', 5, 1],
    ])('names %s (hash mismatch)', async (_, seq, version) => {
      const tenantId = `flipped-${seq}`;
      const ids = await mixedChainOf(tenantId, 3, 3);
      await tamper(
        `UPDATE audit.records SET hash_version = ${version} WHERE tenant_id = '${tenantId}' AND seq = ${seq}`,
      );
      expect(await log.verify(tenantIdOf(tenantId))).toEqual({
        ok: false,
        records: seq - 1,
        firstBroken: { seq, recordId: ids.get(seq), problem: 'hash mismatch' },
      });
    });

    it('names a record moved into another tenant’s chain', async () => {
      const ids = await chainOf('mover', 3);
      await chainOf('target', 3);
      await tamper(
        `UPDATE audit.records SET tenant_id = 'target', seq = 4 WHERE tenant_id = 'mover' AND seq = 3`,
        `UPDATE audit.chain_heads SET seq = 4 WHERE tenant_id = 'target'`,
      );
      expect(await log.verify(tenantIdOf('target'))).toMatchObject({
        ok: false,
        firstBroken: { seq: 4, recordId: ids.get(3), problem: 'hash mismatch' },
      });
      expect(await log.verify(tenantIdOf('mover'))).toMatchObject({
        ok: false,
        firstBroken: { seq: 3, problem: 'head mismatch' },
      });
    });
  });
});

import { createPool, isTransientDatabaseError, withTransaction } from '@lib/event-store';
import { tenantIdOf } from '@lib/ids';
import { createTestDatabase, type TestDatabase } from '@lib/testing';
import type { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditLog } from './audit-log';
import {
  AUDIT_BINDINGS,
  AUDIT_OUTCOMES,
  chainHashV2,
  GENESIS_HASH,
  PLATFORM_TENANT,
  recordDigest,
  type AuditEntry,
} from './audit-record';
import { AuditWriter } from './audit-writer';
import { AuditWriterClosed, InvalidAuditEntry } from './audit.errors';

function anEntry(tenantId: string, overrides: Partial<AuditEntry> = {}): AuditEntry {
  return {
    tenantId,
    principalId: 'alice',
    credentialId: 'key_1',
    sourceAddress: '203.0.113.7',
    operation: 'a2a.SendMessage',
    binding: 'JSONRPC',
    resource: 'task/t-1',
    outcome: 'ok',
    reason: null,
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    occurredAt: new Date('2026-12-04T10:11:12.345Z'),
    ...overrides,
  };
}

/** Waits until `check` holds, polling; fails with `what` after 10 s. */
async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) {
      throw new Error(`not within 10 s: ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('AuditWriter (Postgres)', () => {
  let db: TestDatabase;
  let log: AuditLog;

  beforeAll(async () => {
    db = await createTestDatabase('audit_writer');
    log = new AuditLog(db.pool);
  });

  afterAll(async () => {
    await db.drop();
  });

  const count = async (tenantId: string): Promise<number> => {
    const { rows } = await db.pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM audit.records WHERE tenant_id = $1',
      [tenantId],
    );
    return rows[0]!.n;
  };

  it('writes a record that reads back field for field, first in its chain', async () => {
    const writer = new AuditWriter(db.pool);
    const entry = anEntry('readback');
    await writer.record(entry);
    const { records } = await log.query({ tenantId: tenantIdOf('readback') });
    expect(records).toHaveLength(1);
    const [record] = records;
    expect(record).toMatchObject({ ...entry, seq: 1, hashVersion: 2, prevHash: GENESIS_HASH });
    expect(record!.recordId).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    // Chained by Postgres on the digest computed in Node.
    const digest = recordDigest({ ...record!, occurredAt: entry.occurredAt.toISOString() });
    expect(record!.hash).toBe(chainHashV2(GENESIS_HASH, 1, digest));
    await writer.close();
  });

  it('stores every binding and outcome, and platform records in their own chain', async () => {
    const writer = new AuditWriter(db.pool);
    await Promise.all([
      ...AUDIT_BINDINGS.map((binding) => writer.record(anEntry('kinds', { binding }))),
      ...AUDIT_OUTCOMES.map((outcome) =>
        writer.record(anEntry('kinds', { outcome, reason: outcome === 'ok' ? null : 'DENIED' })),
      ),
      writer.record(
        anEntry(PLATFORM_TENANT, {
          principalId: null,
          credentialId: null,
          operation: 'auth.authenticate',
          resource: null,
          outcome: 'unauthenticated',
          reason: 'UNAUTHENTICATED',
        }),
      ),
    ]);
    expect(await count('kinds')).toBe(AUDIT_BINDINGS.length + AUDIT_OUTCOMES.length);
    expect(await log.verify(tenantIdOf('kinds'))).toMatchObject({ ok: true, records: 9 });
    expect(await log.verify(PLATFORM_TENANT)).toMatchObject({ ok: true, records: 1 });
    await writer.close();
  });

  it('writes many concurrent calls in a few transactions, at most maxBatch records each', async () => {
    const writer = new AuditWriter(db.pool);
    const tenants = ['batch-a', 'batch-b', 'batch-c'];
    await Promise.all(
      Array.from({ length: 1_000 }, (_, i) => writer.record(anEntry(tenants[i % 3]!))),
    );
    expect(writer.stats).toEqual({ flushes: 2, records: 1_000, failedFlushes: 0 });
    // Independent of the writer's own count: the transactions that inserted the rows.
    const { rows } = await db.pool.query<{ transactions: number }>(
      `SELECT count(DISTINCT xmin::text)::int AS transactions FROM audit.records
        WHERE tenant_id = ANY($1)`,
      [tenants],
    );
    expect(rows[0]!.transactions).toBe(2);

    const small = new AuditWriter(db.pool, { maxBatch: 100 });
    await Promise.all(Array.from({ length: 1_000 }, () => small.record(anEntry('batch-small'))));
    expect(small.stats.flushes).toBe(10);
    for (const tenantId of [...tenants, 'batch-small']) {
      expect(await log.verify(tenantIdOf(tenantId))).toMatchObject({ ok: true });
    }
  });

  it('puts the calls made while a flush commits into the next flush', async () => {
    const writer = new AuditWriter(db.pool);
    const first = writer.record(anEntry('coalesce'));
    // The first flush has started (and is waiting for the database) after this turn.
    await new Promise((resolve) => setImmediate(resolve));
    const rest = Array.from({ length: 100 }, () => writer.record(anEntry('coalesce')));
    await Promise.all([first, ...rest]);
    expect(writer.stats.flushes).toBe(2);
    expect(await count('coalesce')).toBe(101);
  });

  it('sends one statement per flush, whoever else appended to the chain meanwhile', async () => {
    const statements: string[] = [];
    const counted = createPool(db.url, {
      max: 2,
      applicationName: 'a2a-test:audit-writer-counted',
    });
    counted.on('connect', (client) => {
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      (client as { query: unknown }).query = (...args: unknown[]) => {
        statements.push(String(typeof args[0] === 'string' ? args[0] : ''));
        return query(...args);
      };
    });
    const writer = new AuditWriter(counted);
    const other = new AuditWriter(db.pool);
    const flushes = async (write: () => Promise<unknown>): Promise<string[]> => {
      statements.length = 0;
      await write();
      return statements;
    };

    await other.record(anEntry('round-trips'));
    // First sight of a chain another writer started.
    expect(await flushes(() => writer.record(anEntry('round-trips')))).toEqual([
      expect.stringContaining('audit.chain_records'),
    ]);
    // A batch of several tenants, one of them new.
    expect(
      await flushes(() =>
        Promise.all([
          ...Array.from({ length: 20 }, () => writer.record(anEntry('round-trips'))),
          writer.record(anEntry('round-trips-new')),
        ]),
      ),
    ).toHaveLength(1);
    // The chain moved by another writer since this one last wrote.
    await other.record(anEntry('round-trips'));
    expect(await flushes(() => writer.record(anEntry('round-trips')))).toHaveLength(1);
    expect(writer.stats).toEqual({ flushes: 3, records: 23, failedFlushes: 0 });

    expect(await log.verify(tenantIdOf('round-trips'))).toMatchObject({ ok: true, records: 24 });
    expect(await log.verify(tenantIdOf('round-trips-new'))).toMatchObject({ ok: true, records: 1 });
    await writer.close();
    await other.close();
    await counted.end();
  });

  it('rejects only the invalid entry; the others of its batch are written', async () => {
    const writer = new AuditWriter(db.pool);
    const outcomes = await Promise.allSettled([
      writer.record(anEntry('invalid')),
      writer.record(anEntry('invalid', { principalId: 'eve\nseq 7 ok' })),
      writer.record(anEntry('invalid', { tenantId: '' })),
      writer.record(anEntry('invalid')),
    ]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual([
      'fulfilled',
      'rejected',
      'rejected',
      'fulfilled',
    ]);
    expect((outcomes[1] as PromiseRejectedResult).reason).toBeInstanceOf(InvalidAuditEntry);
    expect(writer.stats).toEqual({ flushes: 1, records: 2, failedFlushes: 0 });
    expect(await log.verify(tenantIdOf('invalid'))).toMatchObject({ ok: true, records: 2 });
  });

  it('stores no property but the entry fields: secrets and content have no column to go to', async () => {
    const writer = new AuditWriter(db.pool);
    const smuggled = {
      ...anEntry('secrets'),
      apiKey: 'sk_live_SECRET',
      message: { parts: [{ text: 'SECRET content' }] },
    } as AuditEntry;
    await writer.record(smuggled);
    const { rows } = await db.pool.query<{ row: string }>(
      `SELECT row_to_json(r)::text AS row FROM audit.records r WHERE tenant_id = 'secrets'`,
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]!.row).not.toMatch(/SECRET/);
    const columns = await db.pool.query<{ column_name: string }>(
      `SELECT column_name FROM information_schema.columns
        WHERE table_schema = 'audit' AND table_name = 'records' ORDER BY ordinal_position`,
    );
    expect(columns.rows.map((row) => row.column_name)).toEqual([
      'tenant_id',
      'seq',
      'record_id',
      'occurred_at',
      'principal_id',
      'credential_id',
      'source_address',
      'operation',
      'binding',
      'resource',
      'outcome',
      'reason',
      'trace_id',
      'prev_hash',
      'hash',
      'hash_version',
    ]);
  });

  it('two writers (two pools, as two replicas) on the same tenants build one dense chain per tenant', async () => {
    const pools: Pool[] = ['a', 'b'].map((name) =>
      createPool(db.url, { max: 2, applicationName: `a2a-test:audit-writer-${name}` }),
    );
    const writers = pools.map((pool) => new AuditWriter(pool, { maxBatch: 50 }));
    const tenants = ['race-1', 'race-2', 'race-3'];
    const waves = 20;
    const perWave = 30;
    const write = async (writer: AuditWriter, name: string): Promise<void> => {
      for (let wave = 0; wave < waves; wave++) {
        await Promise.all(
          Array.from({ length: perWave }, (_, i) => {
            const n = wave * perWave + i;
            return writer.record(anEntry(tenants[n % 3]!, { resource: `${name}/${n}` }));
          }),
        );
      }
    };
    let verifying = true;
    const verifications: boolean[] = [];
    const verifyMeanwhile = async (): Promise<void> => {
      while (verifying) {
        verifications.push((await log.verify(tenantIdOf('race-1'))).ok);
      }
    };
    const checker = verifyMeanwhile();
    await Promise.all([write(writers[0]!, 'a'), write(writers[1]!, 'b')]);
    verifying = false;
    await checker;
    expect(verifications.length).toBeGreaterThan(0);
    expect(verifications.every(Boolean)).toBe(true);

    for (const tenantId of tenants) {
      expect(await log.verify(tenantIdOf(tenantId))).toMatchObject({ ok: true, records: 2 * 200 });
      const { rows } = await db.pool.query<{ seq: string; resource: string }>(
        'SELECT seq, resource FROM audit.records WHERE tenant_id = $1 ORDER BY seq',
        [tenantId],
      );
      expect(rows.map((row) => Number(row.seq))).toEqual(rows.map((_, i) => i + 1));
      // Each writer's records keep its call order within the chain.
      for (const name of ['a', 'b']) {
        const mine = rows
          .filter((row) => row.resource.startsWith(`${name}/`))
          .map((row) => Number(row.resource.slice(2)));
        expect(mine).toHaveLength(200);
        expect(mine).toEqual([...mine].sort((x, y) => x - y));
      }
    }
    await Promise.all(writers.map((writer) => writer.close()));
    await Promise.all(pools.map((pool) => pool.end()));
  });

  it('rejects the callers of a flush that failed (connection lost) and goes on without a gap', async () => {
    const application = 'a2a-test:audit-writer-failing';
    const pool = createPool(db.url, { max: 2, applicationName: application });
    const writer = new AuditWriter(pool);
    await writer.record(anEntry('fails'));
    const holder = await db.pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM audit.chain_heads WHERE tenant_id = 'fails' FOR UPDATE`);
      const blocked = writer.record(anEntry('fails')).catch((error: unknown) => error);
      await eventually(async () => {
        const { rowCount } = await db.pool.query(
          `SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'`,
          [application],
        );
        return rowCount === 1;
      }, 'the flush waits for the chain head');
      await db.pool.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1',
        [application],
      );
      const failure = await blocked;
      expect(isTransientDatabaseError(failure)).toBe(true);
      expect(writer.stats.failedFlushes).toBe(1);
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
    }
    await writer.record(anEntry('fails'));
    expect(await log.verify(tenantIdOf('fails'))).toMatchObject({ ok: true, records: 2 });
    await writer.close();
    await pool.end();
  });

  it('close() writes what is buffered, then refuses new entries', async () => {
    const writer = new AuditWriter(db.pool);
    const pending = Array.from({ length: 50 }, () => writer.record(anEntry('closing')));
    await writer.close();
    expect(await count('closing')).toBe(50);
    await Promise.all(pending);
    await expect(writer.record(anEntry('closing'))).rejects.toBeInstanceOf(AuditWriterClosed);
    await writer.close();
  });

  it('the tables refuse changes unless a purge says so', async () => {
    const writer = new AuditWriter(db.pool);
    await writer.record(anEntry('append-only'));
    await writer.record(anEntry('append-only'));
    for (const statement of [
      `UPDATE audit.records SET outcome = 'denied' WHERE tenant_id = 'append-only'`,
      `DELETE FROM audit.records WHERE tenant_id = 'append-only'`,
      'TRUNCATE audit.records',
      `UPDATE audit.chain_heads SET seq = 1 WHERE tenant_id = 'append-only'`,
      `DELETE FROM audit.chain_heads WHERE tenant_id = 'append-only'`,
    ]) {
      await expect(db.pool.query(statement)).rejects.toMatchObject({ code: '42501' });
    }
    await withTransaction(db.pool, async (client) => {
      await client.query(`SET LOCAL audit.allow_purge = 'on'`);
      await client.query(`DELETE FROM audit.records WHERE tenant_id = 'append-only'`);
      await client.query(`DELETE FROM audit.chain_heads WHERE tenant_id = 'append-only'`);
    });
    expect(await count('append-only')).toBe(0);
    // A purged tenant's chain starts again.
    await writer.record(anEntry('append-only'));
    expect(await log.verify(tenantIdOf('append-only'))).toMatchObject({ ok: true, records: 1 });
    await writer.close();
  });
});

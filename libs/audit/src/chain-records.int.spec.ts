import { createPool, withTransaction } from '@lib/event-store';
import { tenantIdOf } from '@lib/ids';
import { createTestDatabase, type TestDatabase } from '@lib/testing';
import { randomUUID } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditLog } from './audit-log';
import { sealAuditEntry, type SealedAuditEntry } from './audit-record';
import { CHAIN_RECORDS, chainRecordsParams } from './audit-writer';

/** A sealed record of `tenantId`, told apart from the others by `resource`. */
function sealed(tenantId: string, resource: string): SealedAuditEntry {
  return sealAuditEntry(
    {
      tenantId,
      principalId: 'alice',
      credentialId: 'key_1',
      sourceAddress: '203.0.113.7',
      operation: 'a2a.SendMessage',
      binding: 'HTTP+JSON',
      resource,
      outcome: 'ok',
      reason: null,
      traceId: null,
      occurredAt: new Date('2026-12-05T01:02:03.456Z'),
    },
    randomUUID(),
  );
}

/** Calls `audit.chain_records` on `client` (in whatever transaction it is in). */
async function chain(client: Pool | PoolClient, records: SealedAuditEntry[]): Promise<void> {
  await client.query(CHAIN_RECORDS, chainRecordsParams(records));
}

describe('audit.chain_records (Postgres)', () => {
  let db: TestDatabase;
  let log: AuditLog;

  beforeAll(async () => {
    db = await createTestDatabase('audit_chain_records');
    log = new AuditLog(db.pool);
  });

  afterAll(async () => {
    await db.drop();
  });

  /** A tenant's records in seq order: resource, seq and hash version. */
  const chainOf = async (
    tenantId: string,
  ): Promise<{ resource: string; seq: number; version: number }[]> => {
    const { rows } = await db.pool.query<{ resource: string; seq: string; hash_version: number }>(
      'SELECT resource, seq, hash_version FROM audit.records WHERE tenant_id = $1 ORDER BY seq',
      [tenantId],
    );
    return rows.map((row) => ({
      resource: row.resource,
      seq: Number(row.seq),
      version: row.hash_version,
    }));
  };

  const headOf = async (tenantId: string): Promise<{ seq: string; hash: string } | undefined> => {
    const { rows } = await db.pool.query<{ seq: string; hash: string }>(
      `SELECT seq, encode(hash, 'hex') AS hash FROM audit.chain_heads WHERE tenant_id = $1`,
      [tenantId],
    );
    return rows[0];
  };

  /** Waits until a session of `application` waits for a lock; fails after 10 s. */
  const waitingForLock = async (application: string): Promise<void> => {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const { rowCount } = await db.pool.query(
        `SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'`,
        [application],
      );
      if (rowCount === 1) {
        return;
      }
      if (Date.now() > deadline) {
        throw new Error(`${application} did not wait for a lock within 10 s`);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  it('chains records inside a transaction of other statements, each tenant in array order', async () => {
    await db.pool.query('CREATE TABLE changes (id int PRIMARY KEY)');
    await withTransaction(db.pool, async (client) => {
      await client.query('INSERT INTO changes VALUES (1)');
      await chain(client, [
        sealed('tx-a', 'a/1'),
        sealed('tx-b', 'b/1'),
        sealed('tx-a', 'a/2'),
        sealed('tx-a', 'a/3'),
      ]);
      await client.query('INSERT INTO changes VALUES (2)');
      // A second call in the same transaction chains after the first.
      await chain(client, [sealed('tx-b', 'b/2'), sealed('tx-a', 'a/4')]);
    });
    expect((await db.pool.query('SELECT id FROM changes ORDER BY id')).rows).toEqual([
      { id: 1 },
      { id: 2 },
    ]);
    expect(await chainOf('tx-a')).toEqual(
      [1, 2, 3, 4].map((seq) => ({ resource: `a/${seq}`, seq, version: 2 })),
    );
    expect(await chainOf('tx-b')).toEqual(
      [1, 2].map((seq) => ({ resource: `b/${seq}`, seq, version: 2 })),
    );
    expect(await log.verify(tenantIdOf('tx-a'))).toMatchObject({ ok: true, records: 4 });
    expect(await log.verify(tenantIdOf('tx-b'))).toMatchObject({ ok: true, records: 2 });
  });

  it("chains lone records, a tenant's first included, as the general path chains several", async () => {
    // One record per call takes the one-statement path; several take the general one. Both hash the same way.
    await chain(db.pool, [sealed('lone', 'l/1')]);
    await chain(db.pool, [sealed('lone', 'l/2')]);
    await chain(db.pool, [sealed('lone', 'l/3'), sealed('lone', 'l/4')]);
    await chain(db.pool, [sealed('lone', 'l/5')]);
    expect(await chainOf('lone')).toEqual(
      [1, 2, 3, 4, 5].map((seq) => ({ resource: `l/${seq}`, seq, version: 2 })),
    );
    expect(await headOf('lone')).toMatchObject({ seq: '5' });
    expect(await log.verify(tenantIdOf('lone'))).toMatchObject({ ok: true, records: 5 });
  });

  it('makes a second transaction on the same tenant wait for the first, then chain after it', async () => {
    const application = 'a2a-test:chain-records-second';
    const second = createPool(db.url, { max: 1, applicationName: application });
    const first = await db.pool.connect();
    try {
      // Round 1 on a tenant with no head yet (the second waits on the head's insert), round 2 on its head.
      for (const round of [1, 2]) {
        await first.query('BEGIN');
        await chain(first, [
          sealed('waits', `first/${round}/1`),
          sealed('waits', `first/${round}/2`),
        ]);
        const chained = withTransaction(second, (client) =>
          chain(client, [sealed('waits', `second/${round}`)]),
        );
        await waitingForLock(application);
        await first.query('COMMIT');
        await chained;
      }
    } finally {
      first.release();
      await second.end();
    }
    expect((await chainOf('waits')).map(({ resource, seq }) => [seq, resource])).toEqual([
      [1, 'first/1/1'],
      [2, 'first/1/2'],
      [3, 'second/1'],
      [4, 'first/2/1'],
      [5, 'first/2/2'],
      [6, 'second/2'],
    ]);
    expect(await log.verify(tenantIdOf('waits'))).toMatchObject({ ok: true, records: 6 });
  });

  it('leaves no record and the head unmoved when the transaction rolls back', async () => {
    await chain(db.pool, [sealed('rolled-back', 'kept')]);
    const head = await headOf('rolled-back');
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      await chain(client, [sealed('rolled-back', 'lost'), sealed('rolled-back-new', 'lost')]);
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
    expect(await chainOf('rolled-back')).toEqual([{ resource: 'kept', seq: 1, version: 2 }]);
    expect(await headOf('rolled-back')).toEqual(head);
    expect(await headOf('rolled-back-new')).toBeUndefined();
    await chain(db.pool, [sealed('rolled-back', 'next')]);
    expect(await log.verify(tenantIdOf('rolled-back'))).toMatchObject({ ok: true, records: 2 });
  });

  it('fails, retryably, when a purge removed the head it waited for', async () => {
    await chain(db.pool, [sealed('purged', 'before')]);
    const application = 'a2a-test:chain-records-purged';
    const waiter = createPool(db.url, { max: 1, applicationName: application });
    const purge = await db.pool.connect();
    try {
      await purge.query('BEGIN');
      await purge.query(`SET LOCAL audit.allow_purge = 'on'`);
      await purge.query(`SELECT 1 FROM audit.chain_heads WHERE tenant_id = 'purged' FOR UPDATE`);
      const chained = chain(waiter, [sealed('purged', 'after')]).catch((error: unknown) => error);
      await waitingForLock(application);
      await purge.query(`DELETE FROM audit.records WHERE tenant_id = 'purged'`);
      await purge.query(`DELETE FROM audit.chain_heads WHERE tenant_id = 'purged'`);
      await purge.query('COMMIT');
      expect(await chained).toMatchObject({ code: '40001' });
    } finally {
      purge.release();
      await waiter.end();
    }
    expect(await chainOf('purged')).toEqual([]);
    await chain(db.pool, [sealed('purged', 'restarted')]);
    expect(await log.verify(tenantIdOf('purged'))).toMatchObject({ ok: true, records: 1 });
  });

  it('does nothing for empty arrays, and refuses arrays of different lengths or a bad digest', async () => {
    const heads = async (): Promise<unknown> =>
      (await db.pool.query('SELECT tenant_id, seq FROM audit.chain_heads ORDER BY tenant_id')).rows;
    const before = await heads();
    await chain(db.pool, []);
    expect(await heads()).toEqual(before);

    const params = chainRecordsParams([sealed('refused', 'r/1'), sealed('refused', 'r/2')]);
    for (const i of params.keys()) {
      const shorter = params.map((column, j) =>
        j === i ? (column as unknown[]).slice(1) : column,
      );
      await expect(db.pool.query(CHAIN_RECORDS, shorter)).rejects.toMatchObject({ code: '22023' });
    }
    const shortDigest = [...params.slice(0, 12), [Buffer.alloc(32), Buffer.alloc(31)]];
    await expect(db.pool.query(CHAIN_RECORDS, shortDigest)).rejects.toMatchObject({
      code: '22023',
    });
    const lone = chainRecordsParams([sealed('refused', 'r/1')]);
    const loneShortDigest = [...lone.slice(0, 12), [Buffer.alloc(31)]];
    await expect(db.pool.query(CHAIN_RECORDS, loneShortDigest)).rejects.toMatchObject({
      code: '22023',
    });
    expect(await heads()).toEqual(before);
  });
});

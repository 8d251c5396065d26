import { tenantIdOf } from '@lib/ids';
import { createTestDatabase, type TestDatabase } from '@lib/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendToStream, ConcurrencyConflict, readStream, type EventMetadata } from './event-store';
import { withTransaction } from './postgres';

const T1 = tenantIdOf('t1');
const TA = tenantIdOf('tA');
const TB = tenantIdOf('tB');
const meta: EventMetadata = { actor: { kind: 'system', id: 'test' }, binding: 'test' };
const ev = (n: number) => ({ event: { type: 'Happened', data: { n } }, schemaVersion: 1 });

describe('Postgres event store', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase('event_store');
  });

  afterAll(async () => {
    await db.drop();
  });

  it('appends at expected versions and reads the stream back in order', async () => {
    await withTransaction(db.pool, (c) => appendToStream(c, T1, 's:1', 0, [ev(1), ev(2)], meta));
    const appended = await withTransaction(db.pool, (c) =>
      appendToStream(c, T1, 's:1', 2, [ev(3)], meta),
    );
    expect(appended.map((e) => e.streamVersion)).toEqual([3]);
    const stream = await readStream(db.pool, T1, 's:1');
    expect(stream.map((e) => [e.streamVersion, e.event.data])).toEqual([
      [1, { n: 1 }],
      [2, { n: 2 }],
      [3, { n: 3 }],
    ]);
    expect(stream[0]?.metadata).toEqual(meta);
    expect(new Set(stream.map((e) => e.eventId)).size).toBe(3);
  });

  it('refuses a stale expected version and writes nothing', async () => {
    await withTransaction(db.pool, (c) => appendToStream(c, T1, 's:2', 0, [ev(1)], meta));
    await expect(
      withTransaction(db.pool, (c) => appendToStream(c, T1, 's:2', 0, [ev(99)], meta)),
    ).rejects.toBeInstanceOf(ConcurrencyConflict);
    await expect(
      withTransaction(db.pool, (c) => appendToStream(c, T1, 's:2', 5, [ev(99)], meta)),
    ).rejects.toBeInstanceOf(ConcurrencyConflict);
    expect((await readStream(db.pool, T1, 's:2')).length).toBe(1);
  });

  it('keeps versions gap-free under many concurrent writers that retry on conflict', async () => {
    const writers = 24;
    const writeOnce = async (n: number): Promise<number> => {
      for (let tries = 0; ; tries++) {
        try {
          return await withTransaction(db.pool, async (c) => {
            const current = await readStream(c, T1, 's:race');
            await appendToStream(c, T1, 's:race', current.length, [ev(n)], meta);
            return tries;
          });
        } catch (error) {
          if (!(error instanceof ConcurrencyConflict)) {
            throw error;
          }
        }
      }
    };
    const retries = await Promise.all(Array.from({ length: writers }, (_, i) => writeOnce(i)));
    const stream = await readStream(db.pool, T1, 's:race');
    expect(stream.map((e) => e.streamVersion)).toEqual(
      Array.from({ length: writers }, (_, i) => i + 1),
    );
    expect(new Set(stream.map((e) => (e.event.data as { n: number }).n)).size).toBe(writers);
    expect(retries.some((r) => r > 0)).toBe(true);
  });

  it('keeps tenants apart: the same stream id in two tenants is two streams', async () => {
    await withTransaction(db.pool, (c) => appendToStream(c, TA, 's:shared', 0, [ev(1)], meta));
    await withTransaction(db.pool, (c) => appendToStream(c, TB, 's:shared', 0, [ev(2)], meta));
    expect((await readStream(db.pool, TA, 's:shared')).map((e) => e.event.data)).toEqual([
      { n: 1 },
    ]);
    expect((await readStream(db.pool, TB, 's:shared')).map((e) => e.event.data)).toEqual([
      { n: 2 },
    ]);
  });

  it('is append-only: the database refuses UPDATE, DELETE and TRUNCATE', async () => {
    await expect(db.pool.query(`UPDATE events.messages SET data = '{}'`)).rejects.toThrow(
      /append-only/,
    );
    await expect(db.pool.query('DELETE FROM events.messages')).rejects.toThrow(/append-only/);
    await expect(db.pool.query('TRUNCATE events.messages')).rejects.toThrow(/append-only/);
    const count = await db.pool.query<{ n: string }>('SELECT count(*) AS n FROM events.messages');
    expect(Number(count.rows[0]?.n)).toBeGreaterThan(0);
  });

  it('gives every event a global position that grows with commit order within a stream', async () => {
    const stream = await readStream(db.pool, T1, 's:race');
    const positions = stream.map((e) => BigInt(e.globalPosition));
    expect([...positions].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))).toEqual(positions);
  });
});

import { PostgresServer } from '@lib/testing';
import type { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isTransientDatabaseError } from './database-errors';
import { NoticeListener } from './notice-listener';
import { NOTICE_CHANNEL, type Notice } from './notices';
import { createPool, whenDatabaseReachable } from './postgres';

/** Waits until `check` holds, polling; fails with `what` after `timeoutMs`. */
async function eventually(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 10_000,
) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) {
      throw new Error(`not within ${timeoutMs} ms: ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('connections that survive their server (private Postgres server)', () => {
  let server: PostgresServer;
  let pool: Pool;
  const lost: string[] = [];

  beforeAll(async () => {
    server = await PostgresServer.start({ name: 'event-store-connections' });
    pool = createPool(server.url(), {
      max: 4,
      applicationName: 'a2a-test:pool',
      warn: (message) => lost.push(message),
    });
  });

  afterAll(async () => {
    await pool.end();
    await server.destroy();
  });

  it('a checked-out client whose connection is terminated between two queries reports it, and the pool goes on', async () => {
    const client = await pool.connect();
    await client.query('BEGIN');
    expect(await server.terminateBackends('a2a-test:pool')).toBe(1);
    // Before the fix this 'error' had no listener on a checked-out client and ended the process.
    await eventually(() => lost.length > 0, 'the broken connection was reported');
    const failed = await client.query('SELECT 1').catch((error: unknown) => error);
    expect(isTransientDatabaseError(failed)).toBe(true);
    client.release(failed as Error);
    const after = await pool.query<{ ok: number }>('SELECT 1 AS ok');
    expect(after.rows[0]?.ok).toBe(1);
  });

  it('while the server is down queries fail fast and transient; after it is back they work again', async () => {
    await server.stop('fast');
    const failed = await pool.query('SELECT 1').catch((error: unknown) => error);
    // Refused at once, not left to the connect timeout.
    expect(failed).toMatchObject({ code: 'ECONNREFUSED' });
    expect(isTransientDatabaseError(failed)).toBe(true);
    const waited: string[] = [];
    const answer = whenDatabaseReachable(
      () => pool.query<{ ok: number }>('SELECT 1 AS ok'),
      (message) => waited.push(message),
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    await server.startAgain();
    expect((await answer).rows[0]?.ok).toBe(1);
    expect(waited[0]).toMatch(/waiting for Postgres/);
  });

  it('whenDatabaseReachable does not retry a failure that is not transient', async () => {
    let tries = 0;
    const failed = await whenDatabaseReachable(
      () => {
        tries += 1;
        return pool.query('SELECT * FROM no_such_table');
      },
      () => undefined,
    ).catch((error: unknown) => error);
    expect((failed as { code?: string }).code).toBe('42P01');
    expect(tries).toBe(1);
  });

  it('the LISTEN connection comes back after pg_terminate_backend and after a restart, says so, and delivers again', async () => {
    const listener = new NoticeListener(server.url(), { applicationName: 'a2a-test:listen' });
    const received: Notice[] = [];
    let reconnects = 0;
    listener.subscribe((notice) => received.push(notice));
    listener.onReconnected(() => (reconnects += 1));
    await listener.start();
    const notify = async (v: number) =>
      pool.query('SELECT pg_notify($1, $2)', [
        NOTICE_CHANNEL,
        JSON.stringify({ k: 'task', t: 'tenant', id: 'task', v }),
      ]);
    try {
      await notify(1);
      await eventually(() => received.length === 1, 'the first notice arrived');

      expect(await server.terminateBackends('a2a-test:listen')).toBe(1);
      await eventually(() => reconnects === 1, 'reconnected after pg_terminate_backend');
      await notify(2);
      await eventually(() => received.length === 2, 'notices arrive again');

      await server.restart('immediate');
      await eventually(() => reconnects === 2, 'reconnected after a restart');
      await notify(3);
      await eventually(() => received.length === 3, 'notices arrive after the restart');
      expect(received.map((n) => (n.k === 'task' ? n.v : null))).toEqual([1, 2, 3]);
    } finally {
      await listener.stop();
    }
  });

  it('a listener started while the server is down keeps trying and listens once it is up', async () => {
    await server.stop('fast');
    const listener = new NoticeListener(server.url(), { applicationName: 'a2a-test:listen-late' });
    let reconnects = 0;
    listener.onReconnected(() => (reconnects += 1));
    try {
      await listener.start();
      expect(listener.connected).toBe(false);
      await server.startAgain();
      await eventually(() => listener.connected, 'connected once the server is up');
      expect(reconnects).toBe(1);
    } finally {
      await listener.stop();
    }
  });
});

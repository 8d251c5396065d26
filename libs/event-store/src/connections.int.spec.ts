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

  it("a process's listeners share one connection, each hears its own channel, and all come back with it", async () => {
    const notices = new NoticeListener(server.url(), { applicationName: 'a2a-test:shared' });
    const config = new NoticeListener(server.url(), {
      applicationName: 'a2a-test:not-used',
      channel: 'a2a_test_config',
    });
    const more = new NoticeListener(server.url(), { applicationName: 'a2a-test:not-used' });
    const heard: Record<string, number[]> = { notices: [], config: [], more: [] };
    let reconnects = 0;
    for (const [name, listener] of [
      ['notices', notices],
      ['config', config],
      ['more', more],
    ] as const) {
      listener.subscribe((notice) => heard[name]?.push(notice.k === 'task' ? notice.v : -1));
      listener.onReconnected(() => (reconnects += 1));
    }
    const notify = async (channel: string, v: number) =>
      pool.query('SELECT pg_notify($1, $2)', [
        channel,
        JSON.stringify({ k: 'task', t: 'tenant', id: 'task', v }),
      ]);
    const backends = async (): Promise<Record<string, number>> =>
      Object.fromEntries(
        (await server.backends())
          .filter(
            (group) =>
              group.applicationName.startsWith('a2a-test:') &&
              group.applicationName !== 'a2a-test:pool',
          )
          .map((group) => [group.applicationName, group.count]),
      );
    try {
      await Promise.all([notices.start(), config.start(), more.start()]);
      expect(await backends()).toEqual({ 'a2a-test:shared': 1 });
      await notify(NOTICE_CHANNEL, 1);
      await notify('a2a_test_config', 2);
      await eventually(
        () =>
          heard['notices']?.length === 1 &&
          heard['config']?.length === 1 &&
          heard['more']?.length === 1,
        'each listener heard its channel',
      );
      expect(heard).toEqual({ notices: [1], config: [2], more: [1] });

      expect(await server.terminateBackends('a2a-test:shared')).toBe(1);
      await eventually(() => reconnects === 3, 'every listener was told the connection is back');
      await notify('a2a_test_config', 3);
      await eventually(
        () => heard['config']?.length === 2,
        'the other channel is listened to again',
      );

      // One listener leaving keeps the connection for the others; the last one closes it.
      await config.stop();
      await notify('a2a_test_config', 4);
      await notify(NOTICE_CHANNEL, 5);
      await eventually(() => heard['more']?.length === 2, 'the notice after the leave arrived');
      expect(heard).toEqual({ notices: [1, 5], config: [2, 3], more: [1, 5] });
      expect(notices.connected).toBe(true);
      await notices.stop();
      await more.stop();
      await eventually(
        async () => Object.keys(await backends()).length === 0,
        'the last listener closed it',
      );
    } finally {
      await Promise.all([notices.stop(), config.stop(), more.stop()]);
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

import { freePort, processesNaming } from '@lib/testing';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmbeddedPostgres, parsePostmasterLock } from './embedded-postgres';

async function query<Row extends object>(url: string, sql: string): Promise<Row[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows as Row[];
  } finally {
    await client.end();
  }
}

describe('EmbeddedPostgres', () => {
  let root: string;
  let dir: string;
  let port: number;
  const lines: string[] = [];
  const log = (line: string): void => {
    lines.push(line);
  };
  const started: EmbeddedPostgres[] = [];
  const start = async (): Promise<EmbeddedPostgres> => {
    const server = await EmbeddedPostgres.start({ dir, port, log });
    started.push(server);
    return server;
  };

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'a2a-embedded-pg-'));
    // As root the server runs as the postgres account, which must reach the folder.
    await chmod(root, 0o755);
    // Like the default `.data/postgres`: the start makes the parent too, which the server must pass through.
    dir = join(root, '.data', 'postgres');
    port = await freePort();
  });

  afterAll(async () => {
    for (const server of started) {
      await server.stop().catch(() => undefined);
    }
    expect(processesNaming(dir)).toStrictEqual([]);
    await rm(root, { recursive: true, force: true });
  });

  it('initialises a cluster on first start and keeps its data across a restart', async () => {
    const first = await start();
    expect(lines.some((line) => line.startsWith('initialising a new PostgreSQL 17.'))).toBe(true);
    expect(first.dataDir).toBe(join(dir, 'data'));
    await query(first.url('postgres'), 'CREATE TABLE kept (note text)');
    await query(first.url('postgres'), `INSERT INTO kept VALUES ('across restarts')`);
    await first.stop();
    expect(processesNaming(dir)).toStrictEqual([]);

    lines.length = 0;
    const second = await start();
    expect(lines.filter((line) => line.startsWith('initialising'))).toStrictEqual([]);
    expect(await query(second.url('postgres'), 'SELECT note FROM kept')).toStrictEqual([
      { note: 'across restarts' },
    ]);
    const [version] = await query<{ server_version: string }>(
      second.url('postgres'),
      'SHOW server_version',
    );
    expect(version?.server_version).toMatch(/^17\.\d+/);
  });

  it('listens on 127.0.0.1 only, with no Unix socket', async () => {
    const url = started.at(-1)!.url('postgres');
    const settings = await query<{ name: string; setting: string }>(
      url,
      `SELECT name, setting FROM pg_settings
        WHERE name IN ('listen_addresses', 'unix_socket_directories') ORDER BY name`,
    );
    expect(settings).toStrictEqual([
      { name: 'listen_addresses', setting: '127.0.0.1' },
      { name: 'unix_socket_directories', setting: '' },
    ]);
  });

  it('refuses to start on a cluster whose server another process still uses', async () => {
    const running = started.at(-1)!;
    const client = new Client({ connectionString: running.url('postgres') });
    await client.connect();
    try {
      await expect(start()).rejects.toThrow(/is in use by another process \(1 connections\)/);
      expect((await client.query('SELECT 1 AS one')).rows).toStrictEqual([{ one: 1 }]);
    } finally {
      await client.end();
    }
  });

  it('stops the server a killed platform left running, and starts its own', async () => {
    // The previous server is not stopped: as after a SIGKILL of the platform that started it.
    const lock = parsePostmasterLock(await readFile(join(dir, 'data', 'postmaster.pid'), 'utf8'));
    expect(lock).not.toBeNull();
    lines.length = 0;
    const next = await start();
    expect(lines).toContain(
      `stopping the embedded Postgres (pid ${lock?.pid}) that a killed platform left running`,
    );
    expect(await query(next.url('postgres'), 'SELECT note FROM kept')).toHaveLength(1);
    const now = parsePostmasterLock(await readFile(join(dir, 'data', 'postmaster.pid'), 'utf8'));
    expect(now?.pid).not.toBe(lock?.pid);
    expect(processesNaming(dir).includes(lock!.pid)).toBe(false);
  });

  it('stops cleanly: no server process and no lock file remain', async () => {
    await started.at(-1)!.stop();
    expect(processesNaming(dir)).toStrictEqual([]);
    await expect(readFile(join(dir, 'data', 'postmaster.pid'))).rejects.toThrow(/ENOENT/);
  });
});

import { existsSync } from 'node:fs';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresServer } from './postgres-server';

/** A client connection that remembers whether the server ended it. */
interface Connection {
  client: Client;
  /** Resolves with the 'error' event pg emits when the server ends an idle connection. */
  ended: Promise<Error>;
}

describe('PostgresServer', () => {
  let server: PostgresServer;
  const opened: Client[] = [];

  async function connect(applicationName = 'postgres-server-test'): Promise<Connection> {
    const client = new Client({
      connectionString: server.url(),
      application_name: applicationName,
    });
    const ended = new Promise<Error>((resolve) => client.once('error', resolve));
    // Later errors of an ended connection (a second 'error') need a listener too, or they would crash the run.
    client.on('error', () => undefined);
    opened.push(client);
    await client.connect();
    return { client, ended };
  }

  async function expectEnded(connection: Connection): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve('no error event within 10 s'), 10_000);
    });
    const outcome = await Promise.race([connection.ended, timeout]);
    clearTimeout(timer);
    expect(outcome).toBeInstanceOf(Error);
    await expect(connection.client.query('SELECT 1')).rejects.toThrow();
  }

  async function names(): Promise<string[]> {
    const reader = await connect();
    try {
      const result = await reader.client.query<{ name: string }>(
        'SELECT name FROM fault_probe ORDER BY id',
      );
      return result.rows.map((row) => row.name);
    } finally {
      await reader.client.end();
    }
  }

  beforeAll(async () => {
    server = await PostgresServer.start({ name: 'self-test' });
  });

  afterAll(async () => {
    await Promise.all(opened.map((client) => client.end().catch(() => undefined)));
    await server.destroy();
  });

  it('starts a private cluster on a port of its own, not the shared 5432', async () => {
    expect(server.running).toBe(true);
    expect(existsSync(server.dir)).toBe(true);
    expect(new URL(server.url()).port).not.toBe('5432');
    expect(server.url('other_db')).toMatch(/^postgres:\/\/postgres@127\.0\.0\.1:\d+\/other_db$/);
    const writer = await connect();
    await writer.client.query(
      'CREATE TABLE fault_probe (id serial PRIMARY KEY, name text NOT NULL)',
    );
    await writer.client.query(`INSERT INTO fault_probe (name) VALUES ('before-restarts')`);
    await writer.client.end();
    expect(await names()).toEqual(['before-restarts']);
  });

  it('restart fast ends existing connections and keeps committed data', async () => {
    const before = await connect();
    await server.restart('fast');
    await expectEnded(before);
    expect(server.running).toBe(true);
    expect(await names()).toEqual(['before-restarts']);
  });

  it('restart immediate (a crash) ends existing connections and keeps acknowledged commits', async () => {
    const before = await connect();
    await before.client.query(`INSERT INTO fault_probe (name) VALUES ('just-before-crash')`);
    await server.restart('immediate');
    await expectEnded(before);
    expect(await names()).toEqual(['before-restarts', 'just-before-crash']);
  });

  it('stop refuses connections; startAgain serves the same data on the same port', async () => {
    const url = server.url();
    await server.stop();
    expect(server.running).toBe(false);
    const refused = new Client({ connectionString: url });
    refused.on('error', () => undefined);
    await expect(refused.connect()).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    await server.startAgain();
    expect(server.running).toBe(true);
    expect(server.url()).toBe(url);
    expect(await names()).toEqual(['before-restarts', 'just-before-crash']);
  });

  it('terminateBackends ends exactly the connections whose application_name matches', async () => {
    const victims = [await connect('fault-victim-1'), await connect('fault-victim-2')];
    const bystander = await connect('fault-bystander');
    expect(await server.backends()).toEqual(
      expect.arrayContaining([
        { applicationName: 'fault-victim-1', count: 1 },
        { applicationName: 'fault-victim-2', count: 1 },
        { applicationName: 'fault-bystander', count: 1 },
      ]),
    );

    expect(await server.terminateBackends('fault-victim-%')).toBe(2);

    for (const victim of victims) {
      await expectEnded(victim);
    }
    expect((await bystander.client.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([
      { one: 1 },
    ]);
    const left = (await server.backends()).map((group) => group.applicationName);
    expect(left).toContain('fault-bystander');
    expect(left).not.toContain('fault-victim-1');
    expect(left).not.toContain('fault-victim-2');
    expect(await server.terminateBackends('nobody-has-this-name')).toBe(0);
    await bystander.client.end();
  });

  it('destroy stops the cluster and removes its directory, and may be called twice', async () => {
    const url = server.url();
    await server.destroy();
    expect(server.running).toBe(false);
    expect(existsSync(server.dir)).toBe(false);
    const refused = new Client({ connectionString: url });
    refused.on('error', () => undefined);
    await expect(refused.connect()).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    await expect(server.destroy()).resolves.toBeUndefined();
    await expect(server.startAgain()).rejects.toThrow(/destroyed/);
  });
});

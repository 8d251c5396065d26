import { loadConfig, localPostgresSchema, platformSchema, testSchema } from '@lib/config';
import { freePort } from '@lib/testing';
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answers, startLocalServers } from './local-servers';

describe('startLocalServers', () => {
  let deadPort: number;
  const absent = (): Record<string, string> => ({
    KAFKA_BROKERS: `127.0.0.1:${deadPort}`,
    REDIS_URL: `redis://127.0.0.1:${deadPort}`,
  });

  beforeAll(async () => {
    deadPort = await freePort();
  });

  it('uses POSTGRES_URL when it is set, without looking for any other server', async () => {
    const lines: string[] = [];
    const url = `postgres://postgres@127.0.0.1:${deadPort}/a2a`;
    const servers = await startLocalServers(
      loadConfig(platformSchema, absent()),
      loadConfig(localPostgresSchema, { POSTGRES_URL: url }),
      '/nowhere',
      (line) => lines.push(line),
    );
    expect(servers.postgresUrl).toBe(url);
    expect(servers.embedded).toBeNull();
    expect(lines[0]).toBe(`Postgres: ${url} (POSTGRES_URL)`);
  });

  it('uses the server at PGHOST/PGPORT when one answers there (as on these machines)', async () => {
    const local = new URL(loadConfig(testSchema).TEST_POSTGRES_URL);
    const lines: string[] = [];
    const servers = await startLocalServers(
      loadConfig(platformSchema, absent()),
      loadConfig(localPostgresSchema, { PGHOST: local.hostname, PGPORT: local.port || '5432' }),
      '/nowhere',
      (line) => lines.push(line),
    );
    expect(servers.embedded).toBeNull();
    expect(servers.postgresUrl).toBe(
      `postgres://postgres@${local.hostname}:${local.port || '5432'}/a2a`,
    );
    expect(lines[0]).toMatch(/^Postgres: .*: POSTGRES_URL is unset and a server answers at /);
    expect(servers.plan).toMatchObject({
      relay: false,
      pushDispatcher: false,
      features: { pushNotifications: false, requestRateQuotas: false },
    });
    expect(lines.slice(1)).toStrictEqual([
      `Kafka not reachable at 127.0.0.1:${deadPort}: the Kafka feed and push notifications are off`,
      `Redis not reachable at redis://127.0.0.1:${deadPort}: push notifications and per-tenant ` +
        'request-rate quotas are off',
    ]);
  });
});

describe('answers', () => {
  let server: Server;
  let port: number;

  beforeAll(async () => {
    server = createServer((socket) => socket.end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    port = typeof address === 'object' && address ? address.port : 0;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('is true where a server accepts connections, false where none listens', async () => {
    expect(await answers({ host: '127.0.0.1', port })).toBe(true);
    expect(await answers({ host: '127.0.0.1', port: await freePort() })).toBe(false);
    expect(await answers({ path: '/nonexistent/.s.PGSQL.5432' })).toBe(false);
  });
});

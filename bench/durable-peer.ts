/**
 * The durable peer (`../shared/durable-peer`, read its README) that `npm run bench` runs as its third side: a
 * DBOS Transact server that answers the bench's blocking JSON-RPC `SendMessage` with one workflow per message
 * (workflow id = messageId, one checkpointed step that makes the echo artifact), durable in a database of its
 * own on the platform's Postgres. Copied to the OS temp dir and installed there like the reference server;
 * started with `PORT=… DBOS_SYSTEM_DATABASE_URL=… node server.mjs`. It answers nothing else: no streaming,
 * no HTTP+JSON or gRPC binding.
 */
import { loadConfig, testSchema } from '@lib/config';
import { freePort, repoRoot, reserveTestDatabase, type TestDatabase } from '@lib/testing';
import { join } from 'node:path';
import { Pool } from 'pg';
import type { A2aEndpoints } from './support/a2a-load';
import { ServerProcess } from './support/server-process';

/** Where the durable peer's sources are shared, next to this repository. */
export const DEFAULT_DURABLE_PEER_SOURCE = join(repoRoot(), '..', 'shared', 'durable-peer');

const START_TIMEOUT_MS = 60_000;

/** An empty database of the peer's own on the test server (DBOS creates its tables when it launches). */
export async function createPeerDatabase(): Promise<Pick<TestDatabase, 'url' | 'drop'>> {
  const reserved = reserveTestDatabase('bench_peer');
  const name = new URL(reserved.url).pathname.slice(1);
  const admin = new Pool({ connectionString: loadConfig(testSchema).TEST_POSTGRES_URL, max: 1 });
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  return reserved;
}

/** Starts the installed durable peer in `dir` on `databaseUrl` and a free port; resolves once it listens. */
export async function startDurablePeer(
  dir: string,
  databaseUrl: string,
  nodeArgs: readonly string[] = [],
): Promise<{ process: ServerProcess; endpoints: A2aEndpoints }> {
  const port = await freePort();
  const server = await ServerProcess.start(
    'the durable peer',
    dir,
    { PORT: String(port), DBOS_SYSTEM_DATABASE_URL: databaseUrl },
    nodeArgs,
    (output) => / on 127\.0\.0\.1:\d+/.test(output),
    START_TIMEOUT_MS,
  );
  return {
    process: server,
    endpoints: {
      jsonrpcUrl: `http://127.0.0.1:${port}/a2a/jsonrpc`,
      restBaseUrl: '',
      grpcTarget: '',
      grpcTenant: '',
    },
  };
}

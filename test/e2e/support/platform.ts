import { taskStreamId } from '@lib/task-domain';
import {
  createTestDatabase,
  freePort,
  PlatformProcess,
  type PlatformEnv,
  type TestDatabase,
} from '@lib/testing';
import type { Pool } from 'pg';

export interface Standalone {
  db: TestDatabase;
  process: PlatformProcess;
  baseUrl: string;
  workerTarget: string;
  /** `POST` URL of a hosted agent's JSON-RPC endpoint. */
  endpoint(tenant: string, agent: string): string;
  /** Stops the platform (and its workers) and drops the database; safe to call after a failed start. */
  close(): Promise<void>;
}

const EXAMPLE_AGENTS = ['echo', 'interview', 'countdown'] as const;

/**
 * `startStandalone` of `@lib/testing`, ready when each example worker is connected, in whatever order they
 * connect. (The library's own readiness pattern only accepts some connection orders; see the report.)
 */
export async function startStandaloneReady(
  env: PlatformEnv,
): Promise<{ process: PlatformProcess; baseUrl: string; workerTarget: string }> {
  const [http, worker, command] = await Promise.all([freePort(), freePort(), freePort()]);
  const proc = new PlatformProcess('standalone', 'apps/standalone/src/main.js', [], {
    INGRESS_PORT: String(http),
    WORKER_GRPC_PORT: String(worker),
    TASK_SERVICE_GRPC_PORT: String(command),
    TASK_SERVICE_URLS: `127.0.0.1:${command}`,
    ...env,
  }).start();
  try {
    await proc.waitForOutput(/A2A platform ready/);
    for (const agent of EXAMPLE_AGENTS) {
      await proc.waitForOutput(new RegExp(`serves ${agent}\\b`));
    }
  } catch (error) {
    await proc.stop();
    throw error;
  }
  return {
    process: proc,
    baseUrl: `http://127.0.0.1:${http}`,
    workerTarget: `127.0.0.1:${worker}`,
  };
}

/** A fresh database and the whole platform on it (`npm start`), with the demo tenant and its workers. */
export async function bootStandalone(
  prefix: string,
  env: Record<string, string> = {},
): Promise<Standalone> {
  const db = await createTestDatabase(prefix);
  try {
    const started = await startStandaloneReady({ POSTGRES_URL: db.url, ...env });
    return {
      db,
      process: started.process,
      baseUrl: started.baseUrl,
      workerTarget: started.workerTarget,
      endpoint: (tenant, agent) => `${started.baseUrl}/agents/${tenant}/${agent}/jsonrpc`,
      async close() {
        await started.process.stop();
        await db.drop();
      },
    };
  } catch (error) {
    await db.drop();
    throw error;
  }
}

/** Row counts of the tables every accepted change writes to. */
export async function writeCounts(
  pool: Pool,
): Promise<{ events: number; taskViews: number; messageIds: number; work: number }> {
  const result = await pool.query<{ events: string; views: string; ids: string; work: string }>(
    `SELECT (SELECT count(*) FROM events.messages) AS events,
            (SELECT count(*) FROM read.task_view) AS views,
            (SELECT count(*) FROM ops.message_ids) AS ids,
            (SELECT count(*) FROM ops.task_work) AS work`,
  );
  const row = result.rows[0]!;
  return {
    events: Number(row.events),
    taskViews: Number(row.views),
    messageIds: Number(row.ids),
    work: Number(row.work),
  };
}

/** Streams whose versions are not exactly 1..n (a gap, a duplicate or a missing first event). */
export async function streamsWithGaps(pool: Pool): Promise<string[]> {
  const result = await pool.query<{ stream_id: string }>(
    `SELECT stream_id FROM events.messages GROUP BY tenant_id, stream_id
      HAVING count(*) <> max(stream_version) OR min(stream_version) <> 1
          OR count(DISTINCT stream_version) <> count(*)`,
  );
  return result.rows.map((r) => r.stream_id);
}

export interface StoredEventRow {
  stream_version: number;
  event_type: string;
  data: Record<string, unknown>;
  metadata: { actor: { kind: string; id: string }; binding: string };
}

/** The events of one task stream, in order. */
export async function taskEvents(
  pool: Pool,
  tenantId: string,
  taskId: string,
): Promise<StoredEventRow[]> {
  const result = await pool.query<StoredEventRow>(
    `SELECT stream_version, event_type, data, metadata FROM events.messages
      WHERE tenant_id = $1 AND stream_id = $2 ORDER BY stream_version`,
    [tenantId, taskStreamId(tenantId, taskId)],
  );
  return result.rows;
}

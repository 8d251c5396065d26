import { tenantIdOf } from '@lib/ids';
import { taskStreamId } from '@lib/task-domain';
import { seedTenant } from '@lib/tenancy';
import {
  createTestDatabase,
  startStandalone,
  type PlatformProcess,
  type TestDatabase,
} from '@lib/testing';
import { AGENT_PROFILES } from '@lib/worker-sdk';
import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { jsonRpcUrl } from './json-rpc';

export interface Standalone {
  db: TestDatabase;
  process: PlatformProcess;
  baseUrl: string;
  workerTarget: string;
  /** `host:port` of the A2A gRPC binding. */
  grpcTarget: string;
  /** `POST` URL of a hosted agent's JSON-RPC endpoint. */
  endpoint(tenant: string, agent: string): string;
  /** Stops the platform (and its workers) and drops the database; safe to call after a failed start. */
  close(): Promise<void>;
}

/** A fresh database and the whole platform on it (`npm start`), with the demo tenant and its workers. */
export async function bootStandalone(
  prefix: string,
  env: Record<string, string> = {},
): Promise<Standalone> {
  const db = await createTestDatabase(prefix);
  try {
    const started = await startStandalone({ POSTGRES_URL: db.url, ...env });
    return {
      db,
      process: started.process,
      baseUrl: started.baseUrl,
      workerTarget: started.workerTarget,
      grpcTarget: started.grpcTarget,
      endpoint: (tenant, agent) => jsonRpcUrl(started.baseUrl, tenant, agent),
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

/**
 * A second tenant, `acme` (principal `acme-user` with `apiKey`), with an echo agent of its own; a worker
 * joins it only with `workerSecret`. For the cross-tenant cases.
 */
export async function seedAcme(
  pool: Pool,
  apiKey: string,
  workerSecret = `acme-${randomUUID()}`,
): Promise<void> {
  await seedTenant(pool, {
    tenantId: 'acme',
    displayName: 'Acme Corp',
    apiKeys: [{ keyId: 'acme-default', principalId: 'acme-user', secret: apiKey }],
    agents: [{ agentId: 'echo', profile: AGENT_PROFILES.echo, workerSecret }],
  });
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
    [tenantId, taskStreamId(tenantIdOf(tenantId), taskId)],
  );
  return result.rows;
}

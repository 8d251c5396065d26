import { NOTICE_CHANNEL } from '@lib/event-store';
import { TASK_EVENT_SCHEMA_VERSION } from '@lib/task-domain';
import { agentIdOf, principalIdOf, taskIdOf, tenantIdOf } from '@lib/tenancy';
import { createTestDatabase, type TestDatabase } from '@lib/testing';
import { createHash, randomUUID } from 'node:crypto';
import type { PoolClient } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskBatch } from '../src/write/task-batch';

/**
 * The argument of events.append_task_batch: a `TaskBatch` with readable keys, and the batch of the release
 * before them (one-letter keys), which that release's replicas send during a rollout (ADR 0007, ADR 0014).
 */

const TENANT = tenantIdOf('batch-keys');
const AGENT = agentIdOf('echo');
const OWNER = principalIdOf('batch-keys-user');
/** A stream at version 2 whose task each batch ends. */
const ENDED_TASK = 'ended';
const ENDED_STREAM = `task:${TENANT}:${ENDED_TASK}`;

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase('batch_keys');
  await db.pool.query(
    'INSERT INTO events.streams (tenant_id, stream_id, version) VALUES ($1, $2, 2)',
    [TENANT, ENDED_STREAM],
  );
  await db.pool.query(
    `INSERT INTO ops.task_work (tenant_id, task_id, agent_id, status, queued_at, attempt)
     VALUES ($1, $2, $3, 'queued', now(), 1)`,
    [TENANT, ENDED_TASK, AGENT],
  );
});

afterAll(async () => {
  await db?.drop();
});

/**
 * A batch with a row of every kind: a SendMessage accepted and leased at once (claim, two events, view row,
 * work row, notice, audit record) and a task that ends (its work row goes).
 */
function aBatch(): TaskBatch {
  const taskId = taskIdOf(randomUUID());
  const contextId = randomUUID();
  const stream = `task:${TENANT}:${taskId}`;
  const at = new Date().toISOString();
  const message = {
    role: 'ROLE_USER' as const,
    parts: [{ text: 'hello' }],
    messageId: randomUUID(),
    taskId,
    contextId,
  };
  const lease = { leaseEpoch: 1, workerId: randomUUID(), expiresAt: at, attempt: 1 };
  const metadata = { actor: { kind: 'caller' as const, id: OWNER } };
  return {
    channel: NOTICE_CHANNEL,
    streams: [
      { stream_index: 0, tenant_id: TENANT, stream_id: stream, expected_version: 0, version: 2 },
      {
        stream_index: 1,
        tenant_id: TENANT,
        stream_id: ENDED_STREAM,
        expected_version: 2,
        version: 3,
      },
    ],
    claims: [
      {
        stream_index: 0,
        tenant_id: TENANT,
        agent_id: AGENT,
        principal_id: OWNER,
        message_id: message.messageId,
        task_id: taskId,
        message_digest: createHash('sha256').update(message.messageId).digest('hex'),
      },
    ],
    events: [
      {
        stream_index: 0,
        tenant_id: TENANT,
        stream_id: stream,
        event_id: uuidv7(),
        stream_version: 1,
        event_type: 'TaskSubmitted',
        schema_version: TASK_EVENT_SCHEMA_VERSION,
        data: { taskId, contextId, agentId: AGENT, ownerId: OWNER, message, submittedAt: at },
        metadata,
      },
      {
        stream_index: 0,
        tenant_id: TENANT,
        stream_id: stream,
        event_id: uuidv7(),
        stream_version: 2,
        event_type: 'TaskLeaseGranted',
        schema_version: TASK_EVENT_SCHEMA_VERSION,
        data: lease,
        metadata,
      },
      {
        stream_index: 1,
        tenant_id: TENANT,
        stream_id: ENDED_STREAM,
        event_id: uuidv7(),
        stream_version: 3,
        event_type: 'TaskStatusUpdated',
        schema_version: TASK_EVENT_SCHEMA_VERSION,
        data: { status: { state: 'TASK_STATE_CANCELED', timestamp: at } },
        metadata,
      },
    ],
    views: [
      {
        stream_index: 0,
        tenant_id: TENANT,
        task_id: taskId,
        agent_id: AGENT,
        owner_id: OWNER,
        context_id: contextId,
        state: 'TASK_STATE_SUBMITTED',
        status_timestamp: at,
        version: 2,
        task: {
          id: taskId,
          contextId,
          status: { state: 'TASK_STATE_SUBMITTED', timestamp: at },
          history: [message],
        },
      },
    ],
    work: [
      {
        stream_index: 0,
        tenant_id: TENANT,
        task_id: taskId,
        agent_id: AGENT,
        status: 'leased',
        attempt: 1,
        lease_epoch: lease.leaseEpoch,
        worker_id: lease.workerId,
        lease_expires_at: lease.expiresAt,
        cancel_deadline: null,
      },
      {
        stream_index: 1,
        tenant_id: TENANT,
        task_id: ENDED_TASK,
        agent_id: AGENT,
        status: 'idle',
        attempt: 1,
        lease_epoch: null,
        worker_id: null,
        lease_expires_at: null,
        cancel_deadline: null,
      },
    ],
    notices: [{ stream_index: 0, payload: JSON.stringify({ k: 'task', t: TENANT, id: taskId }) }],
    audit: [
      {
        stream_index: 0,
        tenant_id: TENANT,
        record_id: uuidv7(),
        occurred_at: at,
        principal_id: OWNER,
        credential_id: 'key-1',
        source_address: '127.0.0.1',
        operation: 'a2a.SendMessage',
        binding: 'JSONRPC',
        resource: `task/${taskId}`,
        outcome: 'ok',
        reason: null,
        trace_id: null,
        digest: createHash('sha256').update(taskId).digest('hex'),
      },
    ],
  };
}

/** `batch` as a replica of the release before readable keys built it. */
function withShortKeys(batch: TaskBatch): unknown {
  return {
    channel: batch.channel,
    streams: batch.streams.map((s) => ({
      i: s.stream_index,
      t: s.tenant_id,
      s: s.stream_id,
      e: s.expected_version,
      n: s.version,
    })),
    claims: batch.claims.map((c) => ({
      i: c.stream_index,
      t: c.tenant_id,
      a: c.agent_id,
      p: c.principal_id,
      m: c.message_id,
      k: c.task_id,
      d: c.message_digest,
    })),
    events: batch.events.map((e) => ({
      i: e.stream_index,
      t: e.tenant_id,
      s: e.stream_id,
      id: e.event_id,
      v: e.stream_version,
      y: e.event_type,
      sv: e.schema_version,
      d: e.data,
      m: e.metadata,
    })),
    views: batch.views.map(({ stream_index, tenant_id, ...row }) => ({
      i: stream_index,
      t: tenant_id,
      ...row,
    })),
    work: batch.work.map(({ stream_index, tenant_id, ...row }) => ({
      i: stream_index,
      t: tenant_id,
      ...row,
    })),
    notices: batch.notices.map((n) => ({ i: n.stream_index, n: n.payload })),
    audit: batch.audit.map((a) => ({
      i: a.stream_index,
      t: a.tenant_id,
      id: a.record_id,
      at: a.occurred_at,
      p: a.principal_id,
      c: a.credential_id,
      s: a.source_address,
      o: a.operation,
      b: a.binding,
      r: a.resource,
      out: a.outcome,
      re: a.reason,
      tr: a.trace_id,
      d: a.digest,
    })),
  };
}

/** What a batch wrote: its outcomes and the tenant's rows of every table it writes (but generated columns). */
async function appendAndRead(
  client: PoolClient,
  batch: unknown,
): Promise<Record<string, unknown[]>> {
  const outcomes = await client.query(
    'SELECT stream_index, outcome FROM events.append_task_batch($1::jsonb)',
    [JSON.stringify(batch)],
  );
  const rows = async (sql: string): Promise<unknown[]> =>
    (await client.query<Record<string, unknown>>(sql, [TENANT])).rows;
  return {
    outcomes: outcomes.rows,
    streams: await rows(
      'SELECT stream_id, version FROM events.streams WHERE tenant_id = $1 ORDER BY version',
    ),
    events: await rows(
      `SELECT event_id, stream_id, stream_version, event_type, schema_version, data, metadata
         FROM events.messages WHERE tenant_id = $1 ORDER BY stream_id, stream_version`,
    ),
    claims: await rows(
      `SELECT agent_id, principal_id, message_id, task_id, message_digest FROM ops.message_ids
        WHERE tenant_id = $1`,
    ),
    views: await rows(
      `SELECT task_id, agent_id, owner_id, context_id, state, status_timestamp, version, task
         FROM read.task_view WHERE tenant_id = $1`,
    ),
    work: await rows(
      `SELECT task_id, agent_id, status, attempt, lease_epoch, worker_id, lease_expires_at, cancel_deadline
         FROM ops.task_work WHERE tenant_id = $1 ORDER BY task_id`,
    ),
    audit: await rows(
      `SELECT seq, record_id, occurred_at, principal_id, credential_id, source_address, operation, binding,
              resource, outcome, reason, trace_id, prev_hash, hash
         FROM audit.records WHERE tenant_id = $1`,
    ),
  };
}

/** `fn` on a connection of its own, in a transaction that is rolled back. */
async function rolledBack<T>(fn: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await db.pool.connect();
  try {
    await client.query('BEGIN');
    return await fn(client);
  } finally {
    await client.query('ROLLBACK');
    client.release();
  }
}

describe('events.append_task_batch', () => {
  it('writes each row of a batch with readable keys where its keys say', async () => {
    const batch = aBatch();
    const written = await rolledBack((client) => appendAndRead(client, batch));
    const [accepted, ended] = batch.streams;
    expect(written.outcomes).toEqual([]);
    expect(written.streams).toEqual([
      { stream_id: accepted?.stream_id, version: 2 },
      { stream_id: ended?.stream_id, version: 3 },
    ]);
    expect(written.events?.map((row) => (row as { event_id: string }).event_id).sort()).toEqual(
      batch.events.map((event) => event.event_id).sort(),
    );
    expect(written.claims).toEqual([
      expect.objectContaining({ task_id: batch.claims[0]?.task_id }),
    ]);
    expect(written.views).toEqual([expect.objectContaining({ task_id: batch.views[0]?.task_id })]);
    // The ended task's work row went; the leased one's is there.
    expect(written.work).toEqual([
      expect.objectContaining({
        task_id: batch.work[0]?.task_id,
        status: 'leased',
        lease_epoch: '1',
      }),
    ]);
    expect(written.audit).toEqual([
      expect.objectContaining({ seq: '1', record_id: batch.audit[0]?.record_id }),
    ]);
  });

  it("writes the previous release's batch, with one-letter keys, as the same batch with readable keys (a rollout)", async () => {
    const batch = aBatch();
    const current = await rolledBack((client) => appendAndRead(client, batch));
    const previous = await rolledBack((client) => appendAndRead(client, withShortKeys(batch)));
    expect(previous).toEqual(current);
  });

  it('reads every key of the previous release, notices included', async () => {
    const batch = aBatch();
    const result = await db.pool.query<{ batch: unknown }>(
      'SELECT events.task_batch_from_short_keys($1::jsonb) AS batch',
      [JSON.stringify(withShortKeys(batch))],
    );
    expect(result.rows[0]?.batch).toEqual(JSON.parse(JSON.stringify(batch)));
  });
});

/**
 * The work tables' one reader on a real Postgres: what operators are shown of the queue (a task's work, the
 * leases each session holds) and of the worker sessions, always within one tenant.
 */
import { agentIdOf, taskIdOf, tenantIdOf, type AgentRef } from '@lib/ids';
import { createTestDatabase, type TestDatabase } from '@lib/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkQueue } from './work-queue';
import { WorkerSessionStore, type LiveWorkerSession } from './worker-sessions';

let db: TestDatabase;
let queue: WorkQueue;
let sessions: WorkerSessionStore;

const ACME = tenantIdOf('acme');
const GLOBEX = tenantIdOf('globex');

beforeAll(async () => {
  db = await createTestDatabase('work_queue');
  queue = new WorkQueue(db.pool);
  sessions = new WorkerSessionStore(db.pool);
  // Work rows as the writer's batch leaves them: one queued task, three leases of two sessions, and a lease
  // of another tenant's session.
  await db.pool.query(
    `INSERT INTO ops.task_work (tenant_id, task_id, agent_id, status, queued_at, attempt, lease_epoch,
                                worker_id, lease_expires_at, cancel_deadline)
     VALUES ('acme', 'queued-1', 'echo', 'queued', '2026-12-01T10:00:00Z', 0, NULL, NULL, NULL, NULL),
            ('acme', 'leased-1', 'echo', 'leased', '2026-12-01T10:00:01Z', 1, 3, 'w-1',
             '2026-12-01T10:05:00Z', '2026-12-01T10:06:00Z'),
            ('acme', 'leased-2', 'echo', 'leased', '2026-12-01T10:00:02Z', 1, 1, 'w-1',
             '2026-12-01T10:04:00Z', NULL),
            ('acme', 'leased-3', 'summarize', 'leased', '2026-12-01T10:00:03Z', 2, 7, 'w-2',
             '2026-12-01T10:07:00Z', NULL),
            ('globex', 'leased-1', 'echo', 'leased', '2026-12-01T10:00:04Z', 1, 9, 'w-9',
             '2026-12-01T10:08:00Z', NULL)`,
  );
});

afterAll(async () => {
  await db?.drop();
});

describe('WorkQueue, as the idle poll reads it', () => {
  const echo: AgentRef = { tenantId: ACME, agentId: agentIdOf('echo') };
  const summarize: AgentRef = { tenantId: ACME, agentId: agentIdOf('summarize') };
  const globexEcho: AgentRef = { tenantId: GLOBEX, agentId: agentIdOf('echo') };

  it('names, of the agents asked about, those with queued work, in one statement', async () => {
    expect((await queue.scan([summarize, echo, globexEcho])).queued).toEqual([echo]);
    expect((await queue.scan([summarize, globexEcho])).queued).toEqual([]);
    expect((await queue.scan([])).queued).toEqual([]);
  });

  it('says in the same statement whether a lease is overdue and whether a cancel deadline passed', async () => {
    // The fixture's leases and cancel deadline lie in the past.
    await expect(queue.scan([])).resolves.toEqual({
      queued: [],
      overdue: { leases: true, cancels: true },
    });
    const fresh = await createTestDatabase('work_queue_fresh');
    try {
      await fresh.pool.query(
        `INSERT INTO ops.task_work (tenant_id, task_id, agent_id, status, queued_at, attempt, lease_epoch,
                                    worker_id, lease_expires_at, cancel_deadline)
         VALUES ('acme', 'queued-1', 'echo', 'queued', now(), 0, NULL, NULL, NULL, NULL),
                ('acme', 'leased-1', 'echo', 'leased', now(), 1, 1, 'w-1', now() + interval '1 hour',
                 now() + interval '1 hour')`,
      );
      await expect(new WorkQueue(fresh.pool).scan([echo, summarize])).resolves.toEqual({
        queued: [echo],
        overdue: { leases: false, cancels: false },
      });
    } finally {
      await fresh.drop();
    }
  });
});

describe('WorkQueue, as its metrics read it', () => {
  it('counts queued and leased work and how long the oldest queued task has waited', async () => {
    const { queued, leased, oldestQueuedSeconds } = await queue.depth();
    expect({ queued, leased }).toEqual({ queued: 1, leased: 4 });
    // queued-1 has waited since the fixture's 2026-12-01T10:00:00Z.
    const since = (Date.now() - Date.parse('2026-12-01T10:00:00Z')) / 1_000;
    expect(oldestQueuedSeconds).toBeGreaterThan(since - 60);
    expect(oldestQueuedSeconds).toBeLessThan(since + 60);
    const empty = await createTestDatabase('work_queue_empty');
    try {
      await expect(new WorkQueue(empty.pool).depth()).resolves.toEqual({
        queued: 0,
        leased: 0,
        oldestQueuedSeconds: 0,
      });
    } finally {
      await empty.drop();
    }
  });
});

describe('WorkQueue, as operators read it', () => {
  it("gives a queued task's work, and a leased task's lease and cancel deadline", async () => {
    await expect(queue.workOf({ tenantId: ACME, taskId: taskIdOf('queued-1') })).resolves.toEqual({
      status: 'queued',
      attempt: 0,
      queuedAt: '2026-12-01T10:00:00.000Z',
      leaseEpoch: null,
      workerId: null,
      leaseExpiresAt: null,
      cancelDeadline: null,
    });
    await expect(queue.workOf({ tenantId: ACME, taskId: taskIdOf('leased-1') })).resolves.toEqual({
      status: 'leased',
      attempt: 1,
      queuedAt: '2026-12-01T10:00:01.000Z',
      leaseEpoch: 3,
      workerId: 'w-1',
      leaseExpiresAt: '2026-12-01T10:05:00.000Z',
      cancelDeadline: '2026-12-01T10:06:00.000Z',
    });
  });

  it('has no work for a task that waits for nothing, or that is another tenant’s', async () => {
    await expect(queue.workOf({ tenantId: ACME, taskId: taskIdOf('done') })).resolves.toBeNull();
    await expect(
      queue.workOf({ tenantId: GLOBEX, taskId: taskIdOf('queued-1') }),
    ).resolves.toBeNull();
  });

  it("groups the tenant's leases by session, soonest to expire first, and filters by agent", async () => {
    const all = await queue.leasesBySession(ACME);
    expect(Object.fromEntries(all)).toEqual({
      'w-1': [
        { taskId: 'leased-2', leaseEpoch: 1, expiresAt: '2026-12-01T10:04:00.000Z' },
        { taskId: 'leased-1', leaseEpoch: 3, expiresAt: '2026-12-01T10:05:00.000Z' },
      ],
      'w-2': [{ taskId: 'leased-3', leaseEpoch: 7, expiresAt: '2026-12-01T10:07:00.000Z' }],
    });
    const summarize = await queue.leasesBySession(ACME, 'summarize');
    expect([...summarize.keys()]).toEqual(['w-2']);
    const globex = await queue.leasesBySession(GLOBEX);
    expect([...globex.keys()]).toEqual(['w-9']);
  });
});

describe('WorkerSessionStore', () => {
  const echo: AgentRef = { tenantId: ACME, agentId: agentIdOf('echo') };
  const session = (workerId: string, agent: AgentRef, leases: number): LiveWorkerSession => ({
    workerId,
    agent,
    identity: `${workerId}@host`,
    capacity: 4,
    inflight: new Map(Array.from({ length: leases }, (_, i) => [`t-${i}`, 1])),
    connectedAt: new Date('2026-12-01T09:00:00Z'),
    lastHeartbeatAt: null,
  });

  it('lists what each replica last wrote of its sessions, per tenant and agent', async () => {
    await sessions.replace(
      'replica-a',
      [
        session('w-1', echo, 2),
        session('w-2', { tenantId: ACME, agentId: agentIdOf('summarize') }, 1),
      ],
      60_000,
      60_000,
    );
    await sessions.replace(
      'replica-b',
      [session('w-9', { tenantId: GLOBEX, agentId: agentIdOf('echo') }, 0)],
      60_000,
      60_000,
    );

    const acme = await sessions.list(ACME);
    expect(acme.map((s) => [s.sessionId, s.agentId, s.replicaId, s.inFlight, s.stale])).toEqual([
      ['w-1', 'echo', 'replica-a', 2, false],
      ['w-2', 'summarize', 'replica-a', 1, false],
    ]);
    expect(acme[0]).toMatchObject({
      tenantId: ACME,
      identity: 'w-1@host',
      capacity: 4,
      connectedAt: '2026-12-01T09:00:00.000Z',
      lastHeartbeatAt: null,
    });
    expect((await sessions.list(ACME, 'summarize')).map((s) => s.sessionId)).toEqual(['w-2']);
    expect((await sessions.list(GLOBEX)).map((s) => s.sessionId)).toEqual(['w-9']);
  });

  it("replaces a replica's rows: a closed session is gone, the other replica's stay", async () => {
    await sessions.replace('replica-a', [session('w-1', echo, 0)], 60_000, 60_000);
    expect((await sessions.list(ACME)).map((s) => [s.sessionId, s.inFlight])).toEqual([['w-1', 0]]);
    expect((await sessions.list(GLOBEX)).map((s) => s.sessionId)).toEqual(['w-9']);
  });
});

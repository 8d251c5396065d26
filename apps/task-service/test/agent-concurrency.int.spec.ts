import type { SendMessageResponse, Task } from '@lib/a2a-protocol';
import { agentIdOf, AgentStore, tenantIdOf } from '@lib/tenancy';
import { createTestDatabase, RawWorker, type TestDatabase } from '@lib/testing';
import type { INestApplicationContext } from '@nestjs/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CommandClient,
  eventually,
  seedTestTenant,
  startReplica,
  userMessage,
  workerSecret,
  type Caller,
} from './task-service.harness';

const alice: Caller = { tenantId: 'acme', agentId: 'capped', principalId: 'alice' };
const agent = { tenantId: tenantIdOf('acme'), agentId: agentIdOf('capped') };
/** Room on each worker: far more than the cap. */
const WORKER_CAPACITY = 10;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * An agent's worker policy caps the leases of its tasks (`maxConcurrency`, ADR 0011) across all task-service
 * replicas. Two replicas, a worker on each with room for many tasks. The replicas do not poll for queued work
 * here (SWEEP_INTERVAL_MS of a minute): every lease is granted on a notice or a lease ending, so a slot that is
 * not handed on at once shows up as a test that hangs.
 */
describe('the lease cap of an agent (maxConcurrency) across replicas', () => {
  let db: TestDatabase;
  const apps: INestApplicationContext[] = [];
  const clients: CommandClient[] = [];
  const workers: RawWorker[] = [];
  /** Leases the workers hold: task id → the worker and its lease epoch. */
  const held = new Map<string, { worker: RawWorker; epoch: number }>();
  let mostHeld = 0;
  let mostLeased = 0;
  let stopped = false;
  const loops: Promise<void>[] = [];
  const workerTargets: string[] = [];

  /** The leases of the agent as committed in `ops.task_work`. */
  const leasedNow = async (): Promise<number> => {
    const result = await db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ops.task_work
        WHERE tenant_id = 'acme' AND agent_id = 'capped' AND status = 'leased'`,
    );
    return result.rows[0]?.n ?? 0;
  };

  /** Sets the cap through the agent store, as the admin API does (`PUT …/agents/{a}`). */
  const setCap = async (maxConcurrency: number | null): Promise<void> => {
    const store = new AgentStore(db.pool);
    const { card, policy } = await store.get(agent);
    await store.put(agent.tenantId, agent.agentId, {
      card,
      policy: { ...policy, maxConcurrency },
    });
  };

  /** Takes every assignment the worker gets, as a worker with room would. */
  const serve = async (worker: RawWorker): Promise<void> => {
    while (!stopped) {
      const job = await worker.nextAssignment(200).catch(() => null);
      if (job) {
        held.set(job.taskId, { worker, epoch: job.leaseEpoch });
        mostHeld = Math.max(mostHeld, held.size);
      }
    }
  };

  /** Samples the committed leases of the agent while the test runs. */
  const sample = async (): Promise<void> => {
    while (!stopped) {
      mostLeased = Math.max(mostLeased, await leasedNow());
      await sleep(5);
    }
  };

  const resetPeaks = (): void => {
    mostHeld = held.size;
    mostLeased = 0;
  };

  /** Sends `count` messages, alternately to each replica; returns the task ids. */
  const send = async (count: number): Promise<string[]> => {
    const sent = await Promise.all(
      Array.from({ length: count }, (_, i) =>
        (clients[i % clients.length] as CommandClient).call<SendMessageResponse>(
          'sendMessage',
          alice,
          { message: userMessage(`job ${i}`), configuration: { returnImmediately: true } },
        ),
      ),
    );
    return sent.map((response) => ('task' in response ? response.task.id : ''));
  };

  /** The worker holding the task completes it (`via`: through another replica than its session's). */
  const complete = async (taskId: string, via?: RawWorker): Promise<void> => {
    const lease = held.get(taskId);
    if (!lease) {
      throw new Error(`no lease held on ${taskId}`);
    }
    held.delete(taskId);
    await (via ?? lease.worker).publishStatus(taskId, lease.epoch, {
      state: 'TASK_STATE_COMPLETED',
    });
  };

  /** How many leases the workers hold once they hold `count`, or after ten seconds. */
  const heldReaches = (count: number): Promise<number> =>
    eventually(
      () => Promise.resolve(held.size),
      (n) => n === count,
    );

  beforeAll(async () => {
    db = await createTestDatabase('agent_concurrency');
    await seedTestTenant(db, 'acme', [{ agentId: 'capped' }]);
    await setCap(2);
    for (let i = 0; i < 2; i++) {
      const replica = await startReplica(db, {
        LEASE_TTL_MS: '60000',
        SWEEP_INTERVAL_MS: '60000',
      });
      apps.push(replica.app);
      clients.push(new CommandClient(replica.commandTarget));
      workerTargets.push(replica.workerTarget);
    }
    for (const target of workerTargets) {
      const worker = new RawWorker(target, workerSecret('capped'));
      await worker.connect(WORKER_CAPACITY);
      workers.push(worker);
      loops.push(serve(worker));
    }
    loops.push(sample());
  });

  afterAll(async () => {
    stopped = true;
    await Promise.all(loops);
    workers.forEach((w) => w.vanish());
    clients.forEach((c) => c.close());
    await Promise.all(apps.map((app) => app.close()));
    await db.drop();
  });

  it('leases at most two of ten tasks at any time, and completes all ten', async () => {
    resetPeaks();
    const ids = await send(10);
    expect(await heldReaches(2)).toBe(2);
    // The two slots are taken; nothing more is granted, on either replica, while they are.
    await sleep(300);
    expect(held.size).toBe(2);
    expect(await leasedNow()).toBe(2);
    for (let left = 9; left >= 0; left--) {
      const [taskId = ''] = held.keys();
      await complete(taskId);
      // The slot goes to the next queued task at once: no poll runs in these replicas.
      expect(await heldReaches(Math.min(2, left))).toBe(Math.min(2, left));
    }
    for (const id of ids) {
      const task = await (clients[0] as CommandClient).call<Task>('getTask', alice, { id });
      expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    }
    expect(mostHeld).toBe(2);
    expect(mostLeased).toBe(2);
    expect(held.size).toBe(0);
  });

  it('hands a slot freed on a replica that does not host the lease holder to the workers at once', async () => {
    resetPeaks();
    await send(3);
    expect(await heldReaches(2)).toBe(2);
    // A worker's update sent to the other replica than its session's (as while it reconnects): that replica
    // ends the lease, and no session of its own had the task.
    const [taskId = ''] = held.keys();
    const lease = held.get(taskId);
    const target = workerTargets[lease?.worker === workers[0] ? 1 : 0] ?? '';
    const elsewhere = new RawWorker(target, workerSecret('capped'));
    elsewhere.workerId = lease?.worker.workerId ?? '';
    await complete(taskId, elsewhere);
    elsewhere.vanish();
    expect(await heldReaches(2)).toBe(2);
    for (const id of [...held.keys()]) {
      await complete(id);
    }
    expect(mostLeased).toBe(2);
  });

  it('grants no lease of the agent while another process holds its lease-slot lock', async () => {
    const holder = await db.pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(
        `SELECT pg_advisory_xact_lock(hashtextextended('lease-slots:acme/capped', 0))`,
      );
      await send(1);
      await sleep(300);
      expect(held.size).toBe(0);
      await holder.query('COMMIT');
    } finally {
      holder.release();
    }
    expect(await heldReaches(1)).toBe(1);
    const [taskId = ''] = held.keys();
    await complete(taskId);
  });

  it('applies a raised cap, then a lifted one, on every replica without a restart', async () => {
    resetPeaks();
    await send(8);
    expect(await heldReaches(2)).toBe(2);
    await setCap(4);
    // The replicas re-read the agent on the configuration notice and grant the two new slots.
    expect(await heldReaches(4)).toBe(4);
    await sleep(300);
    expect(held.size).toBe(4);
    expect(mostLeased).toBe(4);
    expect(mostHeld).toBe(4);
    await setCap(null);
    expect(await heldReaches(8)).toBe(8);
    for (const id of [...held.keys()]) {
      await complete(id);
    }
    expect(await eventually(leasedNow, (n) => n === 0)).toBe(0);
  });
});

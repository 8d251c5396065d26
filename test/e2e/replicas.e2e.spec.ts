/**
 * Two task-service replicas on one database, as separate processes (ARCHITECTURE.md "Data flow"). The ingress
 * talks only to replica A; the agent workers are connected only to replica B. Whatever A accepts must be
 * executed through B, a cancel A receives must reach the worker on B, and every task stream must stay
 * gap-free (spec digest §10.3, §10.4, §10.8).
 */
import { CancelTaskRequest, GetTaskRequest, TaskState } from '@a2a-js/sdk';
import { seedTenant } from '@lib/tenancy';
import {
  createTestDatabase,
  startAgentWorker,
  startIngress,
  startTaskService,
  type PlatformProcess,
  type TestDatabase,
} from '@lib/testing';
import { AGENT_PROFILES, type ExampleAgentId } from '@lib/worker-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, rawUserMessage } from './support/json-rpc';
import { streamsWithGaps, taskEvents } from './support/platform';
import {
  asTask,
  sdkClientFromCard,
  sendRequest,
  stateName,
  stateOf,
  textOf,
  type SdkAgent,
} from './support/sdk-client';

const API_KEY = 'replicas-key';
const workerSecret = (agent: string): string => `replicas-worker-secret:${agent}`;
/** Long enough that the worker, not the deadline, ends a canceled task (the tests check which one did). */
const CANCEL_GRACE_MS = 30_000;

let db: TestDatabase | undefined;
const processes: PlatformProcess[] = [];
let baseUrl: string;
let echo: SdkAgent;
let countdown: SdkAgent;

beforeAll(async () => {
  db = await createTestDatabase('e2e_replicas');
  const agents: ExampleAgentId[] = ['echo', 'interview', 'countdown'];
  await seedTenant(db.pool, {
    tenantId: 'demo',
    displayName: 'Demo tenant',
    apiKeys: [{ keyId: 'demo-default', principalId: 'demo-user', secret: API_KEY }],
    agents: agents.map((agentId) => ({
      agentId,
      profile: AGENT_PROFILES[agentId],
      onLeaseLost: 'redispatch',
      maxAttempts: 3,
      workerSecret: workerSecret(agentId),
    })),
  });
  const shared = { POSTGRES_URL: db.url, CANCEL_GRACE_MS: String(CANCEL_GRACE_MS) };
  const replicaA = await startTaskService({ ...shared, REPLICA_ID: 'replica-a' });
  processes.push(replicaA.process);
  const replicaB = await startTaskService({ ...shared, REPLICA_ID: 'replica-b' });
  processes.push(replicaB.process);
  const ingress = await startIngress({ POSTGRES_URL: db.url }, [replicaA.commandTarget]);
  processes.push(ingress.process);
  baseUrl = ingress.baseUrl;
  for (const agent of ['echo', 'countdown']) {
    processes.push(await startAgentWorker(agent, replicaB.workerTarget, workerSecret(agent)));
  }
  const card = (agent: string) => `/agents/demo/${agent}/.well-known/agent-card.json`;
  [echo, countdown] = await Promise.all([
    sdkClientFromCard(baseUrl, card('echo'), API_KEY),
    sdkClientFromCard(baseUrl, card('countdown'), API_KEY),
  ]);
});

afterAll(async () => {
  // Workers first, then the ingress, then the replicas.
  for (const process of [...processes].reverse()) {
    await process.stop();
  }
  await db?.drop();
});

/** Who granted the task's lease(s), and who reported each status. */
async function provenance(taskId: string) {
  const events = await taskEvents(db!.pool, 'demo', taskId);
  return {
    events,
    leaseGrantedBy: events
      .filter((e) => e.event_type === 'TaskLeaseGranted')
      .map((e) => e.metadata.actor.id),
    statusReporters: events
      .filter((e) => e.event_type === 'TaskStatusUpdated')
      .map((e) => ({
        state: (e.data['status'] as { state: string }).state,
        actor: e.metadata.actor.kind,
      })),
  };
}

describe('two task-service replicas: ingress → A only, workers → B only', () => {
  it('§10.4: a blocking SendMessage accepted by A completes, executed by the echo worker via B', async () => {
    const task = asTask(
      await echo.client.sendMessage(sendRequest(rawUserMessage('across replicas'))),
    );
    expect(stateName(task)).toBe('TASK_STATE_COMPLETED');
    expect(textOf(task.artifacts[0]?.parts)).toBe('across replicas');
    const { events, leaseGrantedBy, statusReporters } = await provenance(task.id);
    expect(events[0]?.event_type).toBe('TaskSubmitted');
    expect(events[0]?.metadata.actor.kind).toBe('caller');
    expect(leaseGrantedBy).toStrictEqual(['replica-b']);
    expect(statusReporters).toContainEqual({
      state: 'TASK_STATE_COMPLETED',
      actor: 'agent-worker',
    });
    const read = await echo.client.getTask(GetTaskRequest.fromJSON({ id: task.id }));
    expect(stateName(read)).toBe('TASK_STATE_COMPLETED');
  });

  it('§10.4: ten concurrent blocking SendMessages through A all complete via B', async () => {
    const texts = Array.from({ length: 10 }, (_, i) => `parallel ${i}`);
    const tasks = (
      await Promise.all(
        texts.map((text) => echo.client.sendMessage(sendRequest(rawUserMessage(text)))),
      )
    ).map(asTask);
    expect(tasks.map(stateName)).toStrictEqual(texts.map(() => 'TASK_STATE_COMPLETED'));
    expect(tasks.map((t) => textOf(t.artifacts[0]?.parts))).toStrictEqual(texts);
    expect(new Set(tasks.map((t) => t.id)).size).toBe(10);
    for (const task of tasks) {
      expect((await provenance(task.id)).leaseGrantedBy).toStrictEqual(['replica-b']);
    }
  });

  it('§10.8: CancelTask through A reaches the countdown worker on B and returns CANCELED', async () => {
    const started = asTask(
      await countdown.client.sendMessage(
        sendRequest(rawUserMessage('100', { metadata: { stepMs: 300 } }), {
          returnImmediately: true,
        }),
      ),
    );
    // Thirty seconds of countdown: still running when the cancel comes, however late the poll sees step 2.
    await eventually(
      () => countdown.client.getTask(GetTaskRequest.fromJSON({ id: started.id })),
      (t) =>
        stateOf(t) === TaskState.TASK_STATE_WORKING &&
        Number(/^step (\d+)\/100$/.exec(textOf(t.status?.message?.parts))?.[1] ?? 0) >= 2,
    );
    const canceled = await countdown.client.cancelTask(
      CancelTaskRequest.fromJSON({ id: started.id }),
    );
    expect(stateName(canceled)).toBe('TASK_STATE_CANCELED');
    const { events, leaseGrantedBy, statusReporters } = await provenance(started.id);
    expect(leaseGrantedBy).toStrictEqual(['replica-b']);
    const cancelRequested = events.find((e) => e.event_type === 'TaskCancelRequested');
    expect(cancelRequested?.metadata.actor.kind).toBe('caller');
    // CANCELED from the worker itself (the deadline's would be the lease sweeper's, a `system` actor): the
    // cancel notice crossed replicas.
    expect(statusReporters[statusReporters.length - 1]).toStrictEqual({
      state: 'TASK_STATE_CANCELED',
      actor: 'agent-worker',
    });
    const read = await countdown.client.getTask(GetTaskRequest.fromJSON({ id: started.id }));
    expect(stateName(read)).toBe('TASK_STATE_CANCELED');
    expect(read.artifacts[0]?.parts.length ?? 0).toBeLessThan(100);
  });

  it('every task stream is gap-free under concurrent writes from both replicas, and events.streams agrees with the log', async () => {
    // Load of its own: A appends submissions and B appends worker updates to the same streams at once.
    const load = await Promise.all([
      ...Array.from({ length: 6 }, (_, i) =>
        echo.client.sendMessage(sendRequest(rawUserMessage(`load ${i}`))),
      ),
      countdown.client.sendMessage(sendRequest(rawUserMessage('4', { metadata: { stepMs: 20 } }))),
    ]);
    expect(load.map((r) => stateName(asTask(r)))).toStrictEqual(
      load.map(() => 'TASK_STATE_COMPLETED'),
    );
    const counts = await db!.pool.query<{ streams: number }>(
      'SELECT count(DISTINCT stream_id)::int AS streams FROM events.messages',
    );
    expect(counts.rows[0]!.streams).toBeGreaterThanOrEqual(load.length);
    const gaps = await db!.pool.query(
      `SELECT stream_id FROM events.messages GROUP BY tenant_id, stream_id
        HAVING count(*) <> max(stream_version)`,
    );
    expect(gaps.rows).toStrictEqual([]);
    expect(await streamsWithGaps(db!.pool)).toStrictEqual([]);
    const disagree = await db!.pool.query(
      `SELECT s.stream_id FROM events.streams s
         FULL JOIN (SELECT tenant_id, stream_id, max(stream_version) AS v FROM events.messages
                     GROUP BY tenant_id, stream_id) m USING (tenant_id, stream_id)
        WHERE s.version IS DISTINCT FROM m.v`,
    );
    expect(disagree.rows).toStrictEqual([]);
    const views = await db!.pool.query(
      `SELECT v.task_id FROM read.task_view v
         JOIN events.streams s ON s.tenant_id = v.tenant_id AND s.stream_id = 'task:' || v.tenant_id || ':' || v.task_id
        WHERE v.version <> s.version`,
    );
    expect(views.rows).toStrictEqual([]);
  });
});

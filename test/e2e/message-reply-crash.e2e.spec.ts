/**
 * An exchange answered by a bare Message survives the death of the task-service replica that holds the
 * client's call (issue 10, docs/adr/0009-message-replies.md). The ingress talks only to replica A; the worker
 * is connected only to replica B. Replica A is frozen once the worker has the assignment, the worker's reply
 * is recorded through B, and then A is killed with SIGKILL before it could answer the client: the client's
 * call fails, its identical retry (to A, restarted) gets the recorded reply, and the log holds exactly one
 * exchange for the message.
 */
import type { Message } from '@lib/a2a-protocol';
import { seedTenant } from '@lib/tenancy';
import {
  createTestDatabase,
  freePort,
  RawWorker,
  startIngress,
  startTaskService,
  type PlatformEnv,
  type PlatformProcess,
  type TestDatabase,
} from '@lib/testing';
import { AGENT_PROFILES } from '@lib/worker-sdk';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, rawRpc, request, type RpcReply } from './support/json-rpc';
import { taskEvents } from './support/platform';

const API_KEY = 'reply-crash-key';
const WORKER_SECRET = 'reply-crash-worker-secret';

let db: TestDatabase | undefined;
const processes: PlatformProcess[] = [];
let replicaA: PlatformProcess;
let replicaAEnv: PlatformEnv;
let rpcUrl: string;
let worker: RawWorker | undefined;

beforeAll(async () => {
  db = await createTestDatabase('e2e_reply_crash');
  await seedTenant(db.pool, {
    tenantId: 'demo',
    displayName: 'Demo tenant',
    apiKeys: [{ keyId: 'reply-crash', principalId: 'demo-user', secret: API_KEY }],
    agents: [
      {
        agentId: 'units',
        profile: AGENT_PROFILES.units,
        onLeaseLost: 'redispatch',
        maxAttempts: 3,
        workerSecret: WORKER_SECRET,
      },
    ],
  });
  // Replica A gets fixed ports, so that it comes back where the ingress looks for it.
  replicaAEnv = {
    POSTGRES_URL: db.url,
    REPLICA_ID: 'replica-a',
    WORKER_GRPC_PORT: String(await freePort()),
    TASK_SERVICE_GRPC_PORT: String(await freePort()),
  };
  const a = await startTaskService(replicaAEnv);
  replicaA = a.process;
  processes.push(replicaA);
  const b = await startTaskService({ POSTGRES_URL: db.url, REPLICA_ID: 'replica-b' });
  processes.push(b.process);
  const ingress = await startIngress({ POSTGRES_URL: db.url }, [a.commandTarget]);
  processes.push(ingress.process);
  rpcUrl = `${ingress.baseUrl}/agents/demo/units/jsonrpc`;
  worker = new RawWorker(b.workerTarget, WORKER_SECRET);
  await worker.connect();
});

afterAll(async () => {
  worker?.disconnect();
  for (const process of [...processes].reverse()) {
    await process.stop();
  }
  await db?.drop();
});

const send = (message: Record<string, unknown>): Promise<RpcReply> =>
  rawRpc(rpcUrl, request('SendMessage', { message }), { apiKey: API_KEY });

describe('SIGKILL of the task-service between the worker’s reply and the client’s answer', () => {
  it('the retry of the same message gets the recorded reply, and the log holds one exchange', async () => {
    const message = {
      messageId: `reply-crash-${randomUUID()}`,
      role: 'ROLE_USER',
      parts: [{ text: 'convert 10 km to mi' }],
    };
    const first = send(message);
    const assignment = await worker!.nextAssignment();
    expect(assignment.mayReply, 'the units agent may answer with a message').toBe(true);
    const replica = replicaA.pid;
    expect(replica).toBeDefined();
    // Frozen: A holds the client's call and cannot learn of the reply.
    process.kill(replica!, 'SIGSTOP');
    const reply: Message = {
      messageId: `units-reply-${randomUUID()}`,
      role: 'ROLE_AGENT',
      contextId: assignment.contextId,
      parts: [{ text: '10 km = 6.2137 mi' }],
    };
    await worker!.publishReply(assignment.taskId, assignment.leaseEpoch, reply, 'reply-1');
    const recorded = await taskEvents(db!.pool, 'demo', assignment.taskId);
    expect(recorded.map((e) => e.event_type)).toStrictEqual([
      'TaskSubmitted',
      'TaskLeaseGranted',
      'AgentReplied',
    ]);
    await replicaA.kill();

    const lost = await first;
    expect(lost.json.result, `the first call got no answer: ${lost.text}`).toBeUndefined();
    expect(lost.json.error, lost.text).toBeDefined();

    replicaA = (await startTaskService(replicaAEnv)).process;
    processes.push(replicaA);
    const retried = await eventually(
      () => send(message),
      (r) => r.json.result !== undefined,
      30_000,
      200,
    );
    expect(retried.json.result).toStrictEqual({ message: reply });

    // One exchange: one stream and one messageId claim for the message, no task anyone can see.
    const streams = await db!.pool.query<{ stream_id: string }>(
      `SELECT stream_id FROM events.messages
        WHERE tenant_id = 'demo' AND event_type = 'TaskSubmitted'
          AND data -> 'message' ->> 'messageId' = $1`,
      [message.messageId],
    );
    expect(streams.rows.map((r) => r.stream_id)).toStrictEqual([`task:demo:${assignment.taskId}`]);
    expect((await taskEvents(db!.pool, 'demo', assignment.taskId)).length).toBe(3);
    const claims = await db!.pool.query(
      `SELECT task_id FROM ops.message_ids WHERE tenant_id = 'demo' AND message_id = $1`,
      [message.messageId],
    );
    expect(claims.rows).toStrictEqual([{ task_id: assignment.taskId }]);
    const views = await db!.pool.query(
      `SELECT task_id FROM read.task_view WHERE tenant_id = 'demo' AND task_id = $1`,
      [assignment.taskId],
    );
    expect(views.rows).toStrictEqual([]);
    const get = await rawRpc(rpcUrl, request('GetTask', { id: assignment.taskId }), {
      apiKey: API_KEY,
    });
    expect(get.json.error?.code, get.text).toBe(-32001);
  });
});

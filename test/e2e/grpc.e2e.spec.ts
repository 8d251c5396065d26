/**
 * The gRPC binding `lf.a2a.v1.A2AService` end to end (spec digest §2, §8b, §9.1 v1.0.1, §9.3, §10), against the
 * built standalone platform with its example workers, through a grpc-js client built from the generated
 * `A2AServiceClient`. One server serves every agent, routed by the request's `tenant` (`<tenant>/<agent>`).
 * Errors are checked down to the binary `google.rpc.Status` in `grpc-status-details-bin`.
 */
import { BinaryWriter } from '@bufbuild/protobuf/wire';
import { a2aPb } from '@lib/a2a-protocol';
import { seedTenant } from '@lib/tenancy';
import { startIngress } from '@lib/testing';
import { AGENT_PROFILES } from '@lib/worker-sdk';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  a2aGrpcClient,
  collect,
  errorOf,
  expectGrpcError,
  GrpcCode,
  metadata,
  rawUnary,
  unary,
  valueOf,
  type CallOptions,
  type UnaryReply,
} from './support/grpc';
import { A2A_DOMAIN, PLATFORM_DOMAIN, rawRpc, request, taskResult } from './support/json-rpc';
import { bootStandalone, type Standalone } from './support/platform';
import { openSse, resultOf } from './support/sse';

const MAX_BODY_BYTES = 65_536;
const RESUMABLE = 'https://a2a-platform.dev/extensions/resumable-streams/v1';
const ACME_KEY = `acme-key-${randomUUID()}`;
const RFC3339_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/;

const { Role, TaskState } = a2aPb;
type Task = a2aPb.Task;
type StreamResponse = a2aPb.StreamResponse;

let platform: Standalone;
let client: a2aPb.A2AServiceClient;
/** A completed echo task, made once. */
let completedEcho: Task;

const userMessage = (text: string, extra: Partial<a2aPb.Message> = {}): a2aPb.Message => ({
  ...a2aPb.Message.fromPartial({
    messageId: `grpc-${randomUUID()}`,
    role: Role.ROLE_USER,
    parts: [{ text }],
  }),
  ...extra,
});

/** A complete Part (built by hand: the generated `fromPartial` would turn `data: null` into no data). */
const part = (content: Partial<a2aPb.Part>): a2aPb.Part => ({
  metadata: undefined,
  filename: '',
  mediaType: '',
  ...content,
});

/** A countdown request message: `n` steps of `stepMs` each. */
const countdownMessage = (n: number, stepMs: number): a2aPb.Message =>
  userMessage(String(n), { metadata: { stepMs } });

function sendMessage(
  request: Partial<a2aPb.SendMessageRequest>,
  options?: CallOptions,
): Promise<UnaryReply<a2aPb.SendMessageResponse>> {
  // Not `fromPartial`, which would rebuild the parts and lose a `data: null`.
  const message: a2aPb.SendMessageRequest = {
    tenant: '',
    message: undefined,
    configuration: undefined,
    metadata: undefined,
    ...request,
  };
  return unary<a2aPb.SendMessageResponse>((md, cb) => client.sendMessage(message, md, cb), options);
}

/** The task of a successful SendMessage. */
function sentGrpcTask(reply: UnaryReply<a2aPb.SendMessageResponse>): Task {
  const task = valueOf(reply).task;
  if (!task) {
    throw new Error(`expected a task, got ${JSON.stringify(reply)}`);
  }
  return task;
}

function getTask(
  request: Partial<a2aPb.GetTaskRequest>,
  options?: CallOptions,
): Promise<UnaryReply<Task>> {
  const message = a2aPb.GetTaskRequest.fromPartial(request);
  return unary<Task>((md, cb) => client.getTask(message, md, cb), options);
}

function listTasks(
  request: Partial<a2aPb.ListTasksRequest>,
  options?: CallOptions,
): Promise<UnaryReply<a2aPb.ListTasksResponse>> {
  const message = a2aPb.ListTasksRequest.fromPartial(request);
  return unary<a2aPb.ListTasksResponse>((md, cb) => client.listTasks(message, md, cb), options);
}

function cancelTask(request: Partial<a2aPb.CancelTaskRequest>): Promise<UnaryReply<Task>> {
  const message = a2aPb.CancelTaskRequest.fromPartial(request);
  return unary<Task>((md, cb) => client.cancelTask(message, md, cb));
}

function subscribe(id: string, options: CallOptions = {}) {
  const message = a2aPb.SubscribeToTaskRequest.fromPartial({ tenant: 'demo/countdown', id });
  return collect(client.subscribeToTask(message, metadata(options)));
}

function streamMessage(request: Partial<a2aPb.SendMessageRequest>, options: CallOptions = {}) {
  const message = a2aPb.SendMessageRequest.fromPartial(request);
  return collect(client.sendStreamingMessage(message, metadata(options)));
}

/** Starts a countdown without waiting for it. */
async function startCountdown(n: number, stepMs: number): Promise<Task> {
  return sentGrpcTask(
    await sendMessage({
      tenant: 'demo/countdown',
      message: countdownMessage(n, stepMs),
      configuration: a2aPb.SendMessageConfiguration.fromPartial({ returnImmediately: true }),
    }),
  );
}

function stateOf(response: StreamResponse): string | undefined {
  return (response.task ?? response.statusUpdate)?.status?.state;
}

function kindOf(response: StreamResponse): string {
  return Object.entries(response)
    .filter(([, value]) => value !== undefined)
    .map(([key]) => key)
    .join(',');
}

beforeAll(async () => {
  platform = await bootStandalone('e2e_grpc', { MAX_BODY_BYTES: String(MAX_BODY_BYTES) });
  await seedTenant(platform.db.pool, {
    tenantId: 'acme',
    displayName: 'Acme Corp',
    apiKeys: [{ keyId: 'acme-default', principalId: 'acme-user', secret: ACME_KEY }],
    agents: [
      { agentId: 'echo', profile: AGENT_PROFILES.echo, workerSecret: `acme-${randomUUID()}` },
    ],
  });
  client = a2aGrpcClient(platform.grpcTarget);
  completedEcho = sentGrpcTask(
    await sendMessage({ tenant: 'demo/echo', message: userMessage('fixture') }),
  );
  expect(completedEcho.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
});

afterAll(async () => {
  client?.close();
  await platform?.close();
});

describe('the server', () => {
  it('listens before the application reports that it started, and says where', () => {
    const log = platform.process.log;
    const listening = new RegExp(`A2A gRPC on ${platform.grpcTarget}\\b`);
    const started = 'Nest application successfully started';
    expect(log).toMatch(listening);
    expect(log).toContain(started);
    expect(log.indexOf(started), log).toBeGreaterThan(log.search(listening));
  });
});

describe('unary RPCs (§2, §8b)', () => {
  it('§10.4 SendMessage (blocking) to echo: the completed task with its artifact, history and RFC 3339 timestamp', async () => {
    const sent = userMessage('hello over gRPC');
    const task = sentGrpcTask(await sendMessage({ tenant: 'demo/echo', message: sent }));
    expect(task.id).not.toBe('');
    expect(task.contextId).not.toBe('');
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(task.status?.timestamp).toMatch(RFC3339_UTC);
    expect(task.artifacts.map((a) => [a.artifactId, a.parts.map((p) => p.text)])).toEqual([
      ['echo', ['hello over gRPC']],
    ]);
    expect(task.history.map((m) => m.messageId)).toContain(sent.messageId);
  });

  it('§3 bytes, Values, Structs and timestamps survive the round trip, and the Task equals the JSON-RPC one', async () => {
    const raw = Buffer.from([0, 1, 2, 250, 251, 252, 253, 254, 255]);
    const data = { nested: { list: [1, 'two', true, null, { deep: 3.5 }] }, empty: {} };
    const sent = userMessage('round trip', {
      parts: [
        part({ text: 'round trip' }),
        part({ raw, filename: 'bytes.txt', mediaType: 'text/plain; charset=utf-8' }),
        part({ data, metadata: { part: 'meta' } }),
        part({ data: null }),
        part({ data: [1, 2, 3] }),
        part({ data: 'a string' }),
        part({ url: 'https://example.com/file.pdf' }),
      ],
      metadata: { source: 'grpc', count: 2, flag: false, nothing: null, list: ['x'] },
      extensions: ['urn:example:ext'],
      referenceTaskIds: [completedEcho.id],
    });
    const task = sentGrpcTask(
      await sendMessage({
        tenant: 'demo/echo',
        message: sent,
        configuration: a2aPb.SendMessageConfiguration.fromPartial({ historyLength: 5 }),
        metadata: { request: { level: 1 } },
      }),
    );
    const echoed = task.history.find((m) => m.messageId === sent.messageId);
    expect(echoed).toBeDefined();
    expect(echoed?.role).toBe(Role.ROLE_USER);
    expect(echoed?.contextId).toBe(task.contextId);
    expect(echoed?.taskId).toBe(task.id);
    expect(Buffer.compare(echoed?.parts[1]?.raw ?? Buffer.alloc(0), raw)).toBe(0);
    expect(echoed?.parts.map((p) => ({ ...p, raw: p.raw?.toString('hex') }))).toEqual(
      sent.parts.map((p) => ({ ...p, raw: p.raw?.toString('hex') })),
    );
    expect(echoed?.metadata).toEqual(sent.metadata);
    expect(echoed?.extensions).toEqual(['urn:example:ext']);
    expect(echoed?.referenceTaskIds).toEqual([completedEcho.id]);

    // The same task read over JSON-RPC is the ProtoJSON of what gRPC returned (§13 "identical results").
    const viaGrpc = valueOf(await getTask({ tenant: 'demo/echo', id: task.id }));
    const viaJsonRpc = taskResult(
      await rawRpc(platform.endpoint('demo', 'echo'), request('GetTask', { id: task.id })),
    );
    expect(a2aPb.Task.toJSON(viaGrpc)).toEqual(viaJsonRpc);
  });

  it('§10.3 SendMessage to interview: INPUT_REQUIRED, then the answer on the same task completes it', async () => {
    const asked = sentGrpcTask(
      await sendMessage({ tenant: 'demo/interview', message: userMessage('Hello') }),
    );
    expect(asked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(asked.status?.message?.parts[0]?.text).toBe('What is your name?');
    const done = sentGrpcTask(
      await sendMessage({
        tenant: 'demo/interview',
        message: userMessage('Grace', { taskId: asked.id, contextId: asked.contextId }),
      }),
    );
    expect(done.id).toBe(asked.id);
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(done.artifacts[0]?.parts[0]?.text).toBe('Nice to meet you, Grace!');
  });

  it('§10.9 routing by tenant: demo/echo and demo/countdown reach different agents', async () => {
    const [echoed, counted] = await Promise.all([
      sendMessage({ tenant: 'demo/echo', message: countdownMessage(1, 10) }),
      sendMessage({ tenant: 'demo/countdown', message: countdownMessage(1, 10) }),
    ]);
    expect(sentGrpcTask(echoed).artifacts.map((a) => a.artifactId)).toEqual(['echo']);
    expect(sentGrpcTask(counted).artifacts.map((a) => a.artifactId)).toEqual(['countdown']);
  });

  it('§10.5 GetTask: the task; historyLength 0 leaves out the history', async () => {
    const task = valueOf(await getTask({ tenant: 'demo/echo', id: completedEcho.id }));
    expect(task.id).toBe(completedEcho.id);
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(task.history.length).toBeGreaterThan(0);
    const bare = valueOf(
      await getTask({ tenant: 'demo/echo', id: completedEcho.id, historyLength: 0 }),
    );
    expect(bare.history).toEqual([]);
    expect(bare.artifacts.length).toBe(1);
  });

  it('§10.7 ListTasks: pages with nextPageToken ("" on the last), pageSize and totalSize; status filter', async () => {
    const first = valueOf(await listTasks({ tenant: 'demo/echo', pageSize: 1 }));
    expect(first.tasks).toHaveLength(1);
    expect(first.pageSize).toBe(1);
    expect(first.totalSize).toBeGreaterThanOrEqual(3);
    expect(first.nextPageToken).not.toBe('');
    expect(first.tasks[0]?.artifacts).toEqual([]);
    const second = valueOf(
      await listTasks({ tenant: 'demo/echo', pageSize: 1, pageToken: first.nextPageToken }),
    );
    expect(second.tasks).toHaveLength(1);
    expect(second.tasks[0]?.id).not.toBe(first.tasks[0]?.id);
    const all = valueOf(
      await listTasks({
        tenant: 'demo/echo',
        status: TaskState.TASK_STATE_COMPLETED,
        includeArtifacts: true,
      }),
    );
    expect(all.pageSize).toBe(50);
    expect(all.nextPageToken).toBe('');
    expect(all.totalSize).toBe(all.tasks.length);
    expect(all.tasks.map((t) => t.id)).toContain(completedEcho.id);
    expect(all.tasks.every((t) => t.status?.state === TaskState.TASK_STATE_COMPLETED)).toBe(true);
    expect(all.tasks.find((t) => t.id === completedEcho.id)?.artifacts).toHaveLength(1);
  });

  it('§10.8 CancelTask: a running countdown ends CANCELED; a second cancel is FAILED_PRECONDITION TASK_NOT_CANCELABLE', async () => {
    const task = await startCountdown(50, 200);
    const canceled = valueOf(await cancelTask({ tenant: 'demo/countdown', id: task.id }));
    expect(canceled.id).toBe(task.id);
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expectGrpcError(errorOf(await cancelTask({ tenant: 'demo/countdown', id: task.id })), {
      code: GrpcCode.FAILED_PRECONDITION,
      reason: 'TASK_NOT_CANCELABLE',
      domain: A2A_DOMAIN,
    });
  });

  it('§10.10 the push-config RPCs are FAILED_PRECONDITION PUSH_NOTIFICATION_NOT_SUPPORTED (no agent declares push)', async () => {
    const tenant = 'demo/echo';
    const taskId = completedEcho.id;
    const replies = await Promise.all([
      unary<a2aPb.TaskPushNotificationConfig>((md, cb) =>
        client.createTaskPushNotificationConfig(
          a2aPb.TaskPushNotificationConfig.fromPartial({
            tenant,
            taskId,
            url: 'https://example.com/hook',
          }),
          md,
          cb,
        ),
      ),
      unary<a2aPb.TaskPushNotificationConfig>((md, cb) =>
        client.getTaskPushNotificationConfig(
          a2aPb.GetTaskPushNotificationConfigRequest.fromPartial({ tenant, taskId, id: 'c1' }),
          md,
          cb,
        ),
      ),
      unary<a2aPb.ListTaskPushNotificationConfigsResponse>((md, cb) =>
        client.listTaskPushNotificationConfigs(
          a2aPb.ListTaskPushNotificationConfigsRequest.fromPartial({ tenant, taskId }),
          md,
          cb,
        ),
      ),
      unary<object>((md, cb) =>
        client.deleteTaskPushNotificationConfig(
          a2aPb.DeleteTaskPushNotificationConfigRequest.fromPartial({ tenant, taskId, id: 'c1' }),
          md,
          cb,
        ),
      ),
    ]);
    for (const reply of replies) {
      expectGrpcError(errorOf(reply), {
        code: GrpcCode.FAILED_PRECONDITION,
        reason: 'PUSH_NOTIFICATION_NOT_SUPPORTED',
        domain: A2A_DOMAIN,
      });
    }
  });

  it('§10.11 GetExtendedAgentCard: the extended card of echo (signed, with its gRPC interface); agents that declare none answer FAILED_PRECONDITION UNSUPPORTED_OPERATION', async () => {
    const extendedCard = (tenant: string) =>
      unary<a2aPb.AgentCard>((md, cb) =>
        client.getExtendedAgentCard(
          a2aPb.GetExtendedAgentCardRequest.fromPartial({ tenant }),
          md,
          cb,
        ),
      );
    const card = valueOf(await extendedCard('demo/echo'));
    expect(card.name).toBe('Echo');
    expect(card.capabilities?.extendedAgentCard).toBe(true);
    expect(card.skills.map((s) => s.id)).toContain('echo-stream');
    expect(card.signatures.length).toBeGreaterThan(0);
    expect(card.supportedInterfaces).toContainEqual({
      url: platform.grpcTarget,
      protocolBinding: 'GRPC',
      tenant: 'demo/echo',
      protocolVersion: '1.0',
    });
    const viaJsonRpc = await rawRpc(
      platform.endpoint('demo', 'echo'),
      request('GetExtendedAgentCard', {}),
    );
    const { signatures: _grpcSignatures, ...grpcCard } = a2aPb.AgentCard.toJSON(card) as {
      signatures: unknown;
    };
    const { signatures: _jsonSignatures, ...jsonCard } = viaJsonRpc.json.result as {
      signatures: unknown;
    };
    expect(grpcCard).toEqual(jsonCard);

    expectGrpcError(errorOf(await extendedCard('demo/countdown')), {
      code: GrpcCode.FAILED_PRECONDITION,
      reason: 'UNSUPPORTED_OPERATION',
      domain: A2A_DOMAIN,
    });
  });
});

describe('server streaming (§8b, §10.6)', () => {
  it('SendStreamingMessage: the task first, then status and artifact updates in order, ending OK after COMPLETED', async () => {
    const result = await streamMessage({
      tenant: 'demo/countdown',
      message: countdownMessage(3, 50),
    });
    expect(result.error).toBeNull();
    const { messages } = result;
    expect(kindOf(messages[0]!)).toBe('task');
    const taskId = messages[0]!.task!.id;
    expect(messages.slice(1).every((m) => /^(statusUpdate|artifactUpdate)$/.test(kindOf(m)))).toBe(
      true,
    );
    expect(
      messages.slice(1).every((m) => (m.statusUpdate ?? m.artifactUpdate)?.taskId === taskId),
    ).toBe(true);
    const chunks = messages.flatMap((m) => m.artifactUpdate?.artifact?.parts[0]?.text ?? []);
    expect(chunks).toEqual(['3', '2', '1']);
    expect(messages.filter((m) => m.artifactUpdate?.lastChunk).length).toBe(1);
    expect(stateOf(messages[messages.length - 1]!)).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(messages.slice(0, -1).every((m) => stateOf(m) !== TaskState.TASK_STATE_COMPLETED)).toBe(
      true,
    );
  });

  it('SubscribeToTask on a running task: the snapshot first, then updates, ending OK after COMPLETED', async () => {
    const task = await startCountdown(4, 100);
    const result = await subscribe(task.id);
    expect(result.error).toBeNull();
    const { messages } = result;
    expect(kindOf(messages[0]!)).toBe('task');
    expect(messages[0]!.task!.id).toBe(task.id);
    expect(messages.slice(1).every((m) => /^(statusUpdate|artifactUpdate)$/.test(kindOf(m)))).toBe(
      true,
    );
    expect(stateOf(messages[messages.length - 1]!)).toBe(TaskState.TASK_STATE_COMPLETED);
    const final = valueOf(await getTask({ tenant: 'demo/countdown', id: task.id }));
    expect(final.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it('errors before the first message end the call with the status and no messages: unknown task NOT_FOUND, terminal task UNSUPPORTED_OPERATION', async () => {
    const unknown = await subscribe(randomUUID());
    expect(unknown.messages).toEqual([]);
    expectGrpcError(unknown.error, {
      code: GrpcCode.NOT_FOUND,
      reason: 'TASK_NOT_FOUND',
      domain: A2A_DOMAIN,
    });
    const done = await startCountdown(1, 10);
    await expect
      .poll(async () => valueOf(await getTask({ tenant: 'demo/countdown', id: done.id })).status)
      .toMatchObject({ state: TaskState.TASK_STATE_COMPLETED });
    const terminal = await subscribe(done.id);
    expect(terminal.messages).toEqual([]);
    expectGrpcError(terminal.error, {
      code: GrpcCode.FAILED_PRECONDITION,
      reason: 'UNSUPPORTED_OPERATION',
      domain: A2A_DOMAIN,
    });
    const invalid = await streamMessage({ tenant: 'demo/countdown' });
    expect(invalid.messages).toEqual([]);
    expectGrpcError(invalid.error, {
      code: GrpcCode.INVALID_ARGUMENT,
      reason: 'INVALID_PARAMS',
      domain: PLATFORM_DOMAIN,
      field: 'message',
    });
  });

  it('resumable streams extension: last-event-id 0 replays the whole task exactly as the JSON-RPC SSE stream does', async () => {
    const task = await startCountdown(2, 10);
    await expect
      .poll(async () => valueOf(await getTask({ tenant: 'demo/countdown', id: task.id })).status)
      .toMatchObject({ state: TaskState.TASK_STATE_COMPLETED });
    const result = await subscribe(task.id, { extensions: RESUMABLE, lastEventId: '0' });
    expect(result.error).toBeNull();
    expect(result.headers?.get('a2a-extensions')).toEqual([RESUMABLE]);
    const sse = await openSse(
      platform.endpoint('demo', 'countdown'),
      request('SubscribeToTask', { id: task.id }),
      { headers: { 'A2A-Extensions': RESUMABLE, 'Last-Event-ID': '0' } },
    );
    const frames = await sse.collect();
    expect(frames.length).toBeGreaterThanOrEqual(5);
    expect(result.messages.map((m) => a2aPb.StreamResponse.toJSON(m))).toEqual(
      frames.map(resultOf),
    );
  });
});

describe('service parameters (§8b, §10.1, §10.2)', () => {
  it('a2a-extensions: the activated (declared) extensions come back in the initial metadata of unary and streaming calls', async () => {
    const requested = `${RESUMABLE}, urn:example:not-declared`;
    const got = await getTask(
      { tenant: 'demo/echo', id: completedEcho.id },
      { extensions: requested },
    );
    expect(got.ok).toBe(true);
    expect(got.headers?.get('a2a-extensions')).toEqual([RESUMABLE]);
    const plain = await getTask({ tenant: 'demo/echo', id: completedEcho.id });
    expect(plain.headers?.get('a2a-extensions')).toEqual([]);
    const streamed = await streamMessage(
      { tenant: 'demo/echo', message: userMessage('extensions') },
      { extensions: requested },
    );
    expect(streamed.error).toBeNull();
    expect(streamed.headers?.get('a2a-extensions')).toEqual([RESUMABLE]);
  });

  it('§10.1 a2a-version: an unsupported version and a missing one (= 0.3) are FAILED_PRECONDITION VERSION_NOT_SUPPORTED', async () => {
    for (const version of ['0.5', null]) {
      const reply = await getTask({ tenant: 'demo/echo', id: completedEcho.id }, { version });
      expectGrpcError(errorOf(reply), {
        code: GrpcCode.FAILED_PRECONDITION,
        reason: 'VERSION_NOT_SUPPORTED',
        domain: A2A_DOMAIN,
      });
    }
    const streamed = await subscribe(randomUUID(), { version: '2.0' });
    expect(streamed.messages).toEqual([]);
    expectGrpcError(streamed.error, {
      code: GrpcCode.FAILED_PRECONDITION,
      reason: 'VERSION_NOT_SUPPORTED',
      domain: A2A_DOMAIN,
    });
  });

  it('x-api-key: missing or wrong is UNAUTHENTICATED', async () => {
    for (const apiKey of [null, 'wrong-key']) {
      const reply = await getTask({ tenant: 'demo/echo', id: completedEcho.id }, { apiKey });
      expectGrpcError(errorOf(reply), {
        code: GrpcCode.UNAUTHENTICATED,
        reason: 'UNAUTHENTICATED',
        domain: PLATFORM_DOMAIN,
      });
    }
  });
});

describe('routing by tenant (§10.9) and isolation (§10.13)', () => {
  it('a malformed tenant is INVALID_ARGUMENT with a BadRequest on `tenant`', async () => {
    for (const tenant of ['demo', 'demo/echo/extra', '/echo']) {
      expectGrpcError(errorOf(await getTask({ tenant, id: completedEcho.id })), {
        code: GrpcCode.INVALID_ARGUMENT,
        reason: 'INVALID_PARAMS',
        domain: PLATFORM_DOMAIN,
        field: 'tenant',
      });
    }
  });

  it("a request without tenant is for DEFAULT_AGENT (demo/echo): its tasks are found, other agents' are not", async () => {
    const found = valueOf(await getTask({ id: completedEcho.id }));
    expect(found.id).toBe(completedEcho.id);
    const countdown = await startCountdown(1, 10);
    expectGrpcError(errorOf(await getTask({ id: countdown.id })), {
      code: GrpcCode.NOT_FOUND,
      reason: 'TASK_NOT_FOUND',
      domain: A2A_DOMAIN,
    });
  });

  it("another tenant's agent with this tenant's key is UNAUTHENTICATED; an unknown agent is UNIMPLEMENTED", async () => {
    expectGrpcError(errorOf(await getTask({ tenant: 'acme/echo', id: completedEcho.id })), {
      code: GrpcCode.UNAUTHENTICATED,
      reason: 'UNAUTHENTICATED',
      domain: PLATFORM_DOMAIN,
    });
    expectGrpcError(errorOf(await getTask({ tenant: 'demo/nobody', id: completedEcho.id })), {
      code: GrpcCode.UNIMPLEMENTED,
      reason: 'METHOD_NOT_FOUND',
      domain: PLATFORM_DOMAIN,
    });
  });

  it("another tenant cannot read this tenant's task: NOT_FOUND TASK_NOT_FOUND, like an id that never existed", async () => {
    const acme = { apiKey: ACME_KEY };
    const hidden = errorOf(await getTask({ tenant: 'acme/echo', id: completedEcho.id }, acme));
    expectGrpcError(hidden, {
      code: GrpcCode.NOT_FOUND,
      reason: 'TASK_NOT_FOUND',
      domain: A2A_DOMAIN,
    });
    const listed = valueOf(await listTasks({ tenant: 'acme/echo' }, acme));
    expect(listed.tasks).toEqual([]);
    expect(listed.totalSize).toBe(0);
    const missing = errorOf(await getTask({ tenant: 'demo/echo', id: randomUUID() }));
    expectGrpcError(missing, {
      code: GrpcCode.NOT_FOUND,
      reason: 'TASK_NOT_FOUND',
      domain: A2A_DOMAIN,
    });
  });
});

describe('validation (§3, §9.3): INVALID_ARGUMENT with ErrorInfo and BadRequest', () => {
  it.each([
    ['SendMessage without a message', () => sendMessage({ tenant: 'demo/echo' }), 'message'],
    [
      'SendMessage with a message without parts',
      () => sendMessage({ tenant: 'demo/echo', message: userMessage('x', { parts: [] }) }),
      'message.parts',
    ],
    [
      'GetTask with a negative historyLength',
      () => getTask({ tenant: 'demo/echo', id: completedEcho.id, historyLength: -1 }),
      'historyLength',
    ],
    ['GetTask without an id', () => getTask({ tenant: 'demo/echo' }), 'id'],
    [
      'ListTasks with pageSize 0',
      () => listTasks({ tenant: 'demo/echo', pageSize: 0 }),
      'pageSize',
    ],
    [
      'ListTasks with pageSize 101',
      () => listTasks({ tenant: 'demo/echo', pageSize: 101 }),
      'pageSize',
    ],
    [
      'ListTasks with a page token this server did not issue',
      () => listTasks({ tenant: 'demo/echo', pageToken: 'not-a-token' }),
      'pageToken',
    ],
  ] as const)('%s', async (_title, call, field) => {
    expectGrpcError(errorOf(await call()), {
      code: GrpcCode.INVALID_ARGUMENT,
      reason: 'INVALID_PARAMS',
      domain: PLATFORM_DOMAIN,
      field,
    });
  });

  it('§9.1 a part of a media type the agent does not accept is INVALID_ARGUMENT CONTENT_TYPE_NOT_SUPPORTED', async () => {
    const message = userMessage('pdf', {
      parts: [part({ raw: Buffer.from('%PDF'), mediaType: 'application/pdf' })],
    });
    expectGrpcError(errorOf(await sendMessage({ tenant: 'demo/echo', message })), {
      code: GrpcCode.INVALID_ARGUMENT,
      reason: 'CONTENT_TYPE_NOT_SUPPORTED',
      domain: A2A_DOMAIN,
      metadata: { mediaType: 'application/pdf' },
    });
  });

  it('bytes that are not a protobuf request are INVALID_ARGUMENT PARSE_ERROR, not INTERNAL', async () => {
    // Field 1 (tenant) announces 5 bytes of string; only one follows.
    const truncated = Buffer.from([0x0a, 0x05, 0x61]);
    for (const method of ['GetTask', 'SendMessage', 'ListTasks']) {
      expectGrpcError(errorOf(await rawUnary(client, method, truncated)), {
        code: GrpcCode.INVALID_ARGUMENT,
        reason: 'PARSE_ERROR',
        domain: PLATFORM_DOMAIN,
      });
    }
  });

  it('an enum number outside the proto is INVALID_PARAMS on its field, as on the JSON bindings', async () => {
    const listing = new BinaryWriter().uint32(10).string('demo/echo').uint32(24).int32(99).finish();
    expectGrpcError(errorOf(await rawUnary(client, 'ListTasks', Buffer.from(listing))), {
      code: GrpcCode.INVALID_ARGUMENT,
      reason: 'INVALID_PARAMS',
      domain: PLATFORM_DOMAIN,
      field: 'status',
    });
    const message = a2aPb.Message.encode(userMessage('role')).uint32(32).int32(99).finish();
    const sending = new BinaryWriter()
      .uint32(10)
      .string('demo/echo')
      .uint32(18)
      .bytes(message)
      .finish();
    expectGrpcError(errorOf(await rawUnary(client, 'SendMessage', Buffer.from(sending))), {
      code: GrpcCode.INVALID_ARGUMENT,
      reason: 'INVALID_PARAMS',
      domain: PLATFORM_DOMAIN,
      field: 'message.role',
    });
  });

  it('a request larger than MAX_BODY_BYTES is RESOURCE_EXHAUSTED (grpc-js limit)', async () => {
    const reply = await sendMessage({
      tenant: 'demo/echo',
      message: userMessage('x'.repeat(MAX_BODY_BYTES + 1)),
    });
    expect(errorOf(reply).code).toBe(GrpcCode.RESOURCE_EXHAUSTED);
  });
});

describe('shutdown', () => {
  it('an ingress that stops ends its open streams with UNAVAILABLE (resubscribe elsewhere) and exits promptly', async () => {
    const command = /command gRPC on ([\d.]+:\d+)/.exec(platform.process.log)?.[1];
    expect(command).toBeDefined();
    const ingress = await startIngress({ POSTGRES_URL: platform.db.url }, [command ?? '']);
    const other = a2aGrpcClient(ingress.grpcTarget);
    try {
      const task = await startCountdown(100, 1_000);
      const stream = other.subscribeToTask(
        a2aPb.SubscribeToTaskRequest.fromPartial({ tenant: 'demo/countdown', id: task.id }),
        metadata(),
      );
      const result = collect(stream);
      await new Promise((resolve) => stream.once('data', resolve));
      const stopping = Date.now();
      await ingress.process.stop();
      expect(Date.now() - stopping).toBeLessThan(5_000);
      const { messages, error } = await result;
      expect(kindOf(messages[0]!)).toBe('task');
      expectGrpcError(error, {
        code: GrpcCode.UNAVAILABLE,
        reason: 'UNAVAILABLE',
        domain: PLATFORM_DOMAIN,
      });
      valueOf(await cancelTask({ tenant: 'demo/countdown', id: task.id }));
    } finally {
      other.close();
      await ingress.process.stop();
    }
  });
});

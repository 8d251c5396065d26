/**
 * What only the gRPC binding `lf.a2a.v1.A2AService` has, end to end (spec digest §2, §8b, §9.3, §10), against
 * the built standalone platform with its example workers, through a grpc-js client built from the generated
 * `A2AServiceClient`: one server for every agent, routed by the request's `tenant`; binary ProtoJSON
 * round trips; metadata; raw request bytes; the grpc-js size limit; streams ended by a stopping ingress. What
 * every binding must do alike is in conformance/conformance.e2e.spec.ts, run on gRPC too.
 */
import { a2aPb } from '@lib/a2a-protocol';
import { startIngress } from '@lib/testing';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  a2aGrpcClient,
  a2aMethodPath,
  collect,
  errorOf,
  expectGrpcError,
  GrpcCode,
  metadata,
  rawUnary,
  unary,
  valueOf,
  type UnaryReply,
} from './support/grpc';
import { rawRpc, request, taskResult } from './support/json-rpc';
import { bootStandalone, type Standalone } from './support/platform';
import { openSse, resultOf } from './support/sse';
import { A2A_DOMAIN, PLATFORM_DOMAIN, type ServiceParams } from './support/wire';

const MAX_BODY_BYTES = 65_536;
const RESUMABLE = 'https://a2a-platform.dev/extensions/resumable-streams/v1';

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
  options?: ServiceParams,
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
  options?: ServiceParams,
): Promise<UnaryReply<Task>> {
  const message = a2aPb.GetTaskRequest.fromPartial(request);
  return unary<Task>((md, cb) => client.getTask(message, md, cb), options);
}

function cancelTask(request: Partial<a2aPb.CancelTaskRequest>): Promise<UnaryReply<Task>> {
  const message = a2aPb.CancelTaskRequest.fromPartial(request);
  return unary<Task>((md, cb) => client.cancelTask(message, md, cb));
}

function subscribe(id: string, options: ServiceParams = {}) {
  const message = a2aPb.SubscribeToTaskRequest.fromPartial({ tenant: 'demo/countdown', id });
  return collect(client.subscribeToTask(message, metadata(options)));
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

function kindOf(response: StreamResponse): string {
  return Object.entries(response)
    .filter(([, value]) => value !== undefined)
    .map(([key]) => key)
    .join(',');
}

beforeAll(async () => {
  platform = await bootStandalone('e2e_grpc', { MAX_BODY_BYTES: String(MAX_BODY_BYTES) });
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

describe('binary round trip (§3, §8b)', () => {
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
});

describe('server streaming (§8b, §10.2, §10.6)', () => {
  it('resumable streams extension: last-event-id 0 replays the whole task exactly as the JSON-RPC SSE stream does', async () => {
    const task = await startCountdown(2, 10);
    await expect
      .poll(async () => valueOf(await getTask({ tenant: 'demo/countdown', id: task.id })).status)
      .toMatchObject({ state: TaskState.TASK_STATE_COMPLETED });
    const result = await subscribe(task.id, {
      extensions: [RESUMABLE],
      headers: { 'last-event-id': '0' },
    });
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

describe('routing by tenant (§10.9)', () => {
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

  it('an unknown agent is UNIMPLEMENTED METHOD_NOT_FOUND', async () => {
    expectGrpcError(errorOf(await getTask({ tenant: 'demo/nobody', id: completedEcho.id })), {
      code: GrpcCode.UNIMPLEMENTED,
      reason: 'METHOD_NOT_FOUND',
      domain: PLATFORM_DOMAIN,
    });
  });
});

describe('request bytes and size (§8b, §9.3)', () => {
  it('bytes that are not a protobuf request are INVALID_ARGUMENT PARSE_ERROR, not INTERNAL', async () => {
    // Field 1 (tenant) announces 5 bytes of string; only one follows.
    const truncated = Buffer.from([0x0a, 0x05, 0x61]);
    for (const method of ['GetTask', 'SendMessage', 'ListTasks']) {
      expectGrpcError(errorOf(await rawUnary(client, a2aMethodPath(method), truncated)), {
        code: GrpcCode.INVALID_ARGUMENT,
        reason: 'PARSE_ERROR',
        domain: PLATFORM_DOMAIN,
      });
    }
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
  /** How long the stop waits for the process to exit by itself before it SIGKILLs it. */
  const STOP_DEADLINE_MS = 60_000;
  /** SHUTDOWN_GRACE_MS of the ingress that stops: longer than the whole test may take. */
  const GRACE_NEVER_REACHED_MS = 600_000;

  it('an ingress that stops ends its open streams with UNAVAILABLE (resubscribe elsewhere) and exits by itself, without waiting out its grace', async () => {
    const command = /command gRPC on ([\d.]+:\d+)/.exec(platform.process.log)?.[1];
    expect(command).toBeDefined();
    // A grace far longer than the stop below waits: a drain that waited for the open stream to end by
    // itself would not finish before the SIGKILL, and the process would not log its shutdown.
    const ingress = await startIngress(
      { POSTGRES_URL: platform.db.url, SHUTDOWN_GRACE_MS: String(GRACE_NEVER_REACHED_MS) },
      [command ?? ''],
    );
    const other = a2aGrpcClient(ingress.grpcTarget);
    try {
      const task = await startCountdown(100, 1_000);
      const stream = other.subscribeToTask(
        a2aPb.SubscribeToTaskRequest.fromPartial({ tenant: 'demo/countdown', id: task.id }),
        metadata(),
      );
      const result = collect(stream);
      await new Promise((resolve) => stream.once('data', resolve));
      await ingress.process.stop('SIGTERM', STOP_DEADLINE_MS);
      expect(ingress.process.log).toMatch(/shut down in \d+ ms/);
      expect(ingress.process.log).not.toMatch(/drain step \S+: (timed out|failed)/);
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

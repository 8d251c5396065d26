/**
 * Streaming end to end (spec digest §7.3, §10.2, §10.6; DESIGN.md "Live updates across replicas"), against the
 * built platform: SendStreamingMessage and SubscribeToTask over JSON-RPC SSE, through the official
 * `@a2a-js/sdk` client and through a raw SSE client that sees the wire (`id:` generations, framing, headers).
 * Every stream is compared with the task's log in Postgres: the events a stream carries must be exactly the
 * log's client-visible events, in generation order, with no gap and no duplicate.
 */
import {
  Artifact,
  GetTaskRequest,
  SubscribeToTaskRequest,
  TaskState,
  TaskStatus,
  taskStateToJSON,
  type StreamResponse as SdkStreamResponse,
  type Task as SdkTask,
} from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  type Client,
} from '@a2a-js/sdk/client';
import type { StreamResponse, Task as WireTask } from '@lib/a2a-protocol';
import { TaskLog } from '@lib/event-store';
import { foldTask, toStreamResponse, type TaskEvent } from '@lib/task-domain';
import { seedTenant, tenantIdOf } from '@lib/tenancy';
import {
  createTestDatabase,
  startAgentWorker,
  startIngress,
  startTaskService,
  type PlatformProcess,
  type TestDatabase,
} from '@lib/testing';
import { AGENT_PROFILES, type ExampleAgentId } from '@lib/worker-sdk';
import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  eventually,
  expectRpcError,
  jsonRpcUrl,
  rawRpc,
  rawUserMessage,
  request,
  sentTask,
  taskResult,
} from './support/json-rpc';
import { bootStandalone, type Standalone } from './support/platform';
import { ApiKeyInterceptor, asTask, sendRequest, textOf } from './support/sdk-client';
import {
  generationOf,
  kindOf,
  logGenerations,
  openSse,
  resultOf,
  rpcOf,
  streamedGenerations,
  type SseConnection,
  type SseFrame,
} from './support/sse';
import { A2A_DOMAIN } from './support/wire';

const TENANT = 'demo';
const API_KEY = 'demo-key';
const RESUMABLE = 'https://a2a-platform.dev/extensions/resumable-streams/v1';
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const cardPath = (agent: string): string =>
  `/agents/${TENANT}/${agent}/.well-known/agent-card.json`;

// ---------------------------------------------------------------------------------------------------------
// helpers
// ---------------------------------------------------------------------------------------------------------

/** The official client built from the agent card like `sdkClientFromCard`, on the plain `fetch` (nothing recorded). */
async function streamingClient(baseUrl: string, agent: string): Promise<Client> {
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl: fetch })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl: fetch }),
      clientConfig: { interceptors: [new ApiKeyInterceptor(API_KEY)] },
    }),
  );
  return factory.createFromUrl(baseUrl, cardPath(agent));
}

/** A countdown request message: `n` steps of `stepMs` each. */
const countdownMessage = (n: number, stepMs: number): Record<string, unknown> =>
  rawUserMessage(String(n), { metadata: { stepMs } });

/** Starts a countdown without waiting for it (SendMessage with returnImmediately). */
async function startCountdown(endpoint: string, n: number, stepMs: number): Promise<WireTask> {
  return sentTask(
    await rawRpc(
      endpoint,
      request('SendMessage', {
        message: countdownMessage(n, stepMs),
        configuration: { returnImmediately: true },
      }),
    ),
  );
}

async function getTask(endpoint: string, id: string): Promise<WireTask> {
  return taskResult(await rawRpc(endpoint, request('GetTask', { id })));
}

/** Waits until the log holds at least `count` client-visible events. */
async function waitForStreamed(pool: Pool, taskId: string, count: number): Promise<number[]> {
  return eventually(
    () => streamedGenerations(pool, TENANT, taskId),
    (gens) => gens.length >= count,
    20_000,
  );
}

function stateOfResponse(response: StreamResponse): string | undefined {
  if ('statusUpdate' in response) {
    return response.statusUpdate.status.state;
  }
  if ('task' in response) {
    return response.task.status.state;
  }
  return undefined;
}

const isCompleted = (frame: SseFrame): boolean =>
  stateOfResponse(resultOf(frame)) === 'TASK_STATE_COMPLETED';

/**
 * §7.3 framing of every frame: no `event:` field (only the mid-stream error uses one), an `id:` that is a
 * task generation, strictly increasing, and a `data:` that is a complete JSON-RPC success response echoing
 * the request id. Returns the generations.
 */
function expectFraming(frames: readonly SseFrame[], rpcId: unknown): number[] {
  const ids: number[] = [];
  for (const frame of frames) {
    const context = `frame ${JSON.stringify(frame)}`;
    expect(frame.event, context).toBeNull();
    const id = generationOf(frame);
    if (ids.length > 0) {
      expect(id, context).toBeGreaterThan(ids[ids.length - 1]!);
    }
    ids.push(id);
    const rpc = rpcOf(frame);
    expect(Object.keys(rpc).sort(), context).toStrictEqual(['id', 'jsonrpc', 'result']);
    expect(rpc.jsonrpc, context).toBe('2.0');
    expect(rpc.id, context).toStrictEqual(rpcId);
    expect(typeof rpc.result, context).toBe('object');
  }
  return ids;
}

/**
 * The frames are exactly the task's client-visible log events after generation `after`: same generations,
 * same order, each frame's result the StreamResponse of its event (§10.6: generation order, no gap, no
 * duplicate).
 */
async function expectLogAfter(
  pool: Pool,
  taskId: string,
  after: number,
  frames: readonly SseFrame[],
): Promise<void> {
  const log = await logGenerations(pool, TENANT, taskId);
  const contextId = String(log[0]?.data['contextId']);
  const expected = log
    .filter((g) => g.version > after)
    .map((g) => ({
      id: g.version,
      response: toStreamResponse({ type: g.type, data: g.data } as TaskEvent, {
        taskId,
        contextId,
      }),
    }))
    .filter((e) => e.response !== null);
  expect(frames.map((f) => ({ id: generationOf(f), response: resultOf(f) }))).toEqual(expected);
}

/** The frame is a `task` snapshot equal to the task as its log stood at the frame's generation. */
async function expectSnapshotAtId(pool: Pool, taskId: string, frame: SseFrame): Promise<void> {
  const response = resultOf(frame);
  expect(kindOf(response), `first frame ${frame.data}`).toBe('task');
  const at = generationOf(frame);
  const log = await logGenerations(pool, TENANT, taskId);
  const folded = foldTask(
    log.filter((g) => g.version <= at).map((g) => ({ type: g.type, data: g.data }) as TaskEvent),
  );
  expect(folded.status).toBe('present');
  expect('task' in response && response.task).toEqual(
    folded.status === 'present' ? folded.task : null,
  );
}

/** Reads a stream to its end, and proves that it ends (the server closes it) in bounded time. */
async function readToEnd(stream: SseConnection, timeoutMs = 30_000): Promise<SseFrame[]> {
  const frames = await stream.collect(timeoutMs);
  expect(stream.ended).toBe(true);
  return frames;
}

function subscribeBody(taskId: string, id: string | number = randomUUID()): object {
  return request('SubscribeToTask', { id: taskId }, id);
}

function streamBody(message: Record<string, unknown>, id: string | number = randomUUID()): object {
  return request('SendStreamingMessage', { message }, id);
}

/** A normalized view of a status/artifact stream event, to compare SDK events with log events. */
type Step =
  | ['status', string, string]
  | ['artifact', string, string, boolean, boolean]
  | ['other', string];

function stepOfSdk(event: SdkStreamResponse): Step {
  const payload = event.payload;
  if (payload?.$case === 'statusUpdate') {
    const status = payload.value.status;
    return [
      'status',
      taskStateToJSON(status?.state ?? TaskState.TASK_STATE_UNSPECIFIED),
      textOf(status?.message?.parts),
    ];
  }
  if (payload?.$case === 'artifactUpdate') {
    const { artifact, append, lastChunk } = payload.value;
    return ['artifact', artifact?.artifactId ?? '', textOf(artifact?.parts), append, lastChunk];
  }
  return ['other', payload?.$case ?? 'none'];
}

function stepOfLog(type: string, data: Record<string, unknown>): Step | null {
  const text = (parts: unknown): string =>
    Array.isArray(parts)
      ? parts.map((p) => String((p as { text?: string }).text ?? '')).join('')
      : '';
  if (type === 'TaskStatusUpdated') {
    const status = data['status'] as { state: string; message?: { parts?: unknown } };
    return ['status', status.state, text(status.message?.parts)];
  }
  if (type === 'ArtifactChunkAppended') {
    const artifact = data['artifact'] as { artifactId: string; parts?: unknown };
    return [
      'artifact',
      artifact.artifactId,
      text(artifact.parts),
      Boolean(data['append']),
      Boolean(data['lastChunk']),
    ];
  }
  return null;
}

/** The task a client assembles from a snapshot and the updates that follow it (§10.6 append/lastChunk). */
interface AssembledTask {
  task: SdkTask;
  artifacts: Artifact[];
  status: TaskStatus | undefined;
}

function assemble(events: readonly SdkStreamResponse[]): AssembledTask {
  const first = events[0]?.payload;
  if (first?.$case !== 'task') {
    throw new Error(`the first event is not a task: ${JSON.stringify(first)}`);
  }
  const artifacts: Artifact[] = first.value.artifacts.map((a) => ({ ...a, parts: [...a.parts] }));
  let status = first.value.status;
  for (const event of events.slice(1)) {
    const payload = event.payload;
    if (payload?.$case === 'statusUpdate') {
      status = payload.value.status;
    } else if (payload?.$case === 'artifactUpdate') {
      const chunk = payload.value.artifact;
      if (!chunk) {
        throw new Error('artifact update without an artifact');
      }
      const index = artifacts.findIndex((a) => a.artifactId === chunk.artifactId);
      const existing = artifacts[index];
      if (payload.value.append) {
        if (!existing) {
          throw new Error(`append to unknown artifact ${chunk.artifactId}`);
        }
        artifacts[index] = { ...existing, parts: [...existing.parts, ...chunk.parts] };
      } else if (existing) {
        artifacts[index] = { ...chunk, parts: [...chunk.parts] };
      } else {
        artifacts.push({ ...chunk, parts: [...chunk.parts] });
      }
    } else {
      throw new Error(`unexpected event after the snapshot: ${payload?.$case ?? 'none'}`);
    }
  }
  return { task: first.value, artifacts, status };
}

/** Consumes an SDK stream, noting when each event arrived; bounded by `signal`. */
async function consume(
  stream: AsyncGenerator<SdkStreamResponse, void, undefined>,
): Promise<{ events: SdkStreamResponse[]; arrivals: number[] }> {
  const events: SdkStreamResponse[] = [];
  const arrivals: number[] = [];
  for await (const event of stream) {
    events.push(event);
    arrivals.push(Date.now());
  }
  return { events, arrivals };
}

// ---------------------------------------------------------------------------------------------------------
// one standalone platform: SDK, framing, concurrent streams, resumption
// ---------------------------------------------------------------------------------------------------------

describe('streams on the standalone platform', () => {
  let platform: Standalone;
  let countdownClient: Client;
  const url = (agent: string): string => platform.endpoint(TENANT, agent);
  const pool = (): Pool => platform.db.pool;

  beforeAll(async () => {
    platform = await bootStandalone('e2e_streaming');
    countdownClient = await streamingClient(platform.baseUrl, 'countdown');
  });

  afterAll(async () => {
    await platform?.close();
  });

  describe('with the official SDK (§10.6)', () => {
    it('§10.6 SendStreamingMessage: the task first, then status and artifact updates in generation order, COMPLETED last, then the stream ends; the chunks assemble to GetTask', async () => {
      const { events, arrivals } = await consume(
        countdownClient.sendMessageStream(sendRequest(countdownMessage(3, 100)), {
          signal: AbortSignal.timeout(30_000),
        }),
      );
      expect(events.length).toBeGreaterThanOrEqual(8);
      const first = events[0]?.payload;
      expect(first?.$case).toBe('task');
      const snapshot = first?.$case === 'task' ? first.value : null;
      const taskId = snapshot?.id ?? '';
      expect(taskId).not.toBe('');
      // The stream was live: the three 100 ms steps were not delivered at once at the end.
      expect(arrivals[arrivals.length - 1]! - arrivals[0]!).toBeGreaterThanOrEqual(200);

      // Every event after the snapshot is the log's next client-visible event, in generation order.
      const log = await logGenerations(pool(), TENANT, taskId);
      const expected = log
        .filter((g) => g.version > 1)
        .map((g) => stepOfLog(g.type, g.data))
        .filter((s): s is Step => s !== null);
      const seen = events.slice(1).map(stepOfSdk);
      const skipped = expected.length - seen.length;
      expect(seen).toStrictEqual(expected.slice(skipped));
      // A snapshot taken after the worker already reported shows what the skipped events did.
      const snapshotState = taskStateToJSON(
        snapshot?.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED,
      );
      if (skipped === 0) {
        expect(snapshotState).toBe('TASK_STATE_SUBMITTED');
      } else {
        const lastSkippedStatus = expected
          .slice(0, skipped)
          .filter((s) => s[0] === 'status')
          .pop();
        expect(snapshotState).toBe(lastSkippedStatus?.[1]);
      }
      expect(seen[seen.length - 1]?.slice(0, 2)).toStrictEqual(['status', 'TASK_STATE_COMPLETED']);

      // Chunked artifact (§10.6): the first chunk opens it, later ones append, the last says so.
      const chunks = seen.filter((s) => s[0] === 'artifact');
      expect(chunks).toStrictEqual([
        ['artifact', 'countdown', '3', false, false],
        ['artifact', 'countdown', '2', true, false],
        ['artifact', 'countdown', '1', true, true],
      ]);
      const assembled = assemble(events);
      expect(assembled.artifacts.map((a) => a.parts.map((p) => textOf([p])))).toStrictEqual([
        ['3', '2', '1'],
      ]);
      const final = await countdownClient.getTask(GetTaskRequest.fromJSON({ id: taskId }));
      expect(assembled.artifacts.map((a) => Artifact.toJSON(a))).toStrictEqual(
        final.artifacts.map((a) => Artifact.toJSON(a)),
      );
      expect(TaskStatus.toJSON(assembled.status!)).toStrictEqual(TaskStatus.toJSON(final.status!));
      expect(assembled.task.contextId).toBe(final.contextId);
    });

    it('§10.6 resubscribeTask on a running task: the current task snapshot first, then updates until COMPLETED; snapshot + updates equal GetTask', async () => {
      const started = asTask(
        await countdownClient.sendMessage(
          sendRequest(countdownMessage(5, 200), { returnImmediately: true }),
          { signal: AbortSignal.timeout(10_000) },
        ),
      );
      await waitForStreamed(pool(), started.id, 4); // submitted, step 1/5, chunk 5, step 2/5
      const { events } = await consume(
        countdownClient.resubscribeTask(SubscribeToTaskRequest.fromJSON({ id: started.id }), {
          signal: AbortSignal.timeout(30_000),
        }),
      );
      const first = events[0]?.payload;
      expect(first?.$case).toBe('task');
      const snapshot = first?.$case === 'task' ? first.value : null;
      expect(snapshot?.id).toBe(started.id);
      expect(snapshot?.status?.state).toBe(TaskState.TASK_STATE_WORKING);
      // The snapshot already holds the chunks written before it; only later ones follow.
      expect(snapshot?.artifacts[0]?.parts.length ?? 0).toBeGreaterThanOrEqual(1);
      const rest = events.slice(1).map(stepOfSdk);
      expect(rest.length).toBeGreaterThan(0);
      expect(rest.every((s) => s[0] === 'status' || s[0] === 'artifact')).toBe(true);
      expect(rest[rest.length - 1]?.slice(0, 2)).toStrictEqual(['status', 'TASK_STATE_COMPLETED']);
      const assembled = assemble(events);
      expect(assembled.artifacts.map((a) => a.parts.map((p) => textOf([p])))).toStrictEqual([
        ['5', '4', '3', '2', '1'],
      ]);
      const final = await countdownClient.getTask(GetTaskRequest.fromJSON({ id: started.id }));
      expect(assembled.artifacts.map((a) => Artifact.toJSON(a))).toStrictEqual(
        final.artifacts.map((a) => Artifact.toJSON(a)),
      );
      expect(TaskStatus.toJSON(assembled.status!)).toStrictEqual(TaskStatus.toJSON(final.status!));
    });
  });

  describe('raw SSE on the wire (§7.3)', () => {
    it('§7.3 SendStreamingMessage: HTTP 200 text/event-stream; each frame one JSON-RPC success response echoing the id, with id: = generation, strictly increasing; exactly the log', async () => {
      const rpcId = `stream-${randomUUID()}`;
      const stream = await openSse(url('countdown'), streamBody(countdownMessage(3, 100), rpcId));
      expect(stream.status).toBe(200);
      expect(stream.contentType).toMatch(/^text\/event-stream/);
      const frames = await readToEnd(stream);
      const ids = expectFraming(frames, rpcId);
      expect(frames.length).toBeGreaterThanOrEqual(8);
      const first = resultOf(frames[0]!);
      expect(kindOf(first)).toBe('task');
      const taskId = 'task' in first ? first.task.id : '';
      await expectSnapshotAtId(pool(), taskId, frames[0]!);
      await expectLogAfter(pool(), taskId, ids[0]!, frames.slice(1));
      expect(isCompleted(frames[frames.length - 1]!)).toBe(true);
      // The stream closed at COMPLETED, which is the last event of the log.
      const log = await logGenerations(pool(), TENANT, taskId);
      expect(ids[ids.length - 1]).toBe(log[log.length - 1]?.version);
    });

    it('§7.3 a numeric JSON-RPC id is echoed as a number in every frame', async () => {
      const stream = await openSse(url('countdown'), streamBody(countdownMessage(2, 10), 4242));
      const frames = await readToEnd(stream);
      expect(frames.length).toBeGreaterThanOrEqual(3);
      expectFraming(frames, 4242);
    });

    it('§10.6 SubscribeToTask on a running task: the current snapshot (id = its generation), then exactly the later log events to COMPLETED', async () => {
      const task = await startCountdown(url('countdown'), 4, 150);
      await waitForStreamed(pool(), task.id, 3);
      const rpcId = randomUUID();
      const stream = await openSse(url('countdown'), subscribeBody(task.id, rpcId));
      expect(stream.status).toBe(200);
      expect(stream.contentType).toMatch(/^text\/event-stream/);
      // Without the extension, no A2A-Extensions header comes back.
      expect(stream.headers.get('a2a-extensions')).toBeNull();
      const frames = await readToEnd(stream);
      const ids = expectFraming(frames, rpcId);
      await expectSnapshotAtId(pool(), task.id, frames[0]!);
      expect(stateOfResponse(resultOf(frames[0]!))).toBe('TASK_STATE_WORKING');
      await expectLogAfter(pool(), task.id, ids[0]!, frames.slice(1));
      expect(isCompleted(frames[frames.length - 1]!)).toBe(true);
    });

    it('§7.3/§10.6 pre-stream errors are plain JSON-RPC errors, not SSE: unknown task → -32001, terminal task → -32004, unknown taskId in SendStreamingMessage → -32001', async () => {
      const sse = { headers: { Accept: 'text/event-stream' } };
      const unknownId = randomUUID();
      const unknown = await rawRpc(url('countdown'), subscribeBody(unknownId, 'u-1'), sse);
      expectRpcError(unknown, {
        code: -32001,
        reason: 'TASK_NOT_FOUND',
        domain: A2A_DOMAIN,
        id: 'u-1',
      });

      const done = sentTask(
        await rawRpc(url('echo'), request('SendMessage', { message: rawUserMessage('over') })),
      );
      expect(done.status.state).toBe('TASK_STATE_COMPLETED');
      const terminal = await rawRpc(url('echo'), subscribeBody(done.id, 7), sse);
      expectRpcError(terminal, {
        code: -32004,
        reason: 'UNSUPPORTED_OPERATION',
        domain: A2A_DOMAIN,
        id: 7,
      });

      const continueUnknown = await rawRpc(
        url('countdown'),
        streamBody(rawUserMessage('1', { taskId: unknownId }), 'u-2'),
        sse,
      );
      expectRpcError(continueUnknown, {
        code: -32001,
        reason: 'TASK_NOT_FOUND',
        domain: A2A_DOMAIN,
        id: 'u-2',
      });

      // The same through the SSE client: the body is JSON, there are no frames.
      const raw = await openSse(url('countdown'), subscribeBody(unknownId, 'u-3'));
      expect(raw.isEventStream).toBe(false);
      expect(raw.contentType).toMatch(/^application\/json/);
      const body = JSON.parse(await raw.text()) as { id: unknown; error?: { code: number } };
      expect(body.id).toBe('u-3');
      expect(body.error?.code).toBe(-32001);
    });
  });

  describe('several streams on one task (§10.6)', () => {
    it('§10.6 three concurrent subscribers get the same events in the same order; aborting one mid-stream affects no other', async () => {
      const task = await startCountdown(url('countdown'), 10, 150);
      await waitForStreamed(pool(), task.id, 2);
      const rpcIds = ['s-1', 's-2', 's-3'];
      const streams = await Promise.all(
        rpcIds.map((id) => openSse(url('countdown'), subscribeBody(task.id, id))),
      );
      const [one, two, three] = streams as [SseConnection, SseConnection, SseConnection];
      // Client two leaves after its snapshot and three updates; the others read to the end meanwhile.
      const leaving = (async () => {
        const read: SseFrame[] = [];
        for (let i = 0; i < 4; i++) {
          const frame = await two.next();
          if (frame === null) {
            throw new Error('stream two ended early');
          }
          read.push(frame);
        }
        two.abort();
        return read;
      })();
      const [framesOne, framesTwo, framesThree] = await Promise.all([
        readToEnd(one),
        leaving,
        readToEnd(three),
      ]);
      const idsOne = expectFraming(framesOne, 's-1');
      const idsTwo = expectFraming(framesTwo, 's-2');
      const idsThree = expectFraming(framesThree, 's-3');
      for (const [frames, ids] of [
        [framesOne, idsOne],
        [framesThree, idsThree],
      ] as const) {
        await expectSnapshotAtId(pool(), task.id, frames[0]!);
        await expectLogAfter(pool(), task.id, ids[0]!, frames.slice(1));
        expect(isCompleted(frames[frames.length - 1]!)).toBe(true);
      }
      // The same events in the same order: every generation two streams both carried is the same event.
      const common = Math.max(idsOne[0]!, idsThree[0]!);
      const tail = (frames: SseFrame[]) =>
        frames.filter((f) => generationOf(f) > common).map((f) => [f.id, resultOf(f)]);
      expect(tail(framesOne)).toStrictEqual(tail(framesThree));
      expect(tail(framesOne).length).toBeGreaterThanOrEqual(10);
      const byId = new Map(framesOne.map((f) => [f.id, resultOf(f)]));
      for (const frame of framesTwo.slice(1)) {
        expect(byId.get(frame.id), `frame ${frame.id} of the aborted stream`).toEqual(
          resultOf(frame),
        );
      }
      expect(idsTwo.length).toBe(4);
    });

    it('§10.6 the task outlives its streams: all streams closed early, the task still completes with every chunk', async () => {
      const rpcId = randomUUID();
      const sending = await openSse(url('countdown'), streamBody(countdownMessage(6, 100), rpcId));
      const first = await sending.next();
      expect(first).not.toBeNull();
      const taskId =
        'task' in resultOf(first!) ? (resultOf(first!) as { task: WireTask }).task.id : '';
      const subscribers = await Promise.all(
        [1, 2].map(() => openSse(url('countdown'), subscribeBody(taskId))),
      );
      for (const subscriber of subscribers) {
        expect(kindOf(resultOf((await subscriber.next())!))).toBe('task');
        subscriber.abort();
      }
      sending.abort();
      const final = await eventually(
        () => getTask(url('countdown'), taskId),
        (t) => t.status.state === 'TASK_STATE_COMPLETED',
        20_000,
      );
      expect(final.artifacts?.[0]?.parts.map((p) => ('text' in p ? p.text : ''))).toStrictEqual([
        '6',
        '5',
        '4',
        '3',
        '2',
        '1',
      ]);
      const log = await logGenerations(pool(), TENANT, taskId);
      expect(log.map((g) => g.type)).not.toContain('TaskCancelRequested');
    });

    it('§10.6 / ADR 0008 forty open streams of a running task cost no log read in the process that commits its changes, and none once their clients are gone', async () => {
      const SUBSCRIBERS = 40;
      const WINDOW_MS = 3_000;
      /** Events the task must append during a window for the window to say anything. */
      const MOVES = 4;
      // A step every 500 ms (a WORKING status and an artifact chunk), for longer than both windows below
      // (it is canceled after them).
      const task = await startCountdown(url('countdown'), 100, 500);
      await waitForStreamed(pool(), task.id, 2);
      /**
       * Log reads of a task stream by the ingress feed (`TaskLog.eventsAfter` of @lib/event-store) that start
       * during one window, seen live in pg_stat_activity (sampled every 20 ms; pg_stat_database would report
       * them seconds late), and the events appended to the task's stream in that window. The test makes one
       * such read itself, on a connection it keeps idle for the window: seeing it proves that the sampling
       * sees the feed's reads; it is not counted among them. A window lasts WINDOW_MS and, on a machine too
       * busy for the task to move that fast, longer: until the task appended MOVES events (30 s at most).
       */
      const window = async (): Promise<{ reads: number; appended: number; probed: boolean }> => {
        const startedAfter = new Date();
        const seen = new Set<string>();
        const probe = await pool().connect();
        try {
          const probePid = (await probe.query<{ pid: number }>('SELECT pg_backend_pid() AS pid'))
            .rows[0]?.pid;
          await new TaskLog(probe).eventsAfter(
            { tenantId: tenantIdOf('demo'), streamId: `task:demo:${task.id}` },
            0,
            1,
          );
          const appendedSince = async (): Promise<number> =>
            (
              await pool().query<{ n: number }>(
                `SELECT count(*)::int AS n FROM events.messages
                  WHERE stream_id LIKE '%' || $1 AND recorded_at > $2`,
                [`:${task.id}`, startedAfter],
              )
            ).rows[0]?.n ?? 0;
          const longest = startedAfter.getTime() + WINDOW_MS + 30_000;
          while (
            Date.now() - startedAfter.getTime() < WINDOW_MS ||
            ((await appendedSince()) < MOVES && Date.now() < longest)
          ) {
            const rows = await pool().query<{ pid: number; started: string }>(
              `SELECT pid, query_start::text AS started FROM pg_stat_activity
                WHERE datname = current_database() AND pid <> pg_backend_pid()
                  AND query LIKE 'SELECT stream_version, event_type, schema_version, data FROM events.messages%'
                  AND query LIKE '%stream_version > $3%' AND query_start > $1`,
              [startedAfter],
            );
            rows.rows.forEach((r) => seen.add(`${r.pid}@${r.started}`));
            await sleep(20);
          }
          const appended = await appendedSince();
          const probed = [...seen].some((read) => read.startsWith(`${probePid}@`));
          return { reads: seen.size - (probed ? 1 : 0), appended, probed };
        } finally {
          probe.release();
        }
      };
      const streams = await Promise.all(
        Array.from({ length: SUBSCRIBERS }, () =>
          openSse(url('countdown'), subscribeBody(task.id)),
        ),
      );
      for (const stream of streams) {
        expect(kindOf(resultOf((await stream.next())!))).toBe('task');
      }
      const open = await window();
      streams.forEach((stream) => stream.abort());
      await sleep(1_500);
      const left = await window();
      const canceled = taskResult(
        await rawRpc(url('countdown'), request('CancelTask', { id: task.id })),
      );
      expect(canceled.status.state).toBe('TASK_STATE_CANCELED');
      const reads = `in windows of ${WINDOW_MS} ms or more: ${SUBSCRIBERS} open streams: ${open.reads} log reads for ${open.appended} appended events; after they left: ${left.reads} for ${left.appended}`;
      // The measure sees reads (the test's own)…
      expect([open.probed, left.probed], reads).toStrictEqual([true, true]);
      // …and the feed makes none while the task moves: the changes are committed in this process, which
      // hands them to the feed (a separate ingress reads once per change: task-event-feed.int.spec.ts)…
      expect(open.appended, reads).toBeGreaterThanOrEqual(MOVES);
      expect(open.reads, reads).toBeLessThanOrEqual(1);
      // …nor once the clients are gone, although the task still moves.
      expect(left.appended, reads).toBeGreaterThanOrEqual(MOVES);
      expect(left.reads, reads).toBeLessThanOrEqual(1);
    });
  });

  describe(`resumable-streams extension ${RESUMABLE} (§10.2; DESIGN "Live updates across replicas")`, () => {
    const resumeHeaders = (lastId: number | string): Record<string, string> => ({
      'A2A-Extensions': RESUMABLE,
      'Last-Event-ID': String(lastId),
    });

    it('§10.2 resume without loss: after a disconnect, Last-Event-ID gets exactly the missed events (no snapshot, no duplicate), then live ones to COMPLETED; the header is echoed', async () => {
      const rpcId = randomUUID();
      const before = await openSse(url('countdown'), streamBody(countdownMessage(8, 150), rpcId));
      const seenBefore: SseFrame[] = [];
      for (let i = 0; i < 4; i++) {
        const frame = await before.next();
        expect(frame).not.toBeNull();
        seenBefore.push(frame!);
      }
      before.abort();
      const idsBefore = expectFraming(seenBefore, rpcId);
      const snapshot = resultOf(seenBefore[0]!);
      expect(kindOf(snapshot)).toBe('task');
      const taskId = 'task' in snapshot ? snapshot.task.id : '';
      const lastSeen = idsBefore[idsBefore.length - 1]!;
      // Let the task move on while no one listens: at least two events are missed.
      const visible = await streamedGenerations(pool(), TENANT, taskId);
      const seenCount = visible.filter((g) => g <= lastSeen).length;
      await waitForStreamed(pool(), taskId, seenCount + 2);

      const resumeId = randomUUID();
      const after = await openSse(url('countdown'), subscribeBody(taskId, resumeId), {
        headers: resumeHeaders(lastSeen),
      });
      expect(after.status).toBe(200);
      expect(after.contentType).toMatch(/^text\/event-stream/);
      expect(
        after.headers
          .get('a2a-extensions')
          ?.split(',')
          .map((s) => s.trim()),
      ).toContain(RESUMABLE);
      const resumed = await readToEnd(after);
      const idsAfter = expectFraming(resumed, resumeId);
      expect(resumed.length).toBeGreaterThan(0);
      expect(kindOf(resultOf(resumed[0]!))).not.toBe('task');
      expect(idsAfter.every((id) => id > lastSeen)).toBe(true);
      expect(isCompleted(resumed[resumed.length - 1]!)).toBe(true);
      await expectLogAfter(pool(), taskId, lastSeen, resumed);
      // The union of both connections is the whole visible log after the first snapshot, once each.
      const union = [...idsBefore, ...idsAfter];
      expect(new Set(union).size).toBe(union.length);
      const expected = (await streamedGenerations(pool(), TENANT, taskId)).filter(
        (g) => g > idsBefore[0]!,
      );
      expect(union.slice(1)).toStrictEqual(expected);
    });

    it('§10.2 without the extension (or with an unknown one), Last-Event-ID is ignored: the current task snapshot comes first and no A2A-Extensions header', async () => {
      const task = await startCountdown(url('countdown'), 6, 150);
      await waitForStreamed(pool(), task.id, 4);
      const cases: Record<string, string>[] = [
        { 'Last-Event-ID': '1' },
        {
          'A2A-Extensions': 'https://a2a-platform.dev/extensions/resumable-streams/v0',
          'Last-Event-ID': '1',
        },
      ];
      for (const headers of cases) {
        const stream = await openSse(url('countdown'), subscribeBody(task.id), { headers });
        expect(stream.status).toBe(200);
        expect(stream.headers.get('a2a-extensions')).toBeNull();
        const first = await stream.next();
        stream.abort();
        expect(first).not.toBeNull();
        await expectSnapshotAtId(pool(), task.id, first!);
        expect(generationOf(first!)).toBeGreaterThan(1);
      }
      // Terminal task, no extension: Last-Event-ID does not make it resumable (still -32004, not SSE).
      const done = await eventually(
        () => getTask(url('countdown'), task.id),
        (t) => t.status.state === 'TASK_STATE_COMPLETED',
        20_000,
      );
      const reply = await rawRpc(url('countdown'), subscribeBody(done.id, 'x'), {
        headers: { 'Last-Event-ID': '1', Accept: 'text/event-stream' },
      });
      expectRpcError(reply, {
        code: -32004,
        reason: 'UNSUPPORTED_OPERATION',
        domain: A2A_DOMAIN,
        id: 'x',
      });
    });

    it('§10.2 resuming a COMPLETED task replays exactly the events after Last-Event-ID and closes; from its final id the stream is empty and closes; from 0 it replays the whole log', async () => {
      const whole = await readToEnd(
        await openSse(url('countdown'), streamBody(countdownMessage(4, 10))),
      );
      const first = resultOf(whole[0]!);
      const taskId = 'task' in first ? first.task.id : '';
      const visible = await streamedGenerations(pool(), TENANT, taskId);
      const finalId = generationOf(whole[whole.length - 1]!);
      expect(finalId).toBe(visible[visible.length - 1]);

      const from = visible[3]!;
      const replay = await openSse(url('countdown'), subscribeBody(taskId, 'r-1'), {
        headers: resumeHeaders(from),
      });
      expect(replay.status).toBe(200);
      expect(replay.headers.get('a2a-extensions')).toContain(RESUMABLE);
      const replayed = await readToEnd(replay, 10_000);
      expectFraming(replayed, 'r-1');
      await expectLogAfter(pool(), taskId, from, replayed);
      expect(isCompleted(replayed[replayed.length - 1]!)).toBe(true);

      const empty = await openSse(url('countdown'), subscribeBody(taskId, 'r-2'), {
        headers: resumeHeaders(finalId),
      });
      expect(empty.status).toBe(200);
      expect(empty.contentType).toMatch(/^text\/event-stream/);
      expect(empty.headers.get('a2a-extensions')).toContain(RESUMABLE);
      expect(await readToEnd(empty, 5_000)).toStrictEqual([]);

      const all = await readToEnd(
        await openSse(url('countdown'), subscribeBody(taskId, 'r-3'), {
          headers: resumeHeaders(0),
        }),
        10_000,
      );
      expectFraming(all, 'r-3');
      await expectLogAfter(pool(), taskId, 0, all);
    });
  });
});

// ---------------------------------------------------------------------------------------------------------
// across replicas
// ---------------------------------------------------------------------------------------------------------

describe('across replicas: ingress I1 → task-service A only, I2 → B only, workers on B only (DESIGN "Live updates across replicas")', () => {
  let db: TestDatabase | undefined;
  const processes: PlatformProcess[] = [];
  let i1: string;
  let i2: string;
  const endpoint = (base: string, agent: string): string => jsonRpcUrl(base, TENANT, agent);

  beforeAll(async () => {
    db = await createTestDatabase('e2e_streaming_replicas');
    const agents: ExampleAgentId[] = ['echo', 'interview', 'countdown'];
    await seedTenant(db.pool, {
      tenantId: TENANT,
      displayName: 'Demo tenant',
      apiKeys: [{ keyId: 'demo-default', principalId: 'demo-user', secret: API_KEY }],
      agents: agents.map((agentId) => ({
        agentId,
        profile: AGENT_PROFILES[agentId],
        onLeaseLost: 'redispatch',
        maxAttempts: 3,
        workerSecret: `demo-worker-secret:${agentId}`,
      })),
    });
    const replicaA = await startTaskService({ POSTGRES_URL: db.url, REPLICA_ID: 'replica-a' });
    processes.push(replicaA.process);
    const replicaB = await startTaskService({ POSTGRES_URL: db.url, REPLICA_ID: 'replica-b' });
    processes.push(replicaB.process);
    const ingress1 = await startIngress({ POSTGRES_URL: db.url }, [replicaA.commandTarget]);
    processes.push(ingress1.process);
    const ingress2 = await startIngress({ POSTGRES_URL: db.url }, [replicaB.commandTarget]);
    processes.push(ingress2.process);
    i1 = ingress1.baseUrl;
    i2 = ingress2.baseUrl;
    for (const agent of ['echo', 'countdown']) {
      processes.push(
        await startAgentWorker(agent, replicaB.workerTarget, `demo-worker-secret:${agent}`),
      );
    }
  });

  afterAll(async () => {
    for (const process of [...processes].reverse()) {
      await process.stop();
    }
    await db?.drop();
  });

  it('§10.6 SendStreamingMessage through I1 (accepted by A, executed via B) streams to COMPLETED; a concurrent SubscribeToTask through I2 sees the same tail', async () => {
    const pool = db!.pool;
    const sending = await openSse(
      endpoint(i1, 'countdown'),
      streamBody(countdownMessage(8, 150), 'i1'),
    );
    expect(sending.status).toBe(200);
    const head = await sending.until((f) => stateOfResponse(resultOf(f)) === 'TASK_STATE_WORKING');
    const first = resultOf(head[0]!);
    const taskId = 'task' in first ? first.task.id : '';
    const watching = await openSse(endpoint(i2, 'countdown'), subscribeBody(taskId, 'i2'));
    expect(watching.status).toBe(200);
    const [rest, watched] = await Promise.all([readToEnd(sending), readToEnd(watching)]);
    const sent = [...head, ...rest];
    const idsSent = expectFraming(sent, 'i1');
    const idsWatched = expectFraming(watched, 'i2');
    await expectSnapshotAtId(pool, taskId, sent[0]!);
    await expectLogAfter(pool, taskId, idsSent[0]!, sent.slice(1));
    await expectSnapshotAtId(pool, taskId, watched[0]!);
    await expectLogAfter(pool, taskId, idsWatched[0]!, watched.slice(1));
    expect(isCompleted(sent[sent.length - 1]!)).toBe(true);
    expect(isCompleted(watched[watched.length - 1]!)).toBe(true);
    const tail = (frames: SseFrame[]) =>
      frames.filter((f) => generationOf(f) > idsWatched[0]!).map((f) => [f.id, resultOf(f)]);
    expect(tail(watched)).toStrictEqual(tail(sent));
    expect(tail(watched).length).toBeGreaterThanOrEqual(8);
    // The path really crossed replicas: A took the message, B granted the lease.
    const provenance = await pool.query<{ event_type: string; actor: string }>(
      `SELECT event_type, metadata->'actor'->>'id' AS actor FROM events.messages
        WHERE tenant_id = $1 AND stream_id = $2 AND event_type = 'TaskLeaseGranted'`,
      [TENANT, `task:${TENANT}:${taskId}`],
    );
    expect(provenance.rows.map((r) => r.actor)).toStrictEqual(['replica-b']);
  });

  it('§10.4 a blocking SendMessage to echo through I1 completes via the worker on B', async () => {
    const client = await streamingClient(i1, 'echo');
    const task = asTask(
      await client.sendMessage(sendRequest(rawUserMessage('over the replicas')), {
        signal: AbortSignal.timeout(20_000),
      }),
    );
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(task.artifacts[0]?.parts)).toBe('over the replicas');
  });
});

// ---------------------------------------------------------------------------------------------------------
// a small pending bound
// ---------------------------------------------------------------------------------------------------------

describe('STREAM_MAX_PENDING_EVENTS=5 (bounded subscriber buffers)', () => {
  let platform: Standalone;
  const url = (agent: string): string => platform.endpoint(TENANT, agent);
  let completedTaskId = '';

  beforeAll(async () => {
    platform = await bootStandalone('e2e_streaming_bound', { STREAM_MAX_PENDING_EVENTS: '5' });
  });

  afterAll(async () => {
    await platform?.close();
  });

  it('§10.6 a client that keeps up gets every event of a long task although it is longer than the bound', async () => {
    const stream = await openSse(url('countdown'), streamBody(countdownMessage(30, 50), 'keep-up'));
    const frames = await readToEnd(stream, 30_000);
    expect(frames.filter((f) => f.event === 'error')).toStrictEqual([]);
    const ids = expectFraming(frames, 'keep-up');
    const first = resultOf(frames[0]!);
    completedTaskId = 'task' in first ? first.task.id : '';
    await expectLogAfter(platform.db.pool, completedTaskId, ids[0]!, frames.slice(1));
    expect(frames.length).toBeGreaterThan(60);
    expect(isCompleted(frames[frames.length - 1]!)).toBe(true);
  });

  it('DESIGN "a subscriber that reconnects catches up from the log": resuming with Last-Event-ID when more than the bound was missed still delivers every missed event', async () => {
    expect(completedTaskId).not.toBe('');
    const stream = await openSse(url('countdown'), subscribeBody(completedTaskId, 'catch-up'), {
      headers: { 'A2A-Extensions': RESUMABLE, 'Last-Event-ID': '1' },
    });
    expect(stream.status).toBe(200);
    const frames = await readToEnd(stream, 10_000);
    // The platform told an overflowed client to "resume with SubscribeToTask and Last-Event-ID"; a resume
    // whose backlog exceeds the bound must not be cut off again, or the client can never catch up.
    expect(
      frames.filter((f) => f.event === 'error').map((f) => f.data),
      'the resumed stream was cut off',
    ).toStrictEqual([]);
    expectFraming(frames, 'catch-up');
    await expectLogAfter(platform.db.pool, completedTaskId, 1, frames);
  });
});

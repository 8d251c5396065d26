import {
  status as GrpcStatus,
  Metadata,
  Server,
  ServerCredentials,
  type sendUnaryData,
  type ServerDuplexStream,
  type ServerUnaryCall,
} from '@grpc/grpc-js';
import { a2aPb, workerPb } from '@lib/a2a-protocol';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentExecutor, RequestContext } from './agent-executor';
import { AgentWorker, type AgentWorkerOptions } from './agent-worker';
import type { WorkerLogger } from './worker-logger';
import { WorkerError } from './worker.errors';

const silent: WorkerLogger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

interface ReceivedUpdate {
  request: workerPb.PublishUpdateRequest;
  workerId: string;
  authorization: string;
}

type Reply = { code: GrpcStatus; reason: string } | undefined;

/** A scriptable WorkerService over real gRPC, standing in for the task-service. */
class FakePlatform {
  readonly hellos: { hello: workerPb.Hello; authorization: string }[] = [];
  readonly heartbeats: workerPb.LeaseRef[][] = [];
  readonly updates: ReceivedUpdate[] = [];
  /** ReleaseLease calls, with whether a session was still open when each arrived. */
  readonly releases: { request: workerPb.ReleaseLeaseRequest; sessionOpen: boolean }[] = [];
  /** Answers to the next update requests (PublishUpdate calls, PublishUpdates entries); success once empty. */
  readonly replies: Reply[] = [];
  private readonly sessions: ServerDuplexStream<
    workerPb.WorkerMessage,
    workerPb.PlatformMessage
  >[] = [];
  private server: Server | undefined;
  port = 0;

  constructor(
    private readonly workerIdPrefix = 'w',
    private readonly refuse = false,
  ) {}

  /** Batches of update requests received: PublishUpdates calls and SessionUpdates on a session. */
  publishCalls = 0;
  /** PublishUpdate and PublishUpdates calls (updates not sent on the session). */
  unaryCalls = 0;

  /** Records an update request and answers it with the next scripted reply. */
  private receive(
    request: workerPb.PublishUpdateRequest,
    from: { workerId: string; authorization: string },
  ): workerPb.PublishOutcome {
    this.updates.push({ request, ...from });
    const reply = this.replies.shift();
    return reply
      ? { code: reply.code, version: 0, reason: reply.reason, message: reply.reason }
      : { code: GrpcStatus.OK, version: this.updates.length, reason: '', message: '' };
  }

  async start(port = 0): Promise<void> {
    const server = new Server();
    server.addService(workerPb.WorkerServiceService, {
      connect: (call: ServerDuplexStream<workerPb.WorkerMessage, workerPb.PlatformMessage>) =>
        this.onConnect(call),
      publishUpdate: (
        call: ServerUnaryCall<workerPb.PublishUpdateRequest, workerPb.PublishUpdateResponse>,
        callback: sendUnaryData<workerPb.PublishUpdateResponse>,
      ) => {
        this.unaryCalls += 1;
        const outcome = this.receive(call.request, caller(call.metadata));
        if (outcome.code === (GrpcStatus.OK as number)) {
          callback(null, { version: outcome.version });
          return;
        }
        const trailers = new Metadata();
        trailers.set('x-error-reason', outcome.reason);
        callback({ code: outcome.code, details: outcome.reason, metadata: trailers });
      },
      publishUpdates: (
        call: ServerUnaryCall<workerPb.PublishUpdatesRequest, workerPb.PublishUpdatesResponse>,
        callback: sendUnaryData<workerPb.PublishUpdatesResponse>,
      ) => {
        this.publishCalls += 1;
        this.unaryCalls += 1;
        callback(null, {
          outcomes: call.request.requests.map((request) =>
            this.receive(request, caller(call.metadata)),
          ),
        });
      },
      releaseLease: (
        call: ServerUnaryCall<workerPb.ReleaseLeaseRequest, workerPb.ReleaseLeaseResponse>,
        callback: sendUnaryData<workerPb.ReleaseLeaseResponse>,
      ) => {
        const sessionOpen = this.sessions.some((session) => !session.closed && !session.destroyed);
        this.releases.push({ request: call.request, sessionOpen });
        callback(null, { version: this.updates.length + 1 });
      },
    } satisfies workerPb.WorkerServiceServer);
    this.port = await new Promise<number>((resolve, reject) =>
      server.bindAsync(`127.0.0.1:${port}`, ServerCredentials.createInsecure(), (error, bound) =>
        error ? reject(error) : resolve(bound),
      ),
    );
    this.server = server;
  }

  /** Like SIGKILL: every stream and call breaks at once. */
  kill(): void {
    this.server?.forceShutdown();
    this.server = undefined;
    this.sessions.length = 0;
  }

  send(message: workerPb.PlatformMessage): void {
    const session = this.sessions.at(-1);
    if (!session) {
      throw new Error('no worker session');
    }
    session.write(message);
  }

  assign(taskId: string, leaseEpoch = 1, text = 'hi'): void {
    this.send({ assignment: this.assignment(taskId, leaseEpoch, text) });
  }

  /** Several assignments in one `assignments` message, as the platform sends tasks granted together. */
  assignTogether(taskIds: string[]): void {
    this.send({ assignments: { assignments: taskIds.map((taskId) => this.assignment(taskId)) } });
  }

  private assignment(taskId: string, leaseEpoch = 1, text = 'hi'): workerPb.Assignment {
    return {
      taskId,
      contextId: `ctx-${taskId}`,
      leaseEpoch,
      leaseExpiresAt: new Date(Date.now() + 1_000).toISOString(),
      task: a2aPb.Task.fromJSON({
        id: taskId,
        contextId: `ctx-${taskId}`,
        status: { state: 'TASK_STATE_SUBMITTED' },
        history: [{ messageId: 'u1', role: 'ROLE_USER', parts: [{ text }] }],
      }),
      message: a2aPb.Message.fromJSON({ messageId: 'u1', role: 'ROLE_USER', parts: [{ text }] }),
      attempt: 1,
      mayReply: false,
      traceparent: '',
    };
  }

  statuses(taskId: string): string[] {
    return this.updates
      .filter((u) => u.request.taskId === taskId)
      .map((u) =>
        u.request.status
          ? u.request.status.state.replace('TASK_STATE_', '')
          : u.request.artifact
            ? 'artifact'
            : 'message',
      );
  }

  private onConnect(
    call: ServerDuplexStream<workerPb.WorkerMessage, workerPb.PlatformMessage>,
  ): void {
    const authorization = String(call.metadata.get('authorization')[0] ?? '');
    if (this.refuse) {
      // grpc-js turns `call.destroy(error)` into CANCELLED on the client; emitting 'error' sends the code.
      call.emit(
        'error',
        Object.assign(new Error('invalid worker credential'), { code: GrpcStatus.UNAUTHENTICATED }),
      );
      return;
    }
    call.on('data', (message: workerPb.WorkerMessage) => {
      if (message.hello) {
        this.hellos.push({ hello: message.hello, authorization });
        this.sessions.push(call);
        call.write({
          welcome: {
            workerId: `${this.workerIdPrefix}${this.hellos.length}`,
            tenantId: 'tenant',
            agentId: 'agent',
            heartbeatIntervalMs: 50,
            // Far longer than a test: no lease is given up for a lack of renewal, however long a restart takes.
            leaseTtlMs: 60_000,
          },
        });
      } else if (message.heartbeat) {
        this.heartbeats.push(message.heartbeat.leases);
      } else if (message.updates) {
        this.publishCalls += 1;
        const from = { workerId: `${this.workerIdPrefix}${this.hellos.length}`, authorization };
        call.write({
          updatesApplied: {
            batchId: message.updates.batchId,
            outcomes: message.updates.requests.map((request) => this.receive(request, from)),
          },
        });
      }
    });
    call.on('end', () => call.end());
    call.on('error', () => undefined);
  }
}

/** Who sent a unary update call: its `x-worker-id` and `authorization` metadata. */
function caller(metadata: Metadata): { workerId: string; authorization: string } {
  return {
    workerId: String(metadata.get('x-worker-id')[0] ?? ''),
    authorization: String(metadata.get('authorization')[0] ?? ''),
  };
}

async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** An executor whose `execute` reports WORKING and then waits until the test releases it (or it aborts). */
class GatedExecutor implements AgentExecutor {
  readonly contexts = new Map<string, RequestContext>();
  /** Tasks whose WORKING the SDK has seen stored (the platform's answer arrived). */
  readonly working = new Set<string>();
  private readonly gates = new Map<string, { opened: Promise<void>; open: () => void }>();

  async execute(
    context: RequestContext,
    events: Parameters<AgentExecutor['execute']>[1],
  ): Promise<void> {
    this.contexts.set(context.taskId, context);
    await events.working('started');
    this.working.add(context.taskId);
    const gate = this.gate(context.taskId);
    context.signal.addEventListener('abort', gate.open);
    await gate.opened;
  }

  release(taskId: string): void {
    this.gate(taskId).open();
  }

  private gate(taskId: string): { opened: Promise<void>; open: () => void } {
    let gate = this.gates.get(taskId);
    if (!gate) {
      let open = (): void => undefined;
      const opened = new Promise<void>((resolve) => (open = resolve));
      gate = { opened, open };
      this.gates.set(taskId, gate);
    }
    return gate;
  }
}

const workers: AgentWorker[] = [];
const platforms: FakePlatform[] = [];

async function setUp(
  options: Partial<AgentWorkerOptions> = {},
  platform = new FakePlatform(),
): Promise<{
  platform: FakePlatform;
  worker: AgentWorker;
  executor: GatedExecutor;
  running: Promise<void>;
}> {
  await platform.start();
  platforms.push(platform);
  const executor = new GatedExecutor();
  const worker = AgentWorker.create({
    target: `127.0.0.1:${platform.port}`,
    credential: 's3cret',
    executor,
    identity: 'test-worker',
    maxConcurrentTasks: 3,
    shutdownGraceMs: 200,
    logger: silent,
    ...options,
  });
  workers.push(worker);
  const running = worker.run();
  running.catch(() => undefined);
  return { platform, worker, executor, running };
}

afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.shutdown()));
  for (const platform of platforms.splice(0)) {
    platform.kill();
  }
});

describe('AgentWorker against a WorkerService', () => {
  it('says hello, runs an assignment, heartbeats its lease and completes it', async () => {
    const { platform, worker, executor } = await setUp();
    expect(worker.state).toBe('RUNNING');
    await until(() => platform.hellos.length === 1, 'hello');
    expect(platform.hellos[0]).toEqual({
      hello: {
        identity: 'test-worker',
        maxConcurrentTasks: 3,
        leases: [],
        takesAssignmentBatches: true,
      },
      authorization: 'Bearer s3cret',
    });

    platform.assign('t1', 7);
    await until(() => platform.statuses('t1').length === 1, 'WORKING');
    await until(
      () =>
        platform.heartbeats.some((leases) =>
          leases.some((l) => l.taskId === 't1' && l.leaseEpoch === 7),
        ),
      'a heartbeat with the lease',
    );
    executor.release('t1');
    await until(() => platform.statuses('t1').length === 2, 'COMPLETED');

    expect(platform.statuses('t1')).toEqual(['WORKING', 'COMPLETED']);
    // Both went on the session the platform welcomed, not as calls of their own.
    expect(platform.unaryCalls).toBe(0);
    expect(
      platform.updates.map((u) => [u.request.leaseEpoch, u.workerId, u.authorization]),
    ).toEqual([
      [7, 'w1', 'Bearer s3cret'],
      [7, 'w1', 'Bearer s3cret'],
    ]);
    const seen = platform.heartbeats.length;
    await until(() => platform.heartbeats.length > seen + 1, 'more heartbeats');
    expect(platform.heartbeats.at(-1)).toEqual([]);
  });

  it('sends the updates of tasks that finish together in one PublishUpdates call, each with its outcome', async () => {
    const { platform, executor } = await setUp();
    await until(() => platform.hellos.length === 1, 'hello');
    for (const taskId of ['t1', 't2', 't3']) {
      platform.assign(taskId);
    }
    // Answered, not only received: a WORKING still awaiting its answer would hold its task's COMPLETED back
    // for a call of its own.
    await until(
      () => ['t1', 't2', 't3'].every((id) => executor.working.has(id)),
      'three WORKING answered',
    );
    const callsBefore = platform.publishCalls;
    // t2's COMPLETED fails (UNAVAILABLE) and is sent again; the others are applied.
    platform.replies.push(undefined, { code: GrpcStatus.UNAVAILABLE, reason: 'UNAVAILABLE' });
    for (const taskId of ['t1', 't2', 't3']) {
      executor.release(taskId);
    }
    await until(() => platform.statuses('t2').length === 3, 't2 COMPLETED sent again');
    expect(platform.updates.slice(-4, -1).map((u) => u.request.taskId)).toEqual(['t1', 't2', 't3']);
    expect(platform.publishCalls - callsBefore).toBe(2);
    expect(['t1', 't2', 't3'].map((id) => platform.statuses(id))).toEqual([
      ['WORKING', 'COMPLETED'],
      ['WORKING', 'COMPLETED', 'COMPLETED'],
      ['WORKING', 'COMPLETED'],
    ]);
    const retried = platform.updates.at(-1)?.request;
    const first = platform.updates.at(-3)?.request;
    expect(retried?.updateId).toBe(first?.updateId);
  });

  it('runs every assignment of an assignments message, and reports what they produce together', async () => {
    const { platform, executor } = await setUp();
    await until(() => platform.hellos.length === 1, 'hello');
    const callsBefore = platform.publishCalls;
    platform.assignTogether(['t1', 't2', 't3']);
    await until(
      () => ['t1', 't2', 't3'].every((id) => executor.working.has(id)),
      'three WORKING answered',
    );
    // Started in one turn, the three WORKING statuses went out in one batch.
    expect(platform.updates.map((u) => u.request.taskId)).toEqual(['t1', 't2', 't3']);
    expect(platform.publishCalls - callsBefore).toBe(1);
    for (const taskId of ['t1', 't2', 't3']) {
      executor.release(taskId);
    }
    await until(() => platform.statuses('t3').length === 2, 't3 COMPLETED');
    expect(['t1', 't2', 't3'].map((id) => platform.statuses(id))).toEqual([
      ['WORKING', 'COMPLETED'],
      ['WORKING', 'COMPLETED'],
      ['WORKING', 'COMPLETED'],
    ]);
  });

  it('survives a platform restart: reconnects, re-announces its leases and retries a failed update', async () => {
    const { platform, executor } = await setUp();
    await until(() => platform.hellos.length === 1, 'hello');
    platform.assign('t1', 2);
    platform.assign('t2', 3);
    await until(
      () => platform.statuses('t1').length + platform.statuses('t2').length === 2,
      'WORKING twice',
    );

    const port = platform.port;
    platform.kill();
    executor.release('t1');
    await new Promise((resolve) => setTimeout(resolve, 300));

    const restarted = new FakePlatform('again-');
    platforms.push(restarted);
    await restarted.start(port);
    await until(() => restarted.hellos.length === 1, 'a second hello');
    // The new session learns at once which leases the worker still runs.
    expect(restarted.hellos[0]?.hello.leases).toContainEqual({ taskId: 't2', leaseEpoch: 3 });
    await until(() => restarted.statuses('t1').length === 1, 'the retried COMPLETED of t1');
    await until(
      () =>
        restarted.heartbeats.some((leases) =>
          leases.some((l) => l.taskId === 't2' && l.leaseEpoch === 3),
        ),
      'a heartbeat renewing t2 on the new session',
    );
    executor.release('t2');
    await until(() => restarted.statuses('t2').length === 1, 'COMPLETED of t2');

    expect(restarted.statuses('t1')).toEqual(['COMPLETED']);
    expect(restarted.updates.find((u) => u.request.taskId === 't2')).toMatchObject({
      workerId: 'again-1',
      request: { leaseEpoch: 3 },
    });
    expect(executor.contexts.get('t2')?.signal.aborted).toBe(false);
  });

  it('publishes CANCELED after a cancel request', async () => {
    const { platform, executor } = await setUp();
    await until(() => platform.hellos.length === 1, 'hello');
    platform.assign('t1', 1);
    await until(() => platform.statuses('t1').length === 1, 'WORKING');
    platform.send({ cancel: { taskId: 't1', leaseEpoch: 1 } });
    await until(() => platform.statuses('t1').length === 2, 'CANCELED');
    expect(platform.statuses('t1')).toEqual(['WORKING', 'CANCELED']);
    expect((executor.contexts.get('t1')?.signal.reason as WorkerError).reason).toBe(
      'TASK_CANCELED',
    );
  });

  it('ignores a cancel for an older lease epoch', async () => {
    const { platform, executor } = await setUp();
    await until(() => platform.hellos.length === 1, 'hello');
    platform.assign('t1', 5);
    await until(() => platform.statuses('t1').length === 1, 'WORKING');
    platform.send({ cancel: { taskId: 't1', leaseEpoch: 4 } });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(executor.contexts.get('t1')?.signal.aborted).toBe(false);
  });

  it('stops a task without publishing when its lease is revoked or lost', async () => {
    const { platform, executor } = await setUp();
    await until(() => platform.hellos.length === 1, 'hello');
    platform.assign('t1', 1);
    await until(() => platform.statuses('t1').length === 1, 'WORKING');
    platform.send({ leaseRevoked: { taskId: 't1', leaseEpoch: 1, reason: 'lease expired' } });
    await until(() => executor.contexts.get('t1')?.signal.aborted === true, 'the abort');
    expect((executor.contexts.get('t1')?.signal.reason as WorkerError).reason).toBe('LEASE_LOST');

    platform.replies.push({ code: GrpcStatus.FAILED_PRECONDITION, reason: 'LEASE_LOST' });
    platform.assign('t2', 1);
    await until(
      () => executor.contexts.get('t2')?.signal.aborted === true,
      'the abort on LEASE_LOST',
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(platform.statuses('t1')).toEqual(['WORKING']);
    expect(platform.statuses('t2')).toEqual(['WORKING']);
  });

  it('drains on shutdown: lets tasks finish within the grace period, then stops', async () => {
    const { platform, worker, executor, running } = await setUp({ shutdownGraceMs: 5_000 });
    await until(() => platform.hellos.length === 1, 'hello');
    platform.assign('t1', 1);
    await until(() => platform.statuses('t1').length === 1, 'WORKING');

    const stopped = worker.shutdown();
    expect(worker.state).toBe('DRAINING');
    platform.assign('t2', 1);
    executor.release('t1');
    await stopped;
    await running;

    expect(worker.state).toBe('STOPPED');
    expect(platform.statuses('t1')).toEqual(['WORKING', 'COMPLETED']);
    expect(platform.statuses('t2')).toEqual([]);
  });

  it('aborts what is left after the grace period and publishes nothing for it', async () => {
    const { platform, worker, executor } = await setUp({ shutdownGraceMs: 100 });
    await until(() => platform.hellos.length === 1, 'hello');
    platform.assign('t1', 1);
    await until(() => platform.statuses('t1').length === 1, 'WORKING');
    await worker.shutdown();
    expect(worker.state).toBe('STOPPED');
    expect((executor.contexts.get('t1')?.signal.reason as WorkerError).reason).toBe(
      'WORKER_SHUTDOWN',
    );
    expect(platform.statuses('t1')).toEqual(['WORKING']);
    // Handed back after the session closed, so that it is not granted straight back to this worker.
    expect(platform.releases.map((r) => r.request)).toEqual([
      { taskId: 't1', leaseEpoch: 1, reason: 'worker shutting down' },
    ]);
    expect(platform.releases[0]?.sessionOpen).toBe(false);
  });

  it('fails fast when the platform refuses the credential', async () => {
    const { worker, running } = await setUp({}, new FakePlatform('w', true));
    const error: unknown = await running.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(WorkerError);
    expect((error as WorkerError).reason).toBe('CONNECT_REJECTED');
    expect(worker.state).toBe('FAILED');
  });

  it('keeps retrying while the platform is not up yet', async () => {
    const platform = new FakePlatform();
    await platform.start();
    const port = platform.port;
    platform.kill();
    const worker = AgentWorker.create({
      target: `127.0.0.1:${port}`,
      credential: 's3cret',
      executor: new GatedExecutor(),
      logger: silent,
    });
    workers.push(worker);
    void worker.run();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(worker.state).toBe('RUNNING');
    const late = new FakePlatform();
    platforms.push(late);
    await late.start(port);
    await until(() => late.hellos.length === 1, 'hello once the platform is up');
  });
});

describe('AgentWorker.create', () => {
  it.each([
    [{ target: '' }, 'target is empty'],
    [{ credential: ' ' }, 'credential is empty'],
    [{ maxConcurrentTasks: 0 }, 'maxConcurrentTasks'],
    [{ maxConcurrentTasks: 1.5 }, 'maxConcurrentTasks'],
    [{ shutdownGraceMs: -1 }, 'shutdownGraceMs'],
  ])('rejects %j', (override, message) => {
    const create = (): AgentWorker =>
      AgentWorker.create({
        target: '127.0.0.1:1',
        credential: 'x',
        executor: new GatedExecutor(),
        ...override,
      });
    expect(create).toThrow(message);
  });

  it('stops at once when shut down before run(), and cannot run afterwards', async () => {
    const worker = AgentWorker.create({
      target: '127.0.0.1:1',
      credential: 'x',
      executor: new GatedExecutor(),
    });
    expect(worker.state).toBe('INITIALIZED');
    await worker.shutdown();
    expect(worker.state).toBe('STOPPED');
    await expect(worker.run()).rejects.toMatchObject({ reason: 'ILLEGAL_STATE' });
  });
});

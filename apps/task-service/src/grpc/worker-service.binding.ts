import {
  status as GrpcStatus,
  Metadata,
  type sendUnaryData,
  type ServerDuplexStream,
  type ServerUnaryCall,
} from '@grpc/grpc-js';
import {
  A2aError,
  a2aPb,
  decodeArtifact,
  decodeMessage,
  decodeTaskStatus,
  workerPb,
} from '@lib/a2a-protocol';
import type { TaskServiceConfig } from '@lib/config';
import { isTransientDatabaseError } from '@lib/event-store';
import { activeTraceparent } from '@lib/observability';
import {
  decideAll,
  WorkerUpdateRejected,
  type TaskAggregate,
  type TaskCommand,
  type WorkerUpdate,
} from '@lib/task-domain';
import { taskIdOf, type TaskId } from '@lib/tenancy';
import { WorkQueue } from '@lib/work-queue';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { AgentDirectory, type WorkerIdentity } from '../agent-directory';
import { Clock } from '../clock';
import { Dispatcher } from '../dispatch/dispatcher';
import { WorkerRegistry } from '../dispatch/worker-registry';
import { WorkerSession } from '../dispatch/worker-session';
import { ServiceAudit } from '../service-audit';
import { TASK_SERVICE_CONFIG } from '../tokens';
import { TaskDecisions } from '../write/task-decisions';
import { inUpdateSpan } from './update-span';

const HELLO_TIMEOUT_MS = 10_000;
/** Most updates one PublishUpdate may carry (the SDK sends at most 64). */
const MAX_UPDATES_PER_REQUEST = 256;
/** Most requests one PublishUpdates may carry (the SDK sends at most 64). */
const MAX_REQUESTS_PER_CALL = 256;

type GrpcError = Error & { code: GrpcStatus; reason: string; metadata: Metadata };

function grpcError(code: GrpcStatus, reason: string, message: string): GrpcError {
  const metadata = new Metadata();
  metadata.set('x-error-reason', reason);
  return Object.assign(new Error(message), { code, reason, details: message, metadata });
}

/** The worker a call comes from: its credential's identity and the session id it names. */
interface CallingWorker {
  identity: WorkerIdentity;
  workerId: string;
}

/** Ends a call with a status the client sees (destroying the stream would surface as CANCELLED). */
function fail(
  call: ServerDuplexStream<workerPb.WorkerMessage, workerPb.PlatformMessage>,
  error: GrpcError,
): void {
  call.emit('error', error);
}

/**
 * The WorkerService binding (proto/platform/worker/v1/worker.proto): sessions, heartbeats and execution
 * updates. Every update becomes a domain command on the task stream, fenced by the lease epoch.
 */
@Injectable()
export class WorkerServiceBinding {
  private readonly logger = new Logger(WorkerServiceBinding.name);

  constructor(
    private readonly work: WorkQueue,
    private readonly tasks: TaskDecisions,
    private readonly agents: AgentDirectory,
    private readonly audit: ServiceAudit,
    private readonly dispatcher: Dispatcher,
    private readonly registry: WorkerRegistry,
    private readonly clock: Clock,
    @Inject(TASK_SERVICE_CONFIG) private readonly config: TaskServiceConfig,
  ) {}

  private readonly sessionsById = new Map<string, WorkerSession>();
  /** Renewals that failed because the database was unreachable, since the last one that worked. */
  private failedRenewals = 0;

  /** Workers connected to this replica. */
  get sessions(): number {
    return this.sessionsById.size;
  }

  /**
   * The drain of this replica's workers: their leases are handed back (each expires within `windowMs` unless
   * its worker renews it from another replica), then every session ends with UNAVAILABLE, and the worker
   * SDK reconnects (the worker server takes no new session by then) and carries its running tasks on.
   */
  async handBack(windowMs: number): Promise<void> {
    const sessions = [...this.sessionsById.values()];
    const leases = sessions.flatMap((session) =>
      [...session.inflight].map(([taskId, leaseEpoch]) => ({
        agent: session.agent,
        taskId,
        leaseEpoch,
      })),
    );
    const handedBack = await this.work.handBack(leases, windowMs).catch((error: unknown) => {
      this.logger.warn(`leases not handed back (they expire after their TTL): ${String(error)}`);
      return 0;
    });
    this.logger.log(
      `draining: ${handedBack} lease(s) handed back, ${sessions.length} worker session(s) closed`,
    );
    const draining = grpcError(
      GrpcStatus.UNAVAILABLE,
      'UNAVAILABLE',
      'this task-service replica is shutting down; reconnect',
    );
    sessions.forEach((session) => session.hangUp(draining));
  }

  /** The grpc-js implementation of WorkerService. */
  handlers(): workerPb.WorkerServiceServer {
    return {
      connect: (call: ServerDuplexStream<workerPb.WorkerMessage, workerPb.PlatformMessage>) => {
        void this.openSession(call);
      },
      publishUpdate: (
        call: ServerUnaryCall<workerPb.PublishUpdateRequest, workerPb.PublishUpdateResponse>,
        callback: sendUnaryData<workerPb.PublishUpdateResponse>,
      ) => {
        this.callingWorker(call.metadata)
          .then((worker) => this.applyUpdate(call.request, worker))
          .then(
            (version) => callback(null, { version }),
            (error: unknown) => callback(this.toGrpcError(error)),
          );
      },
      publishUpdates: (
        call: ServerUnaryCall<workerPb.PublishUpdatesRequest, workerPb.PublishUpdatesResponse>,
        callback: sendUnaryData<workerPb.PublishUpdatesResponse>,
      ) => {
        this.applyUpdates(call.request, call.metadata).then(
          (outcomes) => callback(null, { outcomes }),
          (error: unknown) => callback(this.toGrpcError(error)),
        );
      },
      releaseLease: (
        call: ServerUnaryCall<workerPb.ReleaseLeaseRequest, workerPb.ReleaseLeaseResponse>,
        callback: sendUnaryData<workerPb.ReleaseLeaseResponse>,
      ) => {
        this.releaseLease(call.request, call.metadata).then(
          (version) => callback(null, { version }),
          (error: unknown) => callback(this.toGrpcError(error)),
        );
      },
    };
  }

  private async openSession(
    call: ServerDuplexStream<workerPb.WorkerMessage, workerPb.PlatformMessage>,
  ): Promise<void> {
    let identity: WorkerIdentity | null;
    try {
      identity = await this.authenticate(call.metadata);
    } catch {
      // The credential store is unreachable: a transient failure the worker retries, not a refusal.
      fail(call, grpcError(GrpcStatus.UNAVAILABLE, 'UNAVAILABLE', 'credential store unavailable'));
      return;
    }
    await this.audit.registration(identity, call.getPeer());
    if (!identity) {
      fail(
        call,
        grpcError(GrpcStatus.UNAUTHENTICATED, 'UNAUTHENTICATED', 'invalid worker credential'),
      );
      return;
    }
    // The agent's settings (its lease TTL among them) are read before the worker gets any work.
    await this.agents.leasePolicy(identity).catch(() => undefined);
    const { tenantId, agentId } = identity;
    let session: WorkerSession | null = null;
    const helloTimer = setTimeout(() => {
      if (!session) {
        fail(
          call,
          grpcError(GrpcStatus.FAILED_PRECONDITION, 'HELLO_REQUIRED', 'no hello received'),
        );
      }
    }, HELLO_TIMEOUT_MS);
    const close = (): void => {
      clearTimeout(helloTimer);
      if (session) {
        this.sessionsById.delete(session.workerId);
        this.dispatcher.detach(session);
        this.registry.closed(session);
        session = null;
      }
    };
    call.on('data', (message: workerPb.WorkerMessage) => {
      if (message.hello && !session) {
        clearTimeout(helloTimer);
        const hello = message.hello;
        session = new WorkerSession(
          randomUUID(),
          { tenantId, agentId },
          Math.max(1, Math.min(hello.maxConcurrentTasks || 1, 1_000)),
          call,
          hello.identity,
          this.clock.now(),
          hello.takesAssignmentBatches,
        );
        // A reconnecting worker's running tasks count against its capacity before any new work.
        for (const lease of hello.leases) {
          session.inflight.set(lease.taskId, lease.leaseEpoch);
        }
        this.sessionsById.set(session.workerId, session);
        session.send({
          welcome: {
            workerId: session.workerId,
            tenantId,
            agentId,
            heartbeatIntervalMs: this.config.HEARTBEAT_INTERVAL_MS,
            leaseTtlMs: this.agents.leaseTtlMs(identity),
          },
        });
        this.logger.log(`worker ${session.workerId} (${hello.identity}) serves ${agentId}`);
        this.dispatcher.attach(session);
        this.registry.opened(session);
        if (hello.leases.length > 0) {
          this.renewLeases(session, hello.leases);
        }
      } else if (message.heartbeat && session) {
        session.lastHeartbeatAt = this.clock.now();
        this.renewLeases(session, message.heartbeat.leases);
      } else if (message.updates && session) {
        const { batchId, requests } = message.updates;
        const from = session;
        void this.applyAll(requests, { identity, workerId: from.workerId }).then((outcomes) =>
          from.send({ updatesApplied: { batchId, outcomes } }),
        );
      }
    });
    call.on('end', () => {
      close();
      call.end();
    });
    call.on('error', close);
    call.on('cancelled', close);
    call.on('close', close);
  }

  /**
   * Extends every lease the worker still holds in one statement, and tells it about the ones it lost. One
   * renewal per session at a time: a heartbeat arriving meanwhile is folded into the next round.
   */
  private renewLeases(session: WorkerSession, leases: workerPb.LeaseRef[]): void {
    session.nextRenewal = leases;
    if (session.renewing) {
      return;
    }
    session.renewing = true;
    void (async () => {
      try {
        while (session.nextRenewal) {
          const round = session.nextRenewal;
          session.nextRenewal = null;
          await this.renewRound(session, round);
        }
      } finally {
        session.renewing = false;
      }
    })();
  }

  private async renewRound(session: WorkerSession, leases: workerPb.LeaseRef[]): Promise<void> {
    if (leases.length === 0) {
      return;
    }
    const countedBefore = new Map(session.inflight);
    const renewed = await this.work
      .renew(session.agent, leases, this.agents.leaseTtlMs(session.agent))
      .catch((error: unknown) => {
        // Unknown outcome: keep the leases as the worker sees them; the next heartbeat tries again (and the
        // sweeper gives leases a full TTL after a database outage before it expires any).
        if (!isTransientDatabaseError(error)) {
          this.logger.warn(`lease renewal failed: ${String(error)}`);
        } else if (this.failedRenewals++ === 0) {
          this.logger.warn(`lease renewals paused, database unreachable: ${String(error)}`);
        }
        return null;
      });
    if (!renewed) {
      return;
    }
    if (this.failedRenewals > 0) {
      this.logger.log(`leases renewed again after ${this.failedRenewals} failed renewal(s)`);
      this.failedRenewals = 0;
    }
    for (const lease of leases) {
      // A lease that ended while this renewal ran (the task finished, a release) must not come back into the
      // session's capacity, nor be reported lost to a worker that is done with it.
      if (
        countedBefore.get(lease.taskId) === lease.leaseEpoch &&
        !session.inflight.has(lease.taskId)
      ) {
        continue;
      }
      if (renewed.has(lease.taskId)) {
        session.inflight.set(lease.taskId, lease.leaseEpoch);
      } else {
        session.send({
          leaseRevoked: {
            taskId: lease.taskId,
            leaseEpoch: lease.leaseEpoch,
            reason: 'lease lost',
          },
        });
        this.dispatcher.released(session, lease.taskId);
      }
    }
  }

  /**
   * The requests of a PublishUpdates call, each applied on its own (the writer commits those that arrive
   * together in one batch); one outcome per request, in order.
   */
  private async applyUpdates(
    request: workerPb.PublishUpdatesRequest,
    metadata: Metadata,
  ): Promise<workerPb.PublishOutcome[]> {
    if (request.requests.length > MAX_REQUESTS_PER_CALL) {
      throw grpcError(
        GrpcStatus.INVALID_ARGUMENT,
        'INVALID_UPDATE',
        `at most ${MAX_REQUESTS_PER_CALL} requests per call`,
      );
    }
    return this.applyAll(request.requests, await this.callingWorker(metadata));
  }

  /** Each request applied on its own; one outcome per request, in order (never rejects). */
  private applyAll(
    requests: readonly workerPb.PublishUpdateRequest[],
    worker: CallingWorker,
  ): Promise<workerPb.PublishOutcome[]> {
    if (requests.length > MAX_REQUESTS_PER_CALL) {
      const refused = grpcError(
        GrpcStatus.INVALID_ARGUMENT,
        'INVALID_UPDATE',
        `at most ${MAX_REQUESTS_PER_CALL} requests per call`,
      );
      return Promise.resolve(requests.map(() => refusal(refused)));
    }
    return Promise.all(
      requests.map((one) =>
        this.applyUpdate(one, worker).then(
          (version) => ({ code: GrpcStatus.OK, version, reason: '', message: '' }),
          (error: unknown) => refusal(this.toGrpcError(error)),
        ),
      ),
    );
  }

  private applyUpdate(
    request: workerPb.PublishUpdateRequest,
    worker: CallingWorker,
  ): Promise<number> {
    return inUpdateSpan(request, worker.identity, worker.workerId, () =>
      this.applyInSpan(request, worker),
    );
  }

  private async applyInSpan(
    request: workerPb.PublishUpdateRequest,
    worker: CallingWorker,
  ): Promise<number> {
    const now = this.clock.now();
    const commands: TaskCommand[] = toWorkerUpdates(request).map((update) => ({
      type: 'ApplyWorkerUpdate',
      leaseEpoch: request.leaseEpoch,
      update,
      now,
    }));
    const key = request.updateId ? `${request.leaseEpoch}:${request.updateId}` : undefined;
    const taskId = taskIdOf(request.taskId);
    const after = await this.executeAsWorker(worker, taskId, commands, key);
    if (after.status === 'present' && after.lease?.epoch !== request.leaseEpoch) {
      this.releaseSlot(worker.workerId, taskId);
    }
    return after.version;
  }

  /** A draining worker hands a task back: queued again at once, for another worker. */
  private async releaseLease(
    request: workerPb.ReleaseLeaseRequest,
    metadata: Metadata,
  ): Promise<number> {
    const command: TaskCommand = {
      type: 'ReleaseLease',
      leaseEpoch: request.leaseEpoch,
      reason: request.reason.slice(0, 500) || 'released by the worker',
      now: this.clock.now(),
    };
    const worker = await this.callingWorker(metadata);
    const taskId = taskIdOf(request.taskId);
    const after = await this.executeAsWorker(worker, taskId, [command]);
    this.releaseSlot(worker.workerId, taskId);
    return after.version;
  }

  /** The worker a call comes from; UNAUTHENTICATED without a valid worker credential. */
  private async callingWorker(metadata: Metadata): Promise<CallingWorker> {
    const identity = await this.authenticate(metadata);
    if (!identity) {
      throw grpcError(GrpcStatus.UNAUTHENTICATED, 'UNAUTHENTICATED', 'invalid worker credential');
    }
    return {
      identity,
      workerId: String(metadata.get('x-worker-id')[0] ?? identity.credentialId),
    };
  }

  /** Runs a worker's commands on one of its agent's tasks (a task of another agent is LEASE_LOST). */
  private async executeAsWorker(
    { identity, workerId }: CallingWorker,
    taskId: TaskId,
    commands: readonly TaskCommand[],
    idempotencyKey?: string,
  ): Promise<TaskAggregate> {
    const traceparent = activeTraceparent();
    const { after } = await this.tasks.execute(
      { tenantId: identity.tenantId, taskId },
      (state) => {
        if (state.status === 'present' && state.agentId !== identity.agentId) {
          throw new WorkerUpdateRejected('LEASE_LOST', 'the task belongs to another agent');
        }
        return decideAll(commands, state);
      },
      {
        actor: { kind: 'agent-worker', id: workerId },
        binding: 'worker',
        ...(traceparent ? { traceparent } : {}),
        ...(idempotencyKey ? { idempotencyKey } : {}),
      },
    );
    return after;
  }

  /** The worker's lease on the task ended: its session (if connected here) has room again. */
  private releaseSlot(workerId: string, taskId: TaskId): void {
    const session = this.sessionsById.get(workerId);
    if (session) {
      this.dispatcher.released(session, taskId);
    }
  }

  private async authenticate(metadata: Metadata): Promise<WorkerIdentity | null> {
    const header = String(metadata.get('authorization')[0] ?? '');
    const match = /^Bearer\s+(.+)$/i.exec(header);
    return match?.[1] ? this.agents.authenticateWorker(match[1]) : null;
  }

  private toGrpcError(error: unknown): GrpcError {
    if ((error as GrpcError).code !== undefined && (error as GrpcError).reason !== undefined) {
      return error as GrpcError;
    }
    if (error instanceof WorkerUpdateRejected) {
      const code =
        error.reason === 'LEASE_LOST'
          ? GrpcStatus.FAILED_PRECONDITION
          : GrpcStatus.INVALID_ARGUMENT;
      return grpcError(code, error.reason, error.message);
    }
    if (error instanceof A2aError && error.reason === 'INVALID_PARAMS') {
      return grpcError(GrpcStatus.INVALID_ARGUMENT, 'INVALID_UPDATE', error.message);
    }
    if (isTransientDatabaseError(error)) {
      // The worker keeps the update and sends it again (same update id, applied at most once).
      return grpcError(
        GrpcStatus.UNAVAILABLE,
        'UNAVAILABLE',
        'the task store is unavailable; retry',
      );
    }
    this.logger.error(`worker update failed: ${String(error)}`);
    return grpcError(GrpcStatus.INTERNAL, 'INTERNAL', 'internal error');
  }
}

/** The outcome of a request that `error` refused (what PublishUpdate would have ended with). */
function refusal(error: GrpcError): workerPb.PublishOutcome {
  return { code: error.code, version: 0, reason: error.reason, message: error.message };
}

/**
 * The updates of a request, in order: its own update, or the batch in `updates` (never both). Each is
 * validated with the same ProtoJSON rules as client input.
 */
function toWorkerUpdates(request: workerPb.PublishUpdateRequest): WorkerUpdate[] {
  const own = request.status ?? request.message ?? request.artifact ?? request.reply;
  if (request.updates.length > 0 && own) {
    throw new WorkerUpdateRejected(
      'INVALID_UPDATE',
      'the request carries both an update and a batch of updates',
    );
  }
  const updates = request.updates.length > 0 ? request.updates : [request];
  if (updates.length > MAX_UPDATES_PER_REQUEST) {
    throw new WorkerUpdateRejected(
      'INVALID_UPDATE',
      `at most ${MAX_UPDATES_PER_REQUEST} updates per request`,
    );
  }
  return updates.map(toWorkerUpdate);
}

function toWorkerUpdate(update: workerPb.ExecutionUpdate): WorkerUpdate {
  if (update.status) {
    return { kind: 'status', status: decodeTaskStatus(a2aPb.TaskStatus.toJSON(update.status)) };
  }
  if (update.message) {
    return { kind: 'message', message: decodeMessage(a2aPb.Message.toJSON(update.message)) };
  }
  if (update.reply) {
    return { kind: 'reply', message: decodeMessage(a2aPb.Message.toJSON(update.reply)) };
  }
  if (update.artifact?.artifact) {
    return {
      kind: 'artifact',
      artifact: decodeArtifact(a2aPb.Artifact.toJSON(update.artifact.artifact)),
      append: update.artifact.append,
      lastChunk: update.artifact.lastChunk,
    };
  }
  throw new WorkerUpdateRejected(
    'INVALID_UPDATE',
    'the update carries no status, message, artifact or reply',
  );
}

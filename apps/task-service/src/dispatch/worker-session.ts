import type { ServerDuplexStream } from '@grpc/grpc-js';
import type { workerPb } from '@lib/a2a-protocol';
import type { AgentRef } from '@lib/tenancy';

/** One connected worker on this replica. */
export class WorkerSession {
  /** Leases this worker holds: task id → lease epoch. */
  readonly inflight = new Map<string, number>();
  /** Capacity set aside for leases being appended right now (not in `inflight` yet). */
  reserved = 0;
  closed = false;
  /** A lease renewal is running for this session. */
  renewing = false;
  /** The leases of the latest heartbeat not renewed yet (the newest heartbeat supersedes older ones). */
  nextRenewal: workerPb.LeaseRef[] | null = null;
  /** When the session's latest heartbeat arrived (operators see it, `ops.worker_sessions`). */
  lastHeartbeatAt: Date | null = null;
  /** Assignments sent in this turn of the event loop, to go out together (see {@link send}). */
  private assignments: workerPb.Assignment[] = [];

  constructor(
    readonly workerId: string,
    readonly agent: AgentRef,
    readonly capacity: number,
    private readonly call: ServerDuplexStream<workerPb.WorkerMessage, workerPb.PlatformMessage>,
    /** What the worker calls itself (its hello's `identity`). */
    readonly identity = '',
    readonly connectedAt = new Date(),
    /** The worker's hello says it takes several assignments in one message. */
    private readonly takesAssignmentBatches = false,
  ) {}

  get key(): string {
    return agentKey(this.agent);
  }

  get free(): number {
    return this.closed ? 0 : Math.max(0, this.capacity - this.inflight.size - this.reserved);
  }

  /** Ends the session with a status the worker sees (destroying the stream would surface as CANCELLED). */
  hangUp(error: Error): void {
    this.call.emit('error', error);
  }

  /**
   * Sends `message` to the worker. To a worker that takes assignment batches, the assignments of one turn of
   * the event loop (a commit that leased several tasks to it) go out as one `assignments` message at the end
   * of the turn: one write and one wake-up of the worker instead of one per task, and the worker starts them
   * together, so it also reports their outcomes together. Any other message sends the assignments held first:
   * the worker sees every message in the order it was sent.
   */
  send(message: workerPb.PlatformMessage): boolean {
    if (this.closed) {
      return false;
    }
    if (message.assignment && this.takesAssignmentBatches) {
      if (this.assignments.push(message.assignment) === 1) {
        setImmediate(() => this.flush());
      }
      return true;
    }
    this.flush();
    this.call.write(message);
    return true;
  }

  private flush(): void {
    const assignments = this.assignments;
    if (assignments.length === 0) {
      return;
    }
    this.assignments = [];
    if (this.closed) {
      // As for any message to a closed session: the leases expire and the tasks go to another worker.
      return;
    }
    const [only] = assignments;
    this.call.write(
      assignments.length === 1 && only ? { assignment: only } : { assignments: { assignments } },
    );
  }
}

export function agentKey(agent: AgentRef): string {
  return `${agent.tenantId}\u0000${agent.agentId}`;
}

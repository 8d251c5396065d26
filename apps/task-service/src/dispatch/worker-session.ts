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

  constructor(
    readonly workerId: string,
    readonly agent: AgentRef,
    readonly capacity: number,
    private readonly call: ServerDuplexStream<workerPb.WorkerMessage, workerPb.PlatformMessage>,
    /** What the worker calls itself (its hello's `identity`). */
    readonly identity = '',
    readonly connectedAt = new Date(),
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

  send(message: workerPb.PlatformMessage): boolean {
    if (this.closed) {
      return false;
    }
    this.call.write(message);
    return true;
  }
}

export function agentKey(agent: AgentRef): string {
  return `${agent.tenantId}\u0000${agent.agentId}`;
}

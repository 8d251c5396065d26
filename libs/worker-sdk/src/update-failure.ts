import { status as GrpcStatus } from '@grpc/grpc-js';

/** A failed `PublishUpdate`, as the transport reports it. */
export interface UpdateFailure {
  /** The gRPC status code. */
  readonly code: GrpcStatus;
  /** The `x-error-reason` trailer, when the platform sent one. */
  readonly reason: string | undefined;
  readonly message: string;
}

/**
 * What to do about a failed update:
 * - `retry`: transient (the platform is restarting or overloaded); send the same update again later;
 * - `stop`: the lease is gone; stop working on the task and never retry;
 * - `bug`: the platform rejected the update itself; retrying would fail the same way.
 */
export type UpdateFailureKind = 'retry' | 'stop' | 'bug';

const TRANSIENT: ReadonlySet<GrpcStatus> = new Set([
  GrpcStatus.UNAVAILABLE,
  GrpcStatus.DEADLINE_EXCEEDED,
  GrpcStatus.INTERNAL,
  GrpcStatus.ABORTED,
  GrpcStatus.RESOURCE_EXHAUSTED,
]);

export function classifyUpdateFailure(failure: Pick<UpdateFailure, 'code' | 'reason'>): UpdateFailureKind {
  if (failure.reason === 'LEASE_LOST' || failure.code === GrpcStatus.FAILED_PRECONDITION) {
    return 'stop';
  }
  return TRANSIENT.has(failure.code) ? 'retry' : 'bug';
}

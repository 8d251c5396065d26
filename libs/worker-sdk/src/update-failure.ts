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
 * - `retry`: transient (the platform is restarting or overloaded): send the same update again later.
 *   CANCELLED counts as transient because this client never cancels an update: it comes from a platform
 *   that shuts down while the call is in flight.
 * - `stop`: the lease is gone (LEASE_LOST, or any FAILED_PRECONDITION): stop working on the task, never retry.
 * - `bug`: the platform rejected the update itself (INVALID_ARGUMENT and every other code): retrying would
 *   fail the same way.
 */
export type UpdateFailureKind = 'retry' | 'stop' | 'bug';

const TRANSIENT: ReadonlySet<GrpcStatus> = new Set([
  GrpcStatus.CANCELLED,
  GrpcStatus.UNAVAILABLE,
  GrpcStatus.DEADLINE_EXCEEDED,
  GrpcStatus.INTERNAL,
  GrpcStatus.ABORTED,
  GrpcStatus.RESOURCE_EXHAUSTED,
]);

export function classifyUpdateFailure(
  failure: Pick<UpdateFailure, 'code' | 'reason'>,
): UpdateFailureKind {
  if (failure.reason === 'LEASE_LOST' || failure.code === GrpcStatus.FAILED_PRECONDITION) {
    return 'stop';
  }
  return TRANSIENT.has(failure.code) ? 'retry' : 'bug';
}

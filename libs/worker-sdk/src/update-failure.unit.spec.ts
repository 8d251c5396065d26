import { status as GrpcStatus } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { classifyUpdateFailure, type UpdateFailureKind } from './update-failure';

describe('classifyUpdateFailure', () => {
  it.each<[string, GrpcStatus, string | undefined, UpdateFailureKind]>([
    ['a stale lease', GrpcStatus.FAILED_PRECONDITION, 'LEASE_LOST', 'stop'],
    ['a failed precondition without a reason', GrpcStatus.FAILED_PRECONDITION, undefined, 'stop'],
    ['LEASE_LOST under any code', GrpcStatus.INVALID_ARGUMENT, 'LEASE_LOST', 'stop'],
    ['an illegal transition', GrpcStatus.INVALID_ARGUMENT, 'INVALID_TRANSITION', 'bug'],
    ['a malformed update', GrpcStatus.INVALID_ARGUMENT, 'INVALID_UPDATE', 'bug'],
    ['a refused credential', GrpcStatus.UNAUTHENTICATED, 'UNAUTHENTICATED', 'bug'],
    ['an unknown method', GrpcStatus.UNIMPLEMENTED, undefined, 'bug'],
    ['an unknown error', GrpcStatus.UNKNOWN, undefined, 'bug'],
    ['a platform that is down', GrpcStatus.UNAVAILABLE, undefined, 'retry'],
    ['a platform shutting down', GrpcStatus.CANCELLED, undefined, 'retry'],
    ['a timeout', GrpcStatus.DEADLINE_EXCEEDED, undefined, 'retry'],
    ['an internal error', GrpcStatus.INTERNAL, 'INTERNAL', 'retry'],
    ['a concurrency conflict', GrpcStatus.ABORTED, undefined, 'retry'],
    ['throttling', GrpcStatus.RESOURCE_EXHAUSTED, undefined, 'retry'],
  ])('%s → %s', (_label, code, reason, kind) => {
    expect(classifyUpdateFailure({ code, reason })).toBe(kind);
  });
});

import { A2AError } from '@a2a-js/sdk/errors';
import { TokenRefused } from '@lib/upstream';

/** gRPC status codes that a retry cannot change: the upstream refused the call itself. */
const FINAL_GRPC_CODES = new Set([
  3, // INVALID_ARGUMENT
  5, // NOT_FOUND
  7, // PERMISSION_DENIED
  9, // FAILED_PRECONDITION
  12, // UNIMPLEMENTED
  16, // UNAUTHENTICATED
]);

/** HTTP statuses of the SDK's transport errors (`… Status: 401 …`, `… stream for X: 401 …`). */
const HTTP_STATUS = /(?:Status: |establishing stream for \S+: )(\d{3})\b/;

/**
 * Whether another try may succeed: no connection, a broken stream, a timeout, an HTTP 408, 429 or 5xx, gRPC
 * UNAVAILABLE and the like. An A2A error the upstream answered, an answer that is not JSON, any other HTTP
 * status (a refused credential, a bad request, a redirect) and a gRPC refusal are final.
 */
export function isRetryable(error: unknown): boolean {
  // The SDK's gRPC transport wraps a failed call that carries no A2A reason (no connection, a deadline) in a
  // plain A2AError whose cause is grpc-js's error: that is the transport's failure, judged by its status code.
  if (error instanceof A2AError && error.name === 'A2AError' && hasGrpcCode(error.cause)) {
    return isRetryable(error.cause);
  }
  // An A2A error is the upstream's answer; an answer that is not JSON will not become JSON on a retry.
  if (error instanceof A2AError || error instanceof SyntaxError || error instanceof TokenRefused) {
    return false;
  }
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'number' && FINAL_GRPC_CODES.has(code)) {
    return false;
  }
  const status = HTTP_STATUS.exec(error instanceof Error ? error.message : String(error))?.[1];
  if (status !== undefined) {
    const n = Number(status);
    return n === 408 || n === 429 || n >= 500;
  }
  return true;
}

/** Whether `value` is grpc-js's error of a call (a `ServiceError`, with its numeric status `code`). */
function hasGrpcCode(value: unknown): boolean {
  return value instanceof Error && typeof (value as { code?: unknown }).code === 'number';
}

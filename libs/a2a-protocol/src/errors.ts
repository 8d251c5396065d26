/**
 * The one error catalogue (spec digest §9.1, §7.4, §3.3.2). Every error the platform returns is an
 * {@link A2aError} identified by its `reason`; each binding maps reasons to its wire form through a table
 * (see `binding-errors.ts`). Errors are compared by `reason`, never by `instanceof` across process lines.
 */

/** A2A-specific errors, spec digest §9.1. `reason` is the ErrorInfo reason. */
export const A2A_ERROR_REASONS = [
  'TASK_NOT_FOUND',
  'TASK_NOT_CANCELABLE',
  'PUSH_NOTIFICATION_NOT_SUPPORTED',
  'UNSUPPORTED_OPERATION',
  'CONTENT_TYPE_NOT_SUPPORTED',
  'INVALID_AGENT_RESPONSE',
  'EXTENDED_AGENT_CARD_NOT_CONFIGURED',
  'EXTENSION_SUPPORT_REQUIRED',
  'VERSION_NOT_SUPPORTED',
] as const;

/** Generic (non-A2A) errors every binding can also produce. */
export const GENERIC_ERROR_REASONS = [
  'PARSE_ERROR',
  'INVALID_REQUEST',
  'METHOD_NOT_FOUND',
  'INVALID_PARAMS',
  'UNAUTHENTICATED',
  'PERMISSION_DENIED',
  'PAYLOAD_TOO_LARGE',
  /** A tenant quota (request rate, active tasks) is used up; `retryAfterSeconds` says when to retry. */
  'QUOTA_EXCEEDED',
  'UNSUPPORTED_MEDIA_TYPE',
  'UNAVAILABLE',
  'INTERNAL',
] as const;

export type A2aErrorReason = (typeof A2A_ERROR_REASONS)[number];
export type GenericErrorReason = (typeof GENERIC_ERROR_REASONS)[number];
export type ErrorReason = A2aErrorReason | GenericErrorReason;

/** ErrorInfo domain of the A2A-specific errors. */
export const A2A_ERROR_DOMAIN = 'a2a-protocol.org';
/** ErrorInfo domain of the platform's generic errors. */
export const PLATFORM_ERROR_DOMAIN = 'a2a-platform.dev';

export interface FieldViolation {
  /** Path of the offending field in the request, e.g. `message.parts[0]`. */
  field: string;
  description: string;
}

export class A2aError extends Error {
  override readonly name = 'A2aError';

  constructor(
    readonly reason: ErrorReason,
    message: string,
    readonly metadata: Record<string, string> = {},
    readonly fieldViolations: readonly FieldViolation[] = [],
    options?: ErrorOptions,
  ) {
    super(message, options);
  }

  get isA2aSpecific(): boolean {
    return (A2A_ERROR_REASONS as readonly string[]).includes(this.reason);
  }
}

export function isErrorReason(value: string): value is ErrorReason {
  return (
    (A2A_ERROR_REASONS as readonly string[]).includes(value) ||
    (GENERIC_ERROR_REASONS as readonly string[]).includes(value)
  );
}

export const taskNotFound = (taskId: string): A2aError =>
  new A2aError('TASK_NOT_FOUND', `task ${taskId} was not found`, { taskId });

export const invalidParams = (violations: readonly FieldViolation[]): A2aError =>
  new A2aError(
    'INVALID_PARAMS',
    violations.map((v) => `${v.field}: ${v.description}`).join('; ') || 'invalid parameters',
    {},
    violations,
  );

/**
 * SQLSTATEs of failures that say nothing about the request and go away by themselves: class 08 (connection
 * exception), 57P01–57P03 (the server is shutting down, crashed, or not accepting connections yet), 53300
 * (too many connections), 40001/40P01 (serialization failure, deadlock: the transaction may simply be run
 * again).
 */
const TRANSIENT_SQLSTATE = /^(08...|57P0[123]|53300|40001|40P01)$/;

/** Socket-level error codes of a server that cannot be reached right now. */
const TRANSIENT_SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

/** Messages node-postgres uses for connections that broke or could not be made in time. */
const TRANSIENT_DRIVER_MESSAGE =
  /^(Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect|Client was closed and is not queryable|Cannot use a pool after calling end on the pool)/;

/**
 * Whether a database error is transient: the database could not be reached or dropped the connection, so the
 * same request may succeed when tried again (clients get UNAVAILABLE, never INTERNAL, for these).
 */
export function isTransientDatabaseError(error: unknown): boolean {
  if (!(error instanceof Error)) {
    return false;
  }
  const code = (error as { code?: unknown }).code;
  if (
    typeof code === 'string' &&
    (TRANSIENT_SQLSTATE.test(code) || TRANSIENT_SOCKET_CODES.has(code))
  ) {
    return true;
  }
  if (error instanceof AggregateError && error.errors.some(isTransientDatabaseError)) {
    return true;
  }
  return TRANSIENT_DRIVER_MESSAGE.test(error.message);
}

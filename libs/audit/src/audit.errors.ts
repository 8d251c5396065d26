/**
 * An entry the writer refuses before it is queued: a missing or malformed field, or a string that could make
 * the record unreadable (control characters, a lone surrogate) or unbounded. Only that call fails; the batch
 * it would have joined is written without it. Not retryable: the same entry fails again.
 */
export class InvalidAuditEntry extends Error {
  override readonly name = 'InvalidAuditEntry';

  constructor(
    /** The entry's field at fault. */
    readonly field: string,
    problem: string,
  ) {
    super(`audit entry ${field}: ${problem}`);
  }
}

/** A query the audit log refuses (an operator's bad filter, limit or cursor): the admin API's 400. */
export class InvalidAuditQuery extends Error {
  override readonly name = 'InvalidAuditQuery';
}

/** `record` after `close`: the entry was not written. */
export class AuditWriterClosed extends Error {
  override readonly name = 'AuditWriterClosed';

  constructor() {
    super('the audit writer is closed');
  }
}

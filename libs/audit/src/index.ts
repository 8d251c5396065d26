export type { BrokenRecord, ChainHead, ChainProblem } from './audit-chain';
export {
  AuditLog,
  MAX_PAGE_SIZE,
  type AuditLogOptions,
  type AuditPage,
  type AuditQuery,
  type VerifyResult,
} from './audit-log';
export {
  AUDIT_BINDINGS,
  AUDIT_OUTCOMES,
  GENESIS_HASH,
  PLATFORM_TENANT,
  canonicalRecord,
  chainHash,
  type AuditBinding,
  type AuditEntry,
  type AuditOutcome,
  type AuditRecord,
  type ChainedFields,
} from './audit-record';
export { AuditWriter, type AuditWriterOptions, type AuditWriterStats } from './audit-writer';
export { AuditWriterClosed, InvalidAuditEntry, InvalidAuditQuery } from './audit.errors';
export { traceIdOf } from './trace-id';

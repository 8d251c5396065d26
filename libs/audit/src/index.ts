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
  AUDIT_HASH_VERSIONS,
  AUDIT_OUTCOMES,
  GENESIS_HASH,
  PLATFORM_TENANT,
  canonicalRecord,
  chainHash,
  chainHashV2,
  recordDigest,
  sealAuditEntry,
  type AuditBinding,
  type AuditEntry,
  type AuditHashVersion,
  type AuditOutcome,
  type AuditRecord,
  type ChainedFields,
  type DigestedFields,
  type SealedAuditEntry,
} from './audit-record';
export { AuditWriter, type AuditWriterOptions, type AuditWriterStats } from './audit-writer';
export { AuditWriterClosed, InvalidAuditEntry, InvalidAuditQuery } from './audit.errors';
export { callEntry } from './call-entry';
export { traceIdOf } from './trace-id';

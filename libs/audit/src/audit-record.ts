import { canonicalize } from '@lib/a2a-protocol';
import { tenantIdOf, type TenantId } from '@lib/ids';
import { createHash } from 'node:crypto';
import { InvalidAuditEntry } from './audit.errors';

/**
 * The reserved chain of records that belong to no tenant: a failed authentication whose tenant cannot be told,
 * a platform admin's action. No tenant may be created under this id (the admin API reserves it).
 */
export const PLATFORM_TENANT: TenantId = tenantIdOf('_platform');

/** How the audited call arrived: the three A2A bindings, the admin API, the worker protocol. */
export const AUDIT_BINDINGS = ['JSONRPC', 'HTTP+JSON', 'GRPC', 'ADMIN', 'WORKER'] as const;
export type AuditBinding = (typeof AUDIT_BINDINGS)[number];

/**
 * What became of the call: done (`ok`), refused to a known principal (`denied`), refused for want of a valid
 * credential (`unauthenticated`), or accepted and then failed (`failed`, with `reason`).
 */
export const AUDIT_OUTCOMES = ['ok', 'denied', 'unauthenticated', 'failed'] as const;
export type AuditOutcome = (typeof AUDIT_OUTCOMES)[number];

/**
 * What a caller asks the audit log to keep: who (principal, credential, address) did what (operation) to which
 * resource, through which binding, with what outcome, when. Every field is an id, a name from a closed set or
 * a time; there is deliberately no free-form detail, so no secret, token or message content has a place to
 * go. Absent facts are `null`, never left out, so a caller says explicitly that it does not know them.
 */
export interface AuditEntry {
  /**
   * The tenant whose chain gets the record; {@link PLATFORM_TENANT} when there is none. A string, not a
   * TenantId: the chain is the one the call named before anything checked the name (an admin path's tenant).
   */
  readonly tenantId: string;
  readonly principalId: string | null;
  /** The credential's id (an API key id, a worker credential id), never the secret. */
  readonly credentialId: string | null;
  /** The caller's network address as the edge saw it. */
  readonly sourceAddress: string | null;
  /** `<area>.<Name>`: `a2a.SendMessage`, `admin.tenant.create`, `auth.authenticate`, `worker.register`. */
  readonly operation: string;
  readonly binding: AuditBinding;
  /** `<kind>/<id>`: `task/<id>`, `tenant/<id>`, `api-key/<id>`. */
  readonly resource: string | null;
  readonly outcome: AuditOutcome;
  /** The error reason of a denied or failed call (UPPER_SNAKE: `PERMISSION_DENIED`). */
  readonly reason: string | null;
  /** The W3C trace id or correlation id that ties the record to logs and traces. */
  readonly traceId: string | null;
  readonly occurredAt: Date;
}

/**
 * How a record's hash is defined (never redefined in place: a new definition is a new version):
 * - 1: {@link chainHash}, the record's canonical JSON with its seq, chained in Node;
 * - 2: {@link chainHashV2} over {@link recordDigest}, chained by Postgres (`audit.chain_records`), so that a
 *   record can be written in the transaction of the change it records, by any number of writers.
 */
export const AUDIT_HASH_VERSIONS = [1, 2] as const;
export type AuditHashVersion = (typeof AUDIT_HASH_VERSIONS)[number];

/** A record as stored: the entry with its place in the tenant's chain. */
export interface AuditRecord extends AuditEntry {
  readonly recordId: string;
  /** Position in the tenant's chain: 1, 2, 3, … without gaps. */
  readonly seq: number;
  /** The definition `hash` follows: 1 for records written before the chaining moved to SQL, 2 since. */
  readonly hashVersion: AuditHashVersion;
  /** The previous record's `hash` (lowercase hex), {@link GENESIS_HASH} for the first record. */
  readonly prevHash: string;
  /** SHA-256 linking the record to the previous hash ({@link recordHash}), lowercase hex. */
  readonly hash: string;
}

/**
 * What a record's hash covers: every field but the hashes, the time as the ISO-8601 text it was written with
 * (millisecond precision), so that the verifier can hash the exact stored value rather than a rounded one.
 */
export type ChainedFields = Omit<
  AuditRecord,
  'prevHash' | 'hash' | 'hashVersion' | 'occurredAt'
> & {
  readonly occurredAt: string;
};

/** What a version-2 {@link recordDigest} covers: the record without its place in the chain. */
export type DigestedFields = Omit<ChainedFields, 'seq'>;

/**
 * An entry checked and made ready for `audit.chain_records`: its fields as stored, its record id, and the
 * digest Postgres chains. JSON-safe (the time is ISO-8601 text), so it can travel inside another statement's
 * parameters, such as a task batch.
 */
export interface SealedAuditEntry extends DigestedFields {
  /** {@link recordDigest} of the other fields, lowercase hex. */
  readonly digest: string;
}

/** The `prevHash` of every chain's first record: 32 zero bytes. */
export const GENESIS_HASH = '0'.repeat(64);

const HEX_HASH = /^[0-9a-f]{64}$/;

/**
 * The record's own fields, every one named, `null`s included, so that a property a caller added to the object
 * can neither enter a hash nor change it. RFC 8785 orders the keys, so the order here does not matter.
 */
function recordFields(fields: DigestedFields): Record<string, unknown> {
  return {
    tenantId: fields.tenantId,
    recordId: fields.recordId,
    occurredAt: fields.occurredAt,
    principalId: fields.principalId,
    credentialId: fields.credentialId,
    sourceAddress: fields.sourceAddress,
    operation: fields.operation,
    binding: fields.binding,
    resource: fields.resource,
    outcome: fields.outcome,
    reason: fields.reason,
    traceId: fields.traceId,
  };
}

/** The record's fields as RFC 8785 canonical JSON, as version 1 hashes them (seq included). */
export function canonicalRecord(fields: ChainedFields): string {
  return canonicalize({ ...recordFields(fields), seq: fields.seq });
}

/**
 * A version-1 link: SHA-256 over the previous record's hash (32 bytes) followed by the UTF-8 bytes
 * of {@link canonicalRecord}. Seq and tenant are inside, so a record moved to another place or tenant no
 * longer matches its hash.
 */
export function chainHash(prevHash: string, fields: ChainedFields): string {
  if (!HEX_HASH.test(prevHash)) {
    throw new TypeError('a previous hash is 32 bytes in lowercase hex');
  }
  return createHash('sha256')
    .update(Buffer.from(prevHash, 'hex'))
    .update(canonicalRecord(fields), 'utf8')
    .digest('hex');
}

/**
 * The version-2 digest of a record: SHA-256 of the UTF-8 bytes of the RFC 8785 JSON of its fields, `null`s
 * included, without seq or hashes (Postgres gives the seq when it chains the record). Lowercase hex, as every
 * hash of this library.
 */
export function recordDigest(fields: DigestedFields): string {
  return createHash('sha256')
    .update(canonicalize(recordFields(fields)), 'utf8')
    .digest('hex');
}

/**
 * A version-2 link: SHA-256( prevHash (32 bytes) ‖ seq (8 bytes, big-endian, signed) ‖ digest (32 bytes) ),
 * which is `sha256(prev_hash || int8send(seq) || digest)` in SQL. All hashes lowercase hex.
 */
export function chainHashV2(prevHash: string, seq: number, digest: string): string {
  if (!HEX_HASH.test(prevHash) || !HEX_HASH.test(digest)) {
    throw new TypeError('a previous hash and a digest are 32 bytes in lowercase hex');
  }
  if (!Number.isSafeInteger(seq) || seq < 1) {
    throw new RangeError(`not a record seq: ${seq}`);
  }
  const seqBytes = Buffer.alloc(8);
  seqBytes.writeBigInt64BE(BigInt(seq));
  return createHash('sha256')
    .update(Buffer.from(prevHash, 'hex'))
    .update(seqBytes)
    .update(Buffer.from(digest, 'hex'))
    .digest('hex');
}

/** The hash a record of `version` has after `prevHash`. */
export function recordHash(
  version: AuditHashVersion,
  prevHash: string,
  fields: ChainedFields,
): string {
  return version === 1
    ? chainHash(prevHash, fields)
    : chainHashV2(prevHash, fields.seq, recordDigest(fields));
}

/** Characters that would let a value pose as a line of its own, or that no JSON or Postgres text can hold. */
const UNPRINTABLE = /[\p{Cc}\p{Zl}\p{Zp}\p{Cs}]/u;
const OPERATION = /^[A-Za-z][A-Za-z0-9_-]*(\.[A-Za-z][A-Za-z0-9_-]*)+$/;
const REASON = /^[A-Z][A-Z0-9_]*$/;
/** A UUID as Postgres prints it, so that the id read back is the id that was hashed. */
const RECORD_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** 9999-12-31T23:59:59.999Z: later times have no four-digit-year ISO form. */
export const LATEST_TIME = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** Longest value of each text field (characters). */
const MAX_LENGTH = {
  tenantId: 128,
  principalId: 256,
  credentialId: 256,
  sourceAddress: 128,
  operation: 128,
  resource: 512,
  reason: 64,
  traceId: 128,
} as const;

/**
 * The entry as the writer stores it: a copy holding only the entry's own fields, each checked, so that no
 * input can make a batch fail in the database or a record unreadable. Throws {@link InvalidAuditEntry}.
 */
export function checkEntry(entry: AuditEntry): AuditEntry {
  const text = (field: keyof typeof MAX_LENGTH, pattern?: RegExp): string => {
    const value = (entry as unknown as Record<string, unknown>)[field];
    if (typeof value !== 'string' || value.length === 0) {
      throw new InvalidAuditEntry(field, 'must be a non-empty string');
    }
    if (value.length > MAX_LENGTH[field]) {
      throw new InvalidAuditEntry(field, `longer than ${MAX_LENGTH[field]} characters`);
    }
    if (UNPRINTABLE.test(value)) {
      throw new InvalidAuditEntry(field, 'holds control or line-separator characters');
    }
    if (pattern && !pattern.test(value)) {
      throw new InvalidAuditEntry(field, `does not match ${String(pattern)}`);
    }
    return value;
  };
  const optional = (field: keyof typeof MAX_LENGTH, pattern?: RegExp): string | null =>
    (entry as unknown as Record<string, unknown>)[field] === null ? null : text(field, pattern);
  const { binding, outcome, occurredAt } = entry;
  if (!AUDIT_BINDINGS.includes(binding)) {
    throw new InvalidAuditEntry('binding', `not one of ${AUDIT_BINDINGS.join(', ')}`);
  }
  if (!AUDIT_OUTCOMES.includes(outcome)) {
    throw new InvalidAuditEntry('outcome', `not one of ${AUDIT_OUTCOMES.join(', ')}`);
  }
  if (
    !(occurredAt instanceof Date) ||
    !(occurredAt.getTime() >= 0 && occurredAt.getTime() <= LATEST_TIME)
  ) {
    throw new InvalidAuditEntry('occurredAt', 'must be a Date between 1970 and 9999');
  }
  return {
    tenantId: text('tenantId'),
    principalId: optional('principalId'),
    credentialId: optional('credentialId'),
    sourceAddress: optional('sourceAddress'),
    operation: text('operation', OPERATION),
    binding,
    resource: optional('resource'),
    outcome,
    reason: optional('reason', REASON),
    traceId: optional('traceId'),
    occurredAt: new Date(occurredAt.getTime()),
  };
}

/**
 * The entry checked ({@link checkEntry}) and sealed for `audit.chain_records` under `recordId`, which must be a
 * UUID in lowercase hex with hyphens (the form Postgres gives back, hashed as such). Throws
 * {@link InvalidAuditEntry}, so a bad entry fails its own call, never the statement it would have joined.
 */
export function sealAuditEntry(entry: AuditEntry, recordId: string): SealedAuditEntry {
  const { occurredAt, ...checked } = checkEntry(entry);
  if (typeof recordId !== 'string' || !RECORD_ID.test(recordId)) {
    throw new InvalidAuditEntry('recordId', 'must be a UUID in lowercase hex with hyphens');
  }
  const fields: DigestedFields = { ...checked, recordId, occurredAt: occurredAt.toISOString() };
  return { ...fields, digest: recordDigest(fields) };
}

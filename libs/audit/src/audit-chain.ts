import {
  AUDIT_HASH_VERSIONS,
  GENESIS_HASH,
  recordHash,
  type AuditHashVersion,
  type ChainedFields,
} from './audit-record';

/**
 * How a chain is broken where verification stops:
 * - `missing record`: the record at this seq is not there (a deletion);
 * - `hash mismatch`: the record's fields are not those its hash was made from (an edit of any field, seq,
 *   tenant and hash version included: a record moved, renumbered or swapped with another reads as edited where
 *   it now is);
 * - `broken link`: the record is intact in itself but does not follow the previous one (records removed or
 *   rewritten before it by someone who recomputed their hashes);
 * - `head mismatch`: the records end somewhere else than `audit.chain_heads` says (the last records deleted,
 *   or records added behind the writers' back).
 */
export type ChainProblem = 'missing record' | 'hash mismatch' | 'broken link' | 'head mismatch';

/** The first place where a chain is not what its writers left. */
export interface BrokenRecord {
  /** The seq where the chain breaks. */
  readonly seq: number;
  /** The record found at `seq`, when there is one. */
  readonly recordId?: string;
  readonly problem: ChainProblem;
}

/** Where a tenant's chain ends, as `audit.chain_heads` has it. */
export interface ChainHead {
  readonly seq: number;
  readonly hash: string;
}

/** A record as read back for verification: the hashed fields, the hash version and the two stored hashes. */
export type StoredLink = ChainedFields & {
  readonly hashVersion: AuditHashVersion;
  readonly prevHash: string;
  readonly hash: string;
};

/**
 * Checks a chain one record at a time, in seq order, holding only the last link: a chain of any length is
 * verified page by page in constant memory. Each record is hashed by its own version's definition, so a chain
 * written by version-1 writers and continued by version-2 ones verifies end to end. Pure: the caller reads,
 * this decides.
 */
export class ChainVerifier {
  private seq = 0;
  private hash = GENESIS_HASH;
  private recordId: string | undefined;

  /** `head` is the chain's head read in the same snapshot as its records (`null`: no head row). */
  constructor(private readonly head: ChainHead | null) {}

  /** The last intact record's seq (the number of intact records) and hash. */
  get tip(): ChainHead {
    return { seq: this.seq, hash: this.hash };
  }

  /** The next record in seq order: the problem it shows, or `null` if it extends the chain. */
  next(record: StoredLink): BrokenRecord | null {
    const expected = this.seq + 1;
    if (record.seq !== expected) {
      return { seq: expected, problem: 'missing record' };
    }
    const found = { seq: record.seq, recordId: record.recordId };
    if (record.seq > (this.head?.seq ?? 0)) {
      return { ...found, problem: 'head mismatch' };
    }
    if (
      // A version the table's CHECK no longer holds to (dropped by a tamperer) has no definition to match.
      !AUDIT_HASH_VERSIONS.includes(record.hashVersion) ||
      recordHash(record.hashVersion, record.prevHash, record) !== record.hash
    ) {
      return { ...found, problem: 'hash mismatch' };
    }
    if (record.prevHash !== this.hash) {
      return { ...found, problem: 'broken link' };
    }
    this.seq = record.seq;
    this.hash = record.hash;
    this.recordId = record.recordId;
    return null;
  }

  /** After the last record: whether the chain ends where the head says. */
  end(): BrokenRecord | null {
    const head = this.head ?? { seq: 0, hash: GENESIS_HASH };
    if (head.seq > this.seq) {
      return { seq: this.seq + 1, problem: 'head mismatch' };
    }
    if (head.hash !== this.hash) {
      return { seq: this.seq, recordId: this.recordId, problem: 'head mismatch' };
    }
    return null;
  }
}

import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  canonicalRecord,
  chainHash,
  chainHashV2,
  checkEntry,
  GENESIS_HASH,
  recordDigest,
  recordHash,
  sealAuditEntry,
  type AuditEntry,
  type ChainedFields,
  type DigestedFields,
} from './audit-record';
import { InvalidAuditEntry } from './audit.errors';

const fields: ChainedFields = {
  tenantId: 'acme',
  seq: 1,
  recordId: '0192f5a4-7b1e-7c3d-9a2b-1c2d3e4f5a6b',
  occurredAt: '2026-12-04T10:11:12.345Z',
  principalId: 'alice',
  credentialId: 'key_1',
  sourceAddress: '203.0.113.7',
  operation: 'a2a.SendMessage',
  binding: 'JSONRPC',
  resource: 'task/t-1',
  outcome: 'ok',
  reason: null,
  traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
};

const entry: AuditEntry = {
  tenantId: 'acme',
  principalId: 'alice',
  credentialId: 'key_1',
  sourceAddress: '203.0.113.7',
  operation: 'a2a.SendMessage',
  binding: 'JSONRPC',
  resource: 'task/t-1',
  outcome: 'ok',
  reason: null,
  traceId: null,
  occurredAt: new Date('2026-12-04T10:11:12.345Z'),
};

describe('canonicalRecord', () => {
  it('is the RFC 8785 form of every hashed field, nulls included, keys sorted', () => {
    expect(canonicalRecord(fields)).toBe(
      '{"binding":"JSONRPC","credentialId":"key_1","occurredAt":"2026-12-04T10:11:12.345Z",' +
        '"operation":"a2a.SendMessage","outcome":"ok","principalId":"alice","reason":null,' +
        '"recordId":"0192f5a4-7b1e-7c3d-9a2b-1c2d3e4f5a6b","resource":"task/t-1","seq":1,' +
        '"sourceAddress":"203.0.113.7","tenantId":"acme","traceId":"4bf92f3577b34da6a3ce929d0e0e4736"}',
    );
  });

  it('leaves out properties that are not record fields', () => {
    const padded = { ...fields, apiKey: 'sk_secret', message: 'hello' } as ChainedFields;
    expect(canonicalRecord(padded)).toBe(canonicalRecord(fields));
  });
});

describe('chainHash', () => {
  it('is SHA-256 over the previous hash bytes and the canonical form (a fixed vector)', () => {
    const expected = createHash('sha256')
      .update(Buffer.alloc(32))
      .update(canonicalRecord(fields))
      .digest('hex');
    expect(chainHash(GENESIS_HASH, fields)).toBe(expected);
    // Computed independently (Python hashlib over json.dumps(sort_keys=True)): pins the stored format.
    expect(expected).toBe('87381ce92fde89fd1ebe441cf93e1b4d2c7e162b8efbb93bc803086b10347a50');
  });

  it('changes with the previous hash and with every field', () => {
    const base = chainHash(GENESIS_HASH, fields);
    expect(chainHash('1'.repeat(64), fields)).not.toBe(base);
    const changes: Partial<ChainedFields>[] = [
      { tenantId: 'acme2' },
      { seq: 2 },
      { recordId: '0192f5a4-7b1e-7c3d-9a2b-1c2d3e4f5a6c' },
      { occurredAt: '2026-12-04T10:11:12.346Z' },
      { principalId: null },
      { credentialId: 'key_2' },
      { sourceAddress: '203.0.113.8' },
      { operation: 'a2a.CancelTask' },
      { binding: 'GRPC' },
      { resource: 'task/t-2' },
      { outcome: 'denied' },
      { reason: 'PERMISSION_DENIED' },
      { traceId: null },
    ];
    const hashes = changes.map((change) => chainHash(GENESIS_HASH, { ...fields, ...change }));
    expect(new Set([base, ...hashes]).size).toBe(changes.length + 1);
  });

  it('refuses a previous hash that is not 32 bytes of lowercase hex', () => {
    expect(() => chainHash('00', fields)).toThrow(TypeError);
    expect(() => chainHash('G'.repeat(64), fields)).toThrow(TypeError);
  });
});

/** The RFC 8785 form of `fields` without seq, written out by hand. */
const DIGESTED_JSON =
  '{"binding":"JSONRPC","credentialId":"key_1","occurredAt":"2026-12-04T10:11:12.345Z",' +
  '"operation":"a2a.SendMessage","outcome":"ok","principalId":"alice","reason":null,' +
  '"recordId":"0192f5a4-7b1e-7c3d-9a2b-1c2d3e4f5a6b","resource":"task/t-1",' +
  '"sourceAddress":"203.0.113.7","tenantId":"acme","traceId":"4bf92f3577b34da6a3ce929d0e0e4736"}';

describe('recordDigest (version 2)', () => {
  it('is SHA-256 of the canonical form of every field but seq, nulls included (a fixed vector)', () => {
    const expected = createHash('sha256').update(DIGESTED_JSON, 'utf8').digest('hex');
    expect(recordDigest(fields)).toBe(expected);
    // Computed independently (Python hashlib over json.dumps(sort_keys=True)): pins the stored format.
    expect(expected).toBe('820bacf2e441ba41fee2747d48cfe1ac1a6e513547ac5e98347cf4cf5243098b');
  });

  it('leaves out seq and properties that are not record fields', () => {
    const { seq: _, ...withoutSeq } = fields;
    const padded = { ...withoutSeq, seq: 99, apiKey: 'sk_secret' } as DigestedFields;
    expect(recordDigest(withoutSeq)).toBe(recordDigest(fields));
    expect(recordDigest(padded)).toBe(recordDigest(fields));
  });

  it('changes with every field', () => {
    const changes: Partial<DigestedFields>[] = [
      { tenantId: 'acme2' },
      { recordId: '0192f5a4-7b1e-7c3d-9a2b-1c2d3e4f5a6c' },
      { occurredAt: '2026-12-04T10:11:12.346Z' },
      { principalId: null },
      { credentialId: 'key_2' },
      { sourceAddress: '203.0.113.8' },
      { operation: 'a2a.CancelTask' },
      { binding: 'GRPC' },
      { resource: 'task/t-2' },
      { outcome: 'denied' },
      { reason: 'PERMISSION_DENIED' },
      { traceId: null },
    ];
    const digests = changes.map((change) => recordDigest({ ...fields, ...change }));
    expect(new Set([recordDigest(fields), ...digests]).size).toBe(changes.length + 1);
  });
});

describe('chainHashV2', () => {
  /** The link as SQL computes it, `sha256(prev_hash || int8send(seq) || digest)`, by hand. */
  const link = (prevHash: string, seqHex: string, digest: string): string =>
    createHash('sha256')
      .update(Buffer.from(prevHash + seqHex + digest, 'hex'))
      .digest('hex');

  it('is SHA-256 over the previous hash, seq as 8 big-endian bytes and the digest (a fixed vector)', () => {
    const digest = recordDigest(fields);
    const expected = link(GENESIS_HASH, '0000000000000001', digest);
    expect(chainHashV2(GENESIS_HASH, 1, digest)).toBe(expected);
    // The same from Postgres, sha256(decode(repeat('00', 32), 'hex') || int8send(1) || digest).
    expect(expected).toBe('a945051521c6c6213a6e28ce437b708675f8e55c7c9b086de0c096732b2bbb3e');
  });

  it('puts the seq most significant byte first, over all 8 bytes', () => {
    const prev = 'ab'.repeat(32);
    const digest = recordDigest(fields);
    expect(chainHashV2(prev, 258, digest)).toBe(link(prev, '0000000000000102', digest));
    expect(chainHashV2(prev, 2 ** 40 + 1, digest)).toBe(link(prev, '0000010000000001', digest));
    expect(chainHashV2(prev, 2, digest)).not.toBe(chainHashV2(prev, 1, digest));
  });

  it('refuses a hash or digest that is not 32 bytes of lowercase hex, and a seq that is not one', () => {
    const digest = recordDigest(fields);
    expect(() => chainHashV2('00', 1, digest)).toThrow(TypeError);
    expect(() => chainHashV2(GENESIS_HASH, 1, digest.toUpperCase())).toThrow(TypeError);
    expect(() => chainHashV2(GENESIS_HASH, 0, digest)).toThrow(RangeError);
    expect(() => chainHashV2(GENESIS_HASH, 1.5, digest)).toThrow(RangeError);
  });
});

describe('recordHash', () => {
  it('hashes by the version asked for', () => {
    expect(recordHash(1, GENESIS_HASH, fields)).toBe(chainHash(GENESIS_HASH, fields));
    expect(recordHash(2, GENESIS_HASH, fields)).toBe(
      chainHashV2(GENESIS_HASH, 1, recordDigest(fields)),
    );
    expect(recordHash(1, GENESIS_HASH, fields)).not.toBe(recordHash(2, GENESIS_HASH, fields));
  });
});

describe('checkEntry', () => {
  it('keeps the entry fields only, as a copy', () => {
    const checked = checkEntry({ ...entry, token: 'sk_secret' } as AuditEntry);
    expect(checked).toEqual(entry);
    expect(Object.keys(checked)).not.toContain('token');
    expect(checked.occurredAt).not.toBe(entry.occurredAt);
  });

  it.each<[string, Partial<Record<keyof AuditEntry, unknown>>]>([
    ['tenantId', { tenantId: '' }],
    ['tenantId', { tenantId: 'a'.repeat(129) }],
    ['principalId', { principalId: 'alice\nbob' }],
    ['principalId', { principalId: undefined }],
    ['credentialId', { credentialId: 'key\u0000' }],
    ['sourceAddress', { sourceAddress: '10.0.0.1\u2028' }],
    ['resource', { resource: 'task/\ud800' }],
    ['resource', { resource: 'r'.repeat(513) }],
    ['operation', { operation: 'SendMessage' }],
    ['operation', { operation: 'a2a.Send Message' }],
    ['binding', { binding: 'SOAP' }],
    ['outcome', { outcome: 'maybe' }],
    ['reason', { reason: 'permission denied' }],
    ['traceId', { traceId: 42 }],
    ['occurredAt', { occurredAt: new Date(Number.NaN) }],
    ['occurredAt', { occurredAt: new Date('+010000-01-01T00:00:00Z') }],
    ['occurredAt', { occurredAt: '2026-12-04T10:11:12.345Z' }],
  ])('refuses a bad %s', (field, change) => {
    const attempt = (): AuditEntry => checkEntry({ ...entry, ...change } as AuditEntry);
    expect(attempt).toThrow(InvalidAuditEntry);
    expect(attempt).toThrow(expect.objectContaining({ field }));
  });

  it('accepts every optional field as null', () => {
    const bare: AuditEntry = {
      ...entry,
      principalId: null,
      credentialId: null,
      sourceAddress: null,
      resource: null,
      reason: null,
      traceId: null,
    };
    expect(checkEntry(bare)).toEqual(bare);
  });
});

describe('sealAuditEntry', () => {
  const recordId = '0192f5a4-7b1e-7c3d-9a2b-1c2d3e4f5a6b';

  it('gives the checked fields, the record id, the time as ISO text and the digest', () => {
    const sealed = sealAuditEntry({ ...entry, token: 'sk_secret' } as AuditEntry, recordId);
    const { seq: _, ...digested } = { ...fields, traceId: null };
    expect(sealed).toEqual({ ...digested, digest: recordDigest(digested) });
    expect(Object.keys(sealed)).not.toContain('token');
    expect(JSON.parse(JSON.stringify(sealed))).toEqual(sealed);
  });

  it('refuses what checkEntry refuses', () => {
    const attempt = (): unknown => sealAuditEntry({ ...entry, operation: 'SendMessage' }, recordId);
    expect(attempt).toThrow(InvalidAuditEntry);
    expect(attempt).toThrow(expect.objectContaining({ field: 'operation' }));
  });

  it.each([
    ['upper case', recordId.toUpperCase()],
    ['without hyphens', recordId.replaceAll('-', '')],
    ['in braces', `{${recordId}}`],
    ['empty', ''],
    ['not a string', 42],
  ])(
    'refuses a record id %s (Postgres would give back another text than the one hashed)',
    (_, id) => {
      const attempt = (): unknown => sealAuditEntry(entry, id as string);
      expect(attempt).toThrow(InvalidAuditEntry);
      expect(attempt).toThrow(expect.objectContaining({ field: 'recordId' }));
    },
  );
});

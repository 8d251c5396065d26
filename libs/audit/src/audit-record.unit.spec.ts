import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  canonicalRecord,
  chainHash,
  checkEntry,
  GENESIS_HASH,
  type AuditEntry,
  type ChainedFields,
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

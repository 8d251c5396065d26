import { describe, expect, it } from 'vitest';
import { ChainVerifier, type BrokenRecord, type ChainHead, type StoredLink } from './audit-chain';
import { storedTime } from './audit-log';
import { GENESIS_HASH, recordHash, type AuditHashVersion } from './audit-record';

/** Which hash version the record at a seq has. */
type Versions = (seq: number) => AuditHashVersion;

/** A well-formed chain of `n` records, as the writers would have stored it. */
function chainOf(n: number, versionOf: Versions): StoredLink[] {
  const links: StoredLink[] = [];
  let prevHash = GENESIS_HASH;
  for (let seq = 1; seq <= n; seq++) {
    const fields = {
      tenantId: 'acme',
      seq,
      recordId: `00000000-0000-7000-8000-${String(seq).padStart(12, '0')}`,
      occurredAt: new Date(Date.UTC(2026, 11, 4, 0, 0, seq)).toISOString(),
      principalId: `user-${seq % 3}`,
      credentialId: null,
      sourceAddress: null,
      operation: 'a2a.SendMessage',
      binding: 'JSONRPC' as const,
      resource: `task/${seq}`,
      outcome: 'ok' as const,
      reason: null,
      traceId: null,
    };
    const hashVersion = versionOf(seq);
    const hash = recordHash(hashVersion, prevHash, fields);
    links.push({ ...fields, hashVersion, prevHash, hash });
    prevHash = hash;
  }
  return links;
}

function headOf(links: StoredLink[]): ChainHead {
  const last = links.at(-1);
  return last ? { seq: last.seq, hash: last.hash } : { seq: 0, hash: GENESIS_HASH };
}

/** What a verifier reports over `links` against `head`, and how many records it found intact. */
function verify(
  links: StoredLink[],
  head: ChainHead | null,
): { verified: number; broken: BrokenRecord | null } {
  const verifier = new ChainVerifier(head);
  for (const link of links) {
    const broken = verifier.next(link);
    if (broken) {
      return { verified: verifier.tip.seq, broken };
    }
  }
  return { verified: verifier.tip.seq, broken: verifier.end() };
}

const at = (links: StoredLink[], seq: number): StoredLink => links[seq - 1]!;

describe.each<[string, Versions]>([
  ['version 1', () => 1],
  ['version 2', () => 2],
  ['version 1, then 2 from seq 3', (seq) => (seq < 3 ? 1 : 2)],
])('ChainVerifier, records of %s', (_, versionOf) => {
  const chain = (n: number): StoredLink[] => chainOf(n, versionOf);

  it('accepts an intact chain and ends at its head', () => {
    const links = chain(10);
    const verifier = new ChainVerifier(headOf(links));
    expect(links.map((link) => verifier.next(link))).toEqual(links.map(() => null));
    expect(verifier.end()).toBeNull();
    expect(verifier.tip).toEqual(headOf(links));
  });

  it('accepts an empty chain, with or without a head row', () => {
    expect(verify([], null)).toEqual({ verified: 0, broken: null });
    expect(verify([], { seq: 0, hash: GENESIS_HASH })).toEqual({ verified: 0, broken: null });
  });

  it('reports an edited field as a hash mismatch at that record', () => {
    const links = chain(6);
    const edited = links.map((link) =>
      link.seq === 4 ? { ...link, outcome: 'denied' as const } : link,
    );
    expect(verify(edited, headOf(links))).toEqual({
      verified: 3,
      broken: { seq: 4, recordId: at(links, 4).recordId, problem: 'hash mismatch' },
    });
  });

  it('reports a deleted middle record as missing at its seq', () => {
    const links = chain(6);
    expect(
      verify(
        links.filter((link) => link.seq !== 3),
        headOf(links),
      ),
    ).toEqual({
      verified: 2,
      broken: { seq: 3, problem: 'missing record' },
    });
  });

  it('reports a deletion hidden by renumbering as a hash mismatch where the seq was changed', () => {
    const links = chain(6);
    const renumbered = links
      .filter((link) => link.seq !== 3)
      .map((link) => (link.seq > 3 ? { ...link, seq: link.seq - 1 } : link));
    expect(verify(renumbered, headOf(renumbered)).broken).toEqual({
      seq: 3,
      recordId: at(links, 4).recordId,
      problem: 'hash mismatch',
    });
  });

  it('reports two swapped records at the first of them, whether their hashes moved or not', () => {
    const links = chain(6);
    const swapAll = links.map((link) =>
      link.seq === 2
        ? { ...at(links, 5), seq: 2 }
        : link.seq === 5
          ? { ...at(links, 2), seq: 5 }
          : link,
    );
    expect(verify(swapAll, headOf(links)).broken).toEqual({
      seq: 2,
      recordId: at(links, 5).recordId,
      problem: 'hash mismatch',
    });
    const { prevHash, hash } = at(links, 2);
    const swapFields = links.map((link) =>
      link.seq === 2 ? { ...at(links, 5), seq: 2, prevHash, hash } : link,
    );
    expect(verify(swapFields, headOf(links)).broken?.problem).toBe('hash mismatch');
  });

  it('reports a record rewritten with a recomputed hash as a broken link at the next one', () => {
    const links = chain(5);
    const forged = { ...at(links, 3), principalId: 'mallory' };
    const reforged = {
      ...forged,
      hash: recordHash(forged.hashVersion, forged.prevHash, forged),
    };
    const tampered = links.map((link) => (link.seq === 3 ? reforged : link));
    expect(verify(tampered, headOf(links)).broken).toEqual({
      seq: 4,
      recordId: at(links, 4).recordId,
      problem: 'broken link',
    });
  });

  it('reports deleted last records as a head mismatch at the first missing seq', () => {
    const links = chain(5);
    expect(verify(links.slice(0, 3), headOf(links))).toEqual({
      verified: 3,
      broken: { seq: 4, problem: 'head mismatch' },
    });
    expect(verify([], headOf(links)).broken).toEqual({ seq: 1, problem: 'head mismatch' });
  });

  it('reports records beyond the head, and a head that does not match the last record', () => {
    const links = chain(5);
    expect(verify(links, headOf(links.slice(0, 4))).broken).toEqual({
      seq: 5,
      recordId: at(links, 5).recordId,
      problem: 'head mismatch',
    });
    expect(verify(links, null).broken).toEqual({
      seq: 1,
      recordId: at(links, 1).recordId,
      problem: 'head mismatch',
    });
    expect(verify(links, { seq: 5, hash: 'f'.repeat(64) }).broken).toEqual({
      seq: 5,
      recordId: at(links, 5).recordId,
      problem: 'head mismatch',
    });
  });
});

describe('ChainVerifier, hash versions', () => {
  const mixed = chainOf(6, (seq) => (seq < 4 ? 1 : 2));

  it('hashes each record by its own version: a flipped version reads as an edit', () => {
    for (const seq of [2, 5]) {
      const flipped = mixed.map((link) =>
        link.seq === seq
          ? { ...link, hashVersion: (3 - link.hashVersion) as AuditHashVersion }
          : link,
      );
      expect(verify(flipped, headOf(mixed))).toEqual({
        verified: seq - 1,
        broken: { seq, recordId: at(mixed, seq).recordId, problem: 'hash mismatch' },
      });
    }
  });

  it('matches no record with a version it has no definition for', () => {
    const unknown = mixed.map((link) =>
      link.seq === 4 ? { ...link, hashVersion: 3 as AuditHashVersion } : link,
    );
    expect(verify(unknown, headOf(mixed)).broken).toEqual({
      seq: 4,
      recordId: at(mixed, 4).recordId,
      problem: 'hash mismatch',
    });
  });
});

describe('storedTime', () => {
  it('renders a millisecond time exactly as the writer hashed it', () => {
    const time = new Date('2026-12-04T10:11:12.345Z');
    expect(storedTime(`${time.getTime() * 1000}.000000`)).toBe(time.toISOString());
    expect(storedTime(`${time.getTime() * 1000}`)).toBe(time.toISOString());
  });

  it('renders times the writer cannot have written as no ISO time', () => {
    const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
    for (const stored of [
      '1796379072345678.000000',
      '-63517824000000000.000000',
      '253402300800000000',
      'Infinity',
      '-Infinity',
    ]) {
      expect(storedTime(stored)).not.toMatch(iso);
    }
  });
});

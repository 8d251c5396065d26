import { tenantIdOf } from '@lib/ids';
/**
 * Audit writer throughput (`npm run build && node dist/bench/audit.bench.js`): records/s of one `AuditWriter`
 * on a throw-away database, with 1, 16 and 64 callers that each record an entry, wait until it is durable and
 * record the next (as request paths do), over 8 tenants, for `--seconds N` per level (default 5). Prints
 * records/s, flushes/s and records per flush, then verifies every chain.
 */
import { AuditLog, AuditWriter, type AuditEntry } from '@lib/audit';
import { createTestDatabase } from '@lib/testing';
import { performance } from 'node:perf_hooks';
import { fmt, printMachine, table } from './support/figures';

const CONCURRENCY = [1, 16, 64];
const TENANTS = Array.from({ length: 8 }, (_, i) => `bench-${i}`);

function entry(n: number): AuditEntry {
  return {
    tenantId: TENANTS[n % TENANTS.length]!,
    principalId: `user-${n % 100}`,
    credentialId: `key-${n % 100}`,
    sourceAddress: '198.51.100.20',
    operation: 'a2a.SendMessage',
    binding: 'JSONRPC',
    resource: `task/${n}`,
    outcome: 'ok',
    reason: null,
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    occurredAt: new Date(),
  };
}

async function main(): Promise<void> {
  const at = process.argv.indexOf('--seconds');
  const seconds = at >= 0 ? Number(process.argv[at + 1]) : 5;
  const db = await createTestDatabase('audit_bench');
  try {
    const version = await db.pool.query<{ v: string }>(
      "SELECT current_setting('server_version') AS v",
    );
    printMachine(version.rows[0]?.v ?? 'unknown');
    const rows: string[][] = [];
    let n = 0;
    for (const callers of CONCURRENCY) {
      const writer = new AuditWriter(db.pool);
      const deadline = performance.now() + seconds * 1_000;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: callers }, async () => {
          while (performance.now() < deadline) {
            await writer.record(entry(n++));
          }
        }),
      );
      const elapsed = (performance.now() - started) / 1_000;
      await writer.close();
      const { records, flushes } = writer.stats;
      rows.push([
        String(callers),
        fmt(records / elapsed, 0),
        fmt(flushes / elapsed, 0),
        fmt(records / flushes, 1),
      ]);
    }
    console.log('');
    console.log('## Audit writer');
    console.log(table(['callers', 'records/s', 'flushes/s', 'records/flush'], rows));
    const log = new AuditLog(db.pool);
    for (const tenantId of TENANTS) {
      const result = await log.verify(tenantIdOf(tenantId));
      if (!result.ok) {
        throw new Error(`chain of ${tenantId} broken: ${JSON.stringify(result.firstBroken)}`);
      }
    }
    console.log(`\nall ${TENANTS.length} chains verified (${n} records)`);
  } finally {
    await db.drop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});

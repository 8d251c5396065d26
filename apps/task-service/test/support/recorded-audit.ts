import type { AuditEntry } from '@lib/audit';
import { AuditSink } from '../../src/write/task-writer';

/** An {@link AuditSink} that keeps the entries recorded apart, for unit tests of the writer's callers. */
export class RecordedAudit extends AuditSink {
  readonly entries: AuditEntry[] = [];

  recordApart(entry: AuditEntry): Promise<void> {
    this.entries.push(entry);
    return Promise.resolve();
  }
}

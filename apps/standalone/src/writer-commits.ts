// The standalone process is the one place that composes other apps' code (ARCHITECTURE.md).
import { LocalCommits, type LocalCommitListener } from '../../ingress/src/streaming/local-commits';
import type { TaskWriter } from '../../task-service/src/write/task-writer';

/** The ingress feed's view of the task-service writer of the same process (ADR 0008). */
export class WriterCommits extends LocalCommits {
  constructor(private readonly writer: TaskWriter) {
    super();
  }

  subscribe(listener: LocalCommitListener): () => void {
    return this.writer.onCommitted((tenantId, after, events) => {
      const from = after.version - events.length;
      listener(
        tenantId,
        after.task.id,
        events.map((event, index) => ({ version: from + index + 1, event })),
      );
    });
  }

  settling(tenantId: string, taskId: string): Promise<void> | undefined {
    return this.writer.settling(tenantId, taskId);
  }

  version(tenantId: string, taskId: string): number | undefined {
    const state = this.writer.peek(tenantId, taskId);
    return state?.status === 'present' ? state.version : undefined;
  }
}

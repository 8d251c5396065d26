// The standalone process is the one place that composes other apps' code (ARCHITECTURE.md).
import type { TaskRef } from '@lib/tenancy';
import { LocalCommits, type LocalCommitListener } from '../../ingress/src/streaming/local-commits';
import type { TaskWriter } from '../../task-service/src/write/task-writer';

/** The ingress feed's view of the task-service writer of the same process (ADR 0008). */
export class WriterCommits extends LocalCommits {
  constructor(private readonly writer: TaskWriter) {
    super();
  }

  subscribe(listener: LocalCommitListener): () => void {
    return this.writer.onCommitted((task, after, events) => {
      const from = after.version - events.length;
      listener(
        task,
        events.map((event, index) => ({ version: from + index + 1, event })),
      );
    });
  }

  settling(task: TaskRef): Promise<void> | undefined {
    return this.writer.settling(task);
  }

  version(task: TaskRef): number | undefined {
    const state = this.writer.peek(task);
    return state?.status === 'present' ? state.version : undefined;
  }
}

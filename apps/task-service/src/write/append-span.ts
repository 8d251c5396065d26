import { ATTRIBUTES, inSpan, SPANS, tracingEnabled } from '@lib/observability';
import type { Span } from '@opentelemetry/api';
import type { WriteCommand, WriteOutcome } from './task-writer';

/**
 * A command's write, in its span `task-service append` (a child of the operation that asked for it) from
 * the moment it is queued until its batch's outcome: the group commit's wait and the commit itself. The
 * span says which batch took the command ({@link noteBatch}) and how it ended. With tracing off, `write`
 * runs as it is.
 */
export function tracedWrite(
  command: WriteCommand,
  write: (span: Span | null) => Promise<WriteOutcome>,
): Promise<WriteOutcome> {
  if (!tracingEnabled()) {
    return write(null);
  }
  const attributes = {
    [ATTRIBUTES.tenant]: command.tenantId,
    [ATTRIBUTES.taskId]: command.taskId,
  };
  return inSpan(SPANS.append, { attributes }, (span) =>
    write(span).then((outcome) => {
      span.setAttribute(ATTRIBUTES.writeOutcome, outcome.kind);
      return outcome;
    }),
  );
}

/**
 * The batch (this replica's `number`-th) that takes these commands: on each command's span, so that the
 * commands committed together can be found from any of them.
 */
export function noteBatch(batch: readonly { span: Span | null }[], number: number): void {
  for (const { span } of batch) {
    span?.setAttributes({
      [ATTRIBUTES.writeBatch]: number,
      [ATTRIBUTES.writeBatchSize]: batch.length,
    });
  }
}

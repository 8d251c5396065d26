import type { CommittedTaskEvent } from '@lib/event-store';
import { contextOf, inSpan, SPANS, tracingEnabled } from '@lib/observability';
import { SpanKind, trace, type Link } from '@opentelemetry/api';

/**
 * Publishes one batch in the span `relay publish`. A batch holds events of many requests, so the span is
 * a trace of its own, linked to the trace of each event (its `traceparent`, which its Kafka record carries
 * on; the first 128 distinct ones, the SDK's default link limit). With tracing off, `publish` runs as it is.
 */
export function inPublishSpan(
  topic: string,
  rows: readonly CommittedTaskEvent[],
  publish: () => Promise<void>,
): Promise<void> {
  if (!tracingEnabled()) {
    return publish();
  }
  const links: Link[] = [];
  for (const traceparent of new Set(rows.map((row) => row.metadata.traceparent))) {
    const context = trace.getSpanContext(contextOf(traceparent));
    if (context) {
      links.push({ context });
    }
  }
  const attributes = {
    'messaging.system': 'kafka',
    'messaging.operation.type': 'send',
    'messaging.destination.name': topic,
    'messaging.batch.message_count': rows.length,
  };
  return inSpan(
    SPANS.relayPublish,
    { kind: SpanKind.PRODUCER, root: true, links, attributes },
    publish,
  );
}

import {
  activeTraceparent,
  ATTRIBUTES,
  contextOf,
  inSpan,
  markFailed,
  SPANS,
  tracingEnabled,
} from '@lib/observability';
import type { DeliveryResult } from '@lib/push';
import { SpanKind } from '@opentelemetry/api';
import {
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
} from '@opentelemetry/semantic-conventions';
import type { ClaimedDelivery } from './delivery-store';

/**
 * Sends one delivery attempt in the span `push deliver`, a child of the trace of the event it delivers;
 * `send` gets the `traceparent` the POST carries: the span's, or with tracing off the event's own. The
 * span names the delivery, never its URL (which may hold a secret) or body.
 */
export function inDeliverSpan(
  delivery: ClaimedDelivery,
  send: (traceparent: string | null) => Promise<DeliveryResult>,
): Promise<DeliveryResult> {
  if (!tracingEnabled()) {
    return send(delivery.traceparent);
  }
  const attributes = {
    [ATTRIBUTES.tenant]: delivery.lane.tenantId,
    [ATTRIBUTES.taskId]: delivery.lane.taskId,
    [ATTRIBUTES.generation]: delivery.generation,
    [ATTRIBUTES.pushConfigId]: delivery.lane.configId,
    [ATTRIBUTES.deliveryId]: delivery.deliveryId,
    [ATTRIBUTES.attempt]: delivery.attempt,
    [ATTR_HTTP_REQUEST_METHOD]: 'POST',
  };
  const parent = contextOf(delivery.traceparent ?? undefined);
  return inSpan(
    SPANS.pushDeliver,
    { kind: SpanKind.CLIENT, attributes },
    (span) =>
      send(activeTraceparent() ?? null).then((result) => {
        if (result.status !== undefined) {
          span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, result.status);
        }
        if (result.outcome !== 'delivered') {
          markFailed(span, { reason: result.outcome });
        }
        return result;
      }),
    parent,
  );
}

import { context, propagation, ROOT_CONTEXT, type Context } from '@opentelemetry/api';

/**
 * The W3C `traceparent` of a context's span, as it travels between processes (HTTP and gRPC headers, the
 * worker assignment and updates, event metadata, Kafka headers). Undefined without tracing (no propagator is
 * registered) or without a span.
 */
export function traceparentOf(ctx: Context = context.active()): string | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  return carrier['traceparent'];
}

/**
 * `base` (default: none) with the remote span a `traceparent` names as its parent: spans started in it
 * continue that trace. A missing or malformed value, or tracing off, leaves `base` as it is.
 */
export function contextOf(traceparent: string | undefined, base: Context = ROOT_CONTEXT): Context {
  return traceparent ? propagation.extract(base, { traceparent }) : base;
}

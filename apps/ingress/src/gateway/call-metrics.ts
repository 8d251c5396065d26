import { isA2aMethod, type A2aError } from '@lib/a2a-protocol';
import { metrics } from '@lib/observability';
import { performance } from 'node:perf_hooks';
import type { A2aBinding } from './a2a-gateway';

/**
 * Counts one A2A call in the process's metrics (docs/observability.md "Metrics"): its binding, its method
 * (`unknown` for a name that is not an A2A method, so clients cannot grow the label set), the error it was
 * answered with, and its duration since `started` (`performance.now()` when it arrived). A stream is
 * observed when its first event is ready.
 */
export function observeCall(
  binding: A2aBinding,
  method: string,
  started: number,
  error?: A2aError,
): void {
  const labels = { binding, method: isA2aMethod(method) ? method : 'unknown' };
  metrics.requests.inc(labels);
  if (error) {
    metrics.requestErrors.inc({ ...labels, reason: error.reason });
  }
  metrics.requestDuration.observe(labels, (performance.now() - started) / 1_000);
}

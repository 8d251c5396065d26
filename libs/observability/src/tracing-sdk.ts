/**
 * What tracing needs of the OpenTelemetry SDK and its OTLP exporter (a few hundred modules), in a module of its
 * own: a process loads it only when it traces (`startProcessObservability`), so one with tracing off (an example
 * worker, say) starts faster and keeps a smaller heap.
 */
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { OtlpTracing, TracingSetup } from './tracing';

/** Spans batched to the OTLP/HTTP receiver `otlp` names. */
export function otlpTracingSetup({ url, headers, ...setup }: OtlpTracing): TracingSetup {
  const exporter = new OTLPTraceExporter({ url, headers });
  return { ...setup, spanProcessor: new BatchSpanProcessor(exporter) };
}

/**
 * A tracer provider for `setup`, registered with the W3C trace-context propagator and the AsyncLocalStorage
 * context manager (the active span follows async calls).
 */
export function registerProvider(setup: TracingSetup): NodeTracerProvider {
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({
      ...setup.resourceAttributes,
      [ATTR_SERVICE_NAME]: setup.serviceName,
    }),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(setup.sampleRatio) }),
    spanProcessors: [setup.spanProcessor],
  });
  provider.register({ propagator: new W3CTraceContextPropagator() });
  return provider;
}

import type { TracingConfig } from '@lib/config';
import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
  type SpanOptions,
  type Tracer,
} from '@opentelemetry/api';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { outsideLogContext } from './log-context';
import { contextOf, traceparentOf } from './trace-context';

/** How a process traces: where its spans go, under which service name, and how many new traces it keeps. */
export interface TracingSetup {
  serviceName: string;
  /** Fraction of new traces sampled; a caller's sampling decision is always followed. */
  sampleRatio: number;
  spanProcessor: SpanProcessor;
  resourceAttributes?: Readonly<Record<string, string>>;
}

/** Tracing to an OTLP/HTTP receiver (JSON), as the standard OTEL_* variables describe it. */
export interface OtlpTracing extends Omit<TracingSetup, 'spanProcessor'> {
  /** Where the spans are sent. */
  url: string;
  headers?: Record<string, string>;
}

/** What the OTEL_* variables ask of `app`'s process, or null when tracing is off (no endpoint, or OTEL_SDK_DISABLED). */
export function otlpTracing(app: string, config: TracingConfig): OtlpTracing | null {
  const base = config.OTEL_EXPORTER_OTLP_ENDPOINT?.replace(/\/+$/, '');
  const url = config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (base ? `${base}/v1/traces` : undefined);
  if (config.OTEL_SDK_DISABLED || !url) {
    return null;
  }
  return {
    url,
    headers: config.OTEL_EXPORTER_OTLP_HEADERS,
    serviceName: config.OTEL_SERVICE_NAME ?? `a2a-${app}`,
    sampleRatio: config.OTEL_TRACES_SAMPLER_ARG,
    resourceAttributes: config.OTEL_RESOURCE_ATTRIBUTES,
  };
}

/** A registered tracer provider (`registerProvider` of `./tracing-sdk`). */
export interface TracingProvider {
  getTracer(name: string): Tracer;
  /** Sends the spans still buffered and stops. */
  shutdown(): Promise<void>;
}

const TRACER_NAME = 'a2a-platform';

let provider: TracingProvider | null = null;
let tracer: Tracer = trace.getTracer(TRACER_NAME);

/** The platform's tracer: the started provider's, else the API's, whose spans record nothing. */
export function platformTracer(): Tracer {
  return tracer;
}

/** Whether this process records spans. Instrumented code skips building spans and attributes when not. */
export function tracingEnabled(): boolean {
  return provider !== null;
}

/** Records the platform's spans with `registered` from now on (the process's start). */
export function startTracing(registered: TracingProvider): void {
  if (provider) {
    throw new Error('tracing is started already');
  }
  provider = registered;
  tracer = provider.getTracer(TRACER_NAME);
}

/**
 * Sends the spans still buffered and unregisters the provider (a process's shutdown path; tests start
 * tracing again after it). Does nothing when tracing is off.
 */
export async function stopTracing(): Promise<void> {
  const stopping = provider;
  if (!stopping) {
    return;
  }
  provider = null;
  tracer = trace.getTracer(TRACER_NAME);
  try {
    await stopping.shutdown();
  } finally {
    trace.disable();
    context.disable();
    propagation.disable();
  }
}

/** A span that records nothing: what instrumented code gets when tracing is off. */
const NOT_RECORDING = trace.wrapSpanContext({
  traceId: '00000000000000000000000000000000',
  spanId: '0000000000000000',
  traceFlags: 0,
});

/**
 * Runs `work` in a new span, active for everything `work` calls, a child of `parent` (default: the active
 * context); ends it when `work` settles. A failure sets the span's status to ERROR with the error's class
 * (never its message, which may quote client input). With tracing off, `work` runs at once with a
 * non-recording span: no span, no context switch, no extra await.
 */
export function inSpan<T>(
  name: string,
  options: SpanOptions,
  work: (span: Span) => Promise<T>,
  parent?: Context,
): Promise<T> {
  if (!provider) {
    return work(NOT_RECORDING);
  }
  return tracer.startActiveSpan(name, options, parent ?? context.active(), async (span) => {
    try {
      return await work(span);
    } catch (error) {
      markFailed(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/** The `traceparent` of the active span when this process traces (for what it writes or sends on). */
export function activeTraceparent(): string | undefined {
  return provider ? traceparentOf() : undefined;
}

/**
 * Runs synchronous `work` in a new span (active meanwhile), a child of `parent` (default: the active
 * context), and ends it. With tracing off, `work` runs at once with a non-recording span.
 */
export function inSpanSync<T>(
  name: string,
  options: SpanOptions,
  work: (span: Span) => T,
  parent?: Context,
): T {
  if (!provider) {
    return work(NOT_RECORDING);
  }
  return tracer.startActiveSpan(name, options, parent ?? context.active(), (span) => {
    try {
      return work(span);
    } catch (error) {
      markFailed(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/**
 * Runs `work` with `traceparent`'s span as the parent of the spans it starts (a task's request, resumed by
 * work done later for it). Without a `traceparent` (or tracing off), `work` runs as it is.
 */
export function underTraceparent<T>(traceparent: string | undefined, work: () => T): T {
  return provider && traceparent ? context.with(contextOf(traceparent), work) : work();
}

/** ERROR status with the error's class (an A2A or worker error's reason when it has one). */
export function markFailed(span: Span, error: unknown): void {
  const reason = (error as { reason?: unknown } | null)?.reason;
  const type =
    typeof reason === 'string' ? reason : error instanceof Error ? error.name : typeof error;
  span.setAttribute('error.type', type);
  span.setStatus({ code: SpanStatusCode.ERROR, message: type });
}

/**
 * Runs `work` outside of the current call: no active span, no log context. For work that serves many
 * calls (a write batch, a dispatch round), which must not be counted in the call that happened to start it.
 */
export function detached<T>(work: () => T): T {
  return outsideLogContext(() => (provider ? context.with(ROOT_CONTEXT, work) : work()));
}

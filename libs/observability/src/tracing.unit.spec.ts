import { loadConfig, tracingSchema } from '@lib/config';
import { context, ROOT_CONTEXT, SpanStatusCode, trace } from '@opentelemetry/api';
import {
  BatchSpanProcessor,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import type { DestinationStream } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { addToLogContext, currentLogContext, withLogContext } from './log-context';
import { createLogger } from './logging';
import { contextOf, traceparentOf } from './trace-context';
import {
  activeTraceparent,
  detached,
  inSpan,
  inSpanSync,
  otlpTracing,
  startTracing,
  stopTracing,
  tracingEnabled,
  underTraceparent,
} from './tracing';
import { otlpTracingSetup, registerProvider } from './tracing-sdk';

const CALLER = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const UNSAMPLED = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00';

describe('trace context propagation', () => {
  // A fresh one per test: a provider's shutdown shuts its exporter down.
  let exporter: InMemorySpanExporter;

  beforeEach(() => {
    exporter = new InMemorySpanExporter();
    startTracing(
      registerProvider({
        serviceName: 'test',
        sampleRatio: 1,
        spanProcessor: new SimpleSpanProcessor(exporter),
      }),
    );
  });

  afterEach(async () => {
    await stopTracing();
  });

  it('continues a caller’s traceparent and hands on its own span’s', async () => {
    const sent = await inSpan(
      'child',
      {},
      () => Promise.resolve(traceparentOf()),
      contextOf(CALLER),
    );
    expect(sent).toMatch(/^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-01$/);
    const [span] = exporter.getFinishedSpans();
    expect(span?.parentSpanContext?.spanId).toBe('b7ad6b7169203331');
    expect(sent).toBe(`00-${span?.spanContext().traceId}-${span?.spanContext().spanId}-01`);
  });

  it('keeps a caller’s decision not to sample (parent-based sampling)', async () => {
    const sent = await inSpan(
      'child',
      {},
      () => Promise.resolve(traceparentOf()),
      contextOf(UNSAMPLED),
    );
    expect(sent).toMatch(/-00$/);
    expect(exporter.getFinishedSpans()).toHaveLength(0);
  });

  it.each([undefined, '', 'garbage', '00-00000000000000000000000000000000-b7ad6b7169203331-01'])(
    'starts a new trace for %j',
    (traceparent) => {
      expect(contextOf(traceparent)).toBe(ROOT_CONTEXT);
      inSpanSync('root', {}, () => undefined, contextOf(traceparent));
      const spans = exporter.getFinishedSpans();
      expect(spans).toHaveLength(1);
      expect(spans[0]?.parentSpanContext).toBeUndefined();
    },
  );

  it('nests spans started while one is active, across awaits', async () => {
    await inSpan('outer', {}, async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      await inSpan('inner', {}, () => Promise.resolve());
    });
    const [inner, outer] = exporter.getFinishedSpans();
    expect(inner?.name).toBe('inner');
    expect(inner?.parentSpanContext?.spanId).toBe(outer?.spanContext().spanId);
    expect(inner?.spanContext().traceId).toBe(outer?.spanContext().traceId);
  });

  it('marks a failed span with the error’s reason or class, not its message', async () => {
    const failure = Object.assign(new Error('the user wrote: secret text'), { reason: 'INTERNAL' });
    await expect(inSpan('failing', {}, () => Promise.reject(failure))).rejects.toBe(failure);
    expect(() =>
      inSpanSync('throwing', {}, () => {
        throw new TypeError('more secret text');
      }),
    ).toThrow(TypeError);
    const [failing, throwing] = exporter.getFinishedSpans();
    expect(failing?.status).toStrictEqual({ code: SpanStatusCode.ERROR, message: 'INTERNAL' });
    expect(failing?.attributes['error.type']).toBe('INTERNAL');
    expect(throwing?.attributes['error.type']).toBe('TypeError');
    expect(JSON.stringify([failing?.events, throwing?.events])).not.toContain('secret');
  });

  it('runs detached work outside the call: no active span, no log context', async () => {
    const seen = await withLogContext({ requestId: 'r-1' }, () =>
      inSpan('call', {}, () =>
        Promise.resolve(
          detached(() => ({ span: trace.getActiveSpan(), log: currentLogContext() })),
        ),
      ),
    );
    expect(seen).toStrictEqual({ span: undefined, log: undefined });
  });

  it('resumes the trace of a stored traceparent for work done later', () => {
    const resumed = underTraceparent(CALLER, () => activeTraceparent());
    expect(resumed).toBe(CALLER);
    expect(underTraceparent(undefined, () => activeTraceparent())).toBeUndefined();
  });

  it('writes the ids of the active span on log lines', () => {
    const lines: string[] = [];
    const destination: DestinationStream = { write: (line: string) => lines.push(line) };
    const logger = createLogger({ app: 'a', level: 'info', format: 'json', destination });
    inSpanSync('logged', {}, (span) => {
      withLogContext({ traceId: 'caller-trace-when-off' }, () => {
        addToLogContext({ taskId: 't' });
        logger.info('inside');
      });
      const entry = JSON.parse(lines[0] ?? '{}') as Record<string, unknown>;
      expect(entry).toMatchObject({
        traceId: span.spanContext().traceId,
        spanId: span.spanContext().spanId,
        taskId: 't',
      });
    });
  });
});

describe('tracing off', () => {
  it('is the default: spans cost nothing, no traceparent is made', async () => {
    expect(tracingEnabled()).toBe(false);
    let recording: boolean | undefined;
    const result = await inSpan('unseen', {}, (span) => {
      recording = span.isRecording();
      return Promise.resolve(traceparentOf());
    });
    expect(recording).toBe(false);
    expect(result).toBeUndefined();
    expect(contextOf(CALLER)).toBe(ROOT_CONTEXT);
    expect(underTraceparent(CALLER, () => context.active())).toBe(ROOT_CONTEXT);
  });
});

describe('otlpTracing (OTEL_* variables)', () => {
  const setup = (env: Record<string, string>) =>
    otlpTracing('relay', loadConfig(tracingSchema, env));

  it('is off without an endpoint, or when OTEL_SDK_DISABLED is true', () => {
    expect(setup({})).toBeNull();
    expect(
      setup({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }),
    ).toBeNull();
  });

  it('names the service a2a-<app> unless OTEL_SERVICE_NAME says otherwise, and reads the sample ratio', () => {
    expect(setup({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' })).toMatchObject({
      url: 'http://collector:4318/v1/traces',
      serviceName: 'a2a-relay',
      sampleRatio: 1,
      resourceAttributes: {},
    });
    expect(
      setup({
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces',
        OTEL_SERVICE_NAME: 'relay-eu',
        OTEL_TRACES_SAMPLER_ARG: '0.25',
        OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=prod,team=a%20b',
      }),
    ).toMatchObject({
      url: 'http://collector:4318/v1/traces',
      serviceName: 'relay-eu',
      sampleRatio: 0.25,
      resourceAttributes: { 'deployment.environment.name': 'prod', team: 'a b' },
    });
  });

  it('batches the spans to that receiver (the SDK half, loaded only by a process that traces)', async () => {
    const otlp = setup({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' });
    expect(otlp).not.toBeNull();
    const built = otlpTracingSetup(otlp!);
    expect(built).toMatchObject({ serviceName: 'a2a-relay', sampleRatio: 1 });
    expect(built.spanProcessor).toBeInstanceOf(BatchSpanProcessor);
    expect(built).not.toHaveProperty('url');
    await built.spanProcessor.shutdown();
  });

  it('refuses key=value lists it cannot read', () => {
    expect(() => loadConfig(tracingSchema, { OTEL_EXPORTER_OTLP_HEADERS: 'novalue' })).toThrow(
      /OTEL_EXPORTER_OTLP_HEADERS/,
    );
    expect(
      loadConfig(tracingSchema, { OTEL_EXPORTER_OTLP_HEADERS: 'api-key=a%3Db, x=1' }),
    ).toMatchObject({ OTEL_EXPORTER_OTLP_HEADERS: { 'api-key': 'a=b', x: '1' } });
  });
});

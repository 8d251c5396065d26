import { Test } from '@nestjs/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ProcessLifecycle, type DrainReport } from './lifecycle';
import { PlatformMetrics } from './metrics';
import { OpsModule, OpsServer, ReadinessProbe } from './ops-server';

const never = (): Promise<void> => new Promise<void>(() => undefined);

describe('ProcessLifecycle', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('is starting, then serving, then draining for good', async () => {
    const lifecycle = new ProcessLifecycle();
    expect(lifecycle.state).toBe('starting');
    lifecycle.serving();
    expect(lifecycle.state).toBe('serving');
    await lifecycle.drain(10);
    expect(lifecycle.draining).toBe(true);
    lifecycle.serving();
    expect(lifecycle.state).toBe('draining');
  });

  it('runs every drain step at once, bounded by the grace, and reports each', async () => {
    vi.useFakeTimers();
    const lifecycle = new ProcessLifecycle();
    const deadlines: number[] = [];
    lifecycle.addDrainStep('quick', (deadline) => {
      deadlines.push(deadline);
      return Promise.resolve();
    });
    lifecycle.addDrainStep('stuck', never);
    lifecycle.addDrainStep('broken', () => Promise.reject(new Error('no')));
    const removed = lifecycle.addDrainStep('removed', never);
    removed();
    const started = Date.now();
    let reports: DrainReport[] | undefined;
    const draining = lifecycle.drain(100).then((done) => (reports = done));
    await vi.advanceTimersByTimeAsync(99);
    expect(reports).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    await draining;
    expect(reports?.map(({ step, outcome, ms }) => [step, outcome, ms])).toStrictEqual([
      ['quick', 'done', 0],
      ['stuck', 'timed out', 100],
      ['broken', 'failed', 0],
    ]);
    expect(deadlines).toStrictEqual([started + 100]);
  });

  it('keeps a check registered under the same name by another component when the first is removed', () => {
    const lifecycle = new ProcessLifecycle();
    const first = (): Promise<void> => Promise.resolve();
    const second = (): Promise<void> => Promise.resolve();
    const removeFirst = lifecycle.addReadinessCheck('postgres', first);
    lifecycle.addReadinessCheck('postgres', second);
    removeFirst();
    expect(lifecycle.readinessChecks()).toStrictEqual([['postgres', second]]);
  });
});

describe('OpsServer', () => {
  let server: OpsServer | null = null;

  afterEach(async () => {
    await server?.close();
    server = null;
  });

  async function start(lifecycle: ProcessLifecycle, registry = new PlatformMetrics()) {
    server = await OpsServer.start({ OPS_HOST: '127.0.0.1', OPS_PORT: 0 }, lifecycle, registry);
    const module = await Test.createTestingModule({ imports: [OpsModule] }).compile();
    return { server, probe: module.get(ReadinessProbe), registry };
  }

  async function get(path: string, method = 'GET'): Promise<{ status: number; body: string }> {
    const response = await fetch(`${server!.url}${path}`, { method });
    return { status: response.status, body: await response.text() };
  }

  it('is alive at once, ready only once attached and while every check passes, never while draining', async () => {
    const lifecycle = new ProcessLifecycle();
    let postgresUp = true;
    lifecycle.addReadinessCheck('postgres', () =>
      postgresUp ? Promise.resolve() : Promise.reject(new Error('connection refused')),
    );
    const { probe } = await start(lifecycle);
    expect(await get('/livez')).toStrictEqual({ status: 200, body: '{"status":"ok"}' });
    expect(await get('/readyz')).toStrictEqual({ status: 503, body: '{"status":"starting"}' });

    server!.attach(probe);
    const ready = await get('/readyz');
    expect(ready.status).toBe(200);
    expect(JSON.parse(ready.body)).toMatchObject({
      status: 'ok',
      details: { postgres: { status: 'up' } },
    });

    postgresUp = false;
    const down = await get('/readyz');
    expect(down.status).toBe(503);
    expect(JSON.parse(down.body)).toMatchObject({
      status: 'error',
      error: { postgres: { status: 'down', message: 'connection refused' } },
    });

    postgresUp = true;
    await lifecycle.drain(10);
    expect(await get('/readyz')).toStrictEqual({ status: 503, body: '{"status":"draining"}' });
    expect((await get('/livez')).status).toBe(200);
  });

  it('serves the metrics after running their sources, and answers 404 and 405 elsewhere', async () => {
    const registry = new PlatformMetrics();
    registry.addSource(() => {
      registry.workQueued.set(7);
      return Promise.resolve();
    });
    registry.addSource(() => Promise.reject(new Error('database away')));
    registry.requests.inc({ binding: 'JSONRPC', method: 'SendMessage' });
    await start(new ProcessLifecycle(), registry);
    const metrics = await get('/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.body).toContain('a2a_work_queue_depth 7');
    expect(metrics.body).toContain('a2a_requests_total{binding="JSONRPC",method="SendMessage"} 1');
    expect(metrics.body).toContain('a2a_metrics_source_failures_total 1');
    expect(metrics.body).toContain('process_cpu_seconds_total');
    expect((await get('/elsewhere')).status).toBe(404);
    expect((await get('/livez', 'POST')).status).toBe(405);
    expect(await get('/livez', 'HEAD')).toStrictEqual({ status: 200, body: '' });
  });
});

import { Test } from '@nestjs/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DependencyMonitor } from './dependency-monitor';
import { ProcessLifecycle, type DrainReport } from './lifecycle';
import { PlatformMetrics } from './metrics';
import {
  LoopSaturation,
  OpsModule,
  OpsServer,
  ReadinessProbe,
  utilizationBetween,
} from './ops-server';

const never = (): Promise<void> => new Promise<void>(() => undefined);
const silent = { log: () => undefined, warn: () => undefined, error: () => undefined };

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

  it('says what it waits for while it starts, and nothing once it serves', () => {
    const lifecycle = new ProcessLifecycle();
    lifecycle.waitFor('schema');
    expect(lifecycle.waitingFor).toBe('schema');
    lifecycle.serving();
    expect(lifecycle.waitingFor).toBeNull();
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
    server = await OpsServer.start(
      {
        OPS_HOST: '127.0.0.1',
        OPS_PORT: 0,
        // The tests check the dependencies themselves (checkDependencies); the timer must not race them.
        DEPENDENCY_CHECK_MS: 3_600_000,
        // A test process's loop may well be busy between two probes; saturation has its own tests.
        READINESS_MAX_EVENT_LOOP_UTILIZATION: 1,
      },
      lifecycle,
      registry,
    );
    const module = await Test.createTestingModule({ imports: [OpsModule] }).compile();
    return { server, probe: module.get(ReadinessProbe), registry };
  }

  async function get(path: string, method = 'GET'): Promise<{ status: number; body: string }> {
    const response = await fetch(`${server!.url}${path}`, { method });
    return { status: response.status, body: await response.text() };
  }

  it('is alive at once; ready once attached whatever its shared dependencies do, which it reports; never while draining', async () => {
    const lifecycle = new ProcessLifecycle();
    let postgresUp = true;
    lifecycle.addDependency('postgres', 'ingress', () =>
      postgresUp ? Promise.resolve() : Promise.reject(new Error('connection refused')),
    );
    const { probe, registry } = await start(lifecycle);
    expect(await get('/livez')).toStrictEqual({ status: 200, body: '{"status":"ok"}' });
    lifecycle.waitFor('schema: 2 migration(s) of this release not applied yet');
    expect(await get('/readyz')).toStrictEqual({
      status: 503,
      body: '{"status":"starting","waitingFor":"schema: 2 migration(s) of this release not applied yet"}',
    });
    lifecycle.waitFor(null);
    expect(await get('/readyz')).toStrictEqual({ status: 503, body: '{"status":"starting"}' });

    server!.attach(probe);
    await server!.checkDependencies();
    const ready = await get('/readyz');
    expect(ready.status).toBe(200);
    expect(JSON.parse(ready.body)).toMatchObject({
      status: 'ok',
      dependencies: { postgres: { status: 'up' } },
    });
    expect(await registry.expose()).toContain('a2a_dependency_up{dependency="postgres"} 1');

    postgresUp = false;
    await server!.checkDependencies();
    const away = await get('/readyz');
    expect(away.status).toBe(200);
    expect(JSON.parse(away.body)).toMatchObject({
      status: 'ok',
      dependencies: { postgres: { status: 'down', message: 'ingress: connection refused' } },
    });
    expect(await registry.expose()).toContain('a2a_dependency_up{dependency="postgres"} 0');

    postgresUp = true;
    await lifecycle.drain(10);
    expect(await get('/readyz')).toStrictEqual({ status: 503, body: '{"status":"draining"}' });
    expect((await get('/livez')).status).toBe(200);
  });

  it('is unready while one of its own readiness checks fails', async () => {
    const lifecycle = new ProcessLifecycle();
    let read = false;
    lifecycle.addReadinessCheck('imported-agents', () =>
      read ? Promise.resolve() : Promise.reject(new Error('not read yet')),
    );
    const { probe } = await start(lifecycle);
    server!.attach(probe);
    const unread = await get('/readyz');
    expect(unread.status).toBe(503);
    expect(JSON.parse(unread.body)).toMatchObject({
      status: 'error',
      error: { 'imported-agents': { status: 'down', message: 'not read yet' } },
    });
    read = true;
    expect((await get('/readyz')).status).toBe(200);
  });

  it('reports a dependency down when any component that uses it fails its check, and drops one nobody uses', async () => {
    const lifecycle = new ProcessLifecycle();
    const registry = new PlatformMetrics();
    lifecycle.addDependency('postgres', 'ingress', () => Promise.resolve());
    const removeKafka = lifecycle.addDependency('kafka', 'relay', () => Promise.resolve());
    lifecycle.addDependency('postgres', 'relay', () =>
      Promise.reject(new Error('too many clients')),
    );
    const monitor = new DependencyMonitor(lifecycle, registry, 60_000, silent);
    await monitor.checkNow();
    expect(monitor.snapshot()).toMatchObject({
      postgres: { status: 'down', message: 'relay: too many clients' },
      kafka: { status: 'up' },
    });
    removeKafka();
    await monitor.checkNow();
    expect(Object.keys(monitor.snapshot())).toStrictEqual(['postgres']);
    expect(await registry.expose()).not.toContain('dependency="kafka"');
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

describe('LoopSaturation', () => {
  const reading = (active: number, idle: number) => ({ active, idle, utilization: 0 });

  it('measures the busy share of the loop between two readings', () => {
    expect(utilizationBetween(reading(100, 900), reading(1_090, 910))).toBeCloseTo(0.99);
    expect(utilizationBetween(reading(5, 5), reading(5, 5))).toBeNull();
  });

  it('is saturated only over a second or more of a loop busy at the limit, and keeps its verdict in between', () => {
    const readings = [
      reading(0, 0),
      reading(500, 100), // 0.6 s later: too short to judge
      reading(1_990, 10), // 2 s in all, 99.5 % busy
      reading(2_300, 10), // 0.3 s later: the verdict stands
      reading(2_800, 1_510), // 2.3 s later, 1.5 s of it idle
    ];
    const saturation = new LoopSaturation(0.99, () => readings.shift() ?? reading(0, 0));
    expect(saturation.sample().saturated).toBe(false);
    expect(saturation.sample()).toStrictEqual({ saturated: true, utilization: 0.995 });
    expect(saturation.sample().saturated).toBe(true);
    expect(saturation.sample().saturated).toBe(false);
  });

  it('is never saturated with a limit of 1', () => {
    const readings = [reading(0, 0), reading(2_000, 0)];
    const off = new LoopSaturation(1, () => readings.shift() ?? reading(0, 0));
    expect(off.sample()).toStrictEqual({ saturated: false, utilization: 1 });
  });
});

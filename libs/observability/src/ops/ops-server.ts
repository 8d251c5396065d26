import type { ObservabilityConfig } from '@lib/config';
import {
  Injectable,
  Module,
  ServiceUnavailableException,
  type INestApplicationContext,
} from '@nestjs/common';
import {
  HealthCheckService,
  HealthIndicatorService,
  TerminusModule,
  type HealthIndicatorResult,
} from '@nestjs/terminus';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { DependencyMonitor, withTimeout } from './dependency-monitor';
import { lifecycle, type ProcessLifecycle, type ReadinessCheck } from './lifecycle';
import { metrics, type PlatformMetrics } from './metrics';
import { closeOnSignal, type ShutdownOptions } from './shutdown';

/** A readiness check that does not answer within this counts as down. */
const CHECK_TIMEOUT_MS = 2_000;
/** The shortest span between two probes that says how busy the event loop is (shorter ones keep the verdict). */
const SATURATION_WINDOW_MS = 1_000;

export interface ReadinessAnswer {
  status: 200 | 503;
  body: unknown;
}

/** Runs the process's readiness checks through Terminus (its result format: status, info, error, details). */
@Injectable()
export class ReadinessProbe {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
  ) {}

  async check(checks: [string, ReadinessCheck][]): Promise<ReadinessAnswer> {
    const indicators = checks.map(([name, check]) => async (): Promise<HealthIndicatorResult> => {
      const session = this.indicators.check(name);
      try {
        await withTimeout(check(), CHECK_TIMEOUT_MS);
        return session.up();
      } catch (error) {
        return session.down({ message: error instanceof Error ? error.message : String(error) });
      }
    });
    try {
      return { status: 200, body: await this.health.check(indicators) };
    } catch (error) {
      if (error instanceof ServiceUnavailableException) {
        return { status: 503, body: error.getResponse() };
      }
      throw error;
    }
  }
}

/** What every app's root module imports for its readiness endpoint. */
@Module({
  imports: [TerminusModule.forRoot({ logger: false })],
  providers: [ReadinessProbe],
  exports: [ReadinessProbe],
})
export class OpsModule {}

/** The share of time the event loop was busy between two readings (0 to 1), or null for no time at all. */
export function utilizationBetween(
  previous: EventLoopUtilization,
  current: EventLoopUtilization,
): number | null {
  const span = current.active + current.idle - (previous.active + previous.idle);
  return span > 0 ? (current.active - previous.active) / span : null;
}

/**
 * Whether the event loop is saturated, judged at each readiness probe from how busy it was since the last
 * reading a second or more before: a loop that never waits serves new traffic late, and a peer with room
 * serves it better. Between readings closer than that, the last verdict stands.
 */
export class LoopSaturation {
  private last: EventLoopUtilization;
  private verdict = { saturated: false, utilization: null as number | null };

  constructor(
    private readonly max: number,
    private readonly read: () => EventLoopUtilization = () => performance.eventLoopUtilization(),
  ) {
    this.last = read();
  }

  sample(): { saturated: boolean; utilization: number | null } {
    const current = this.read();
    if (
      current.active + current.idle - (this.last.active + this.last.idle) <
      SATURATION_WINDOW_MS
    ) {
      return this.verdict;
    }
    const utilization = utilizationBetween(this.last, current);
    this.last = current;
    // A limit of 1 turns the check off (a loop can be busy all of the time and still be worth its traffic).
    const saturated = this.max < 1 && utilization !== null && utilization >= this.max;
    this.verdict = { saturated, utilization };
    return this.verdict;
  }
}

export type OpsServerConfig = Pick<
  ObservabilityConfig,
  'OPS_HOST' | 'OPS_PORT' | 'DEPENDENCY_CHECK_MS' | 'READINESS_MAX_EVENT_LOOP_UTILIZATION'
>;

/**
 * The ops listener of a process, apart from client traffic (OPS_HOST:OPS_PORT): `GET /livez` (the process
 * is alive), `GET /readyz` (it can take traffic: started, not draining, its own checks pass, its event loop
 * not saturated; the shared dependencies' state is in the body and never makes it unready) and `GET /metrics`
 * (Prometheus text). It starts before anything else so that probes answer while the process waits for its
 * database or schema; readiness is `starting` until the app is attached.
 */
export class OpsServer {
  private probe: ReadinessProbe | null = null;

  private constructor(
    private readonly server: Server,
    private readonly state: ProcessLifecycle,
    private readonly registry: PlatformMetrics,
    private readonly dependencies: DependencyMonitor,
    private readonly saturation: LoopSaturation,
  ) {}

  static async start(
    config: OpsServerConfig,
    state: ProcessLifecycle = lifecycle,
    registry: PlatformMetrics = metrics,
  ): Promise<OpsServer> {
    registry.collectProcessMetrics();
    const server = createServer();
    const ops = new OpsServer(
      server,
      state,
      registry,
      new DependencyMonitor(state, registry, config.DEPENDENCY_CHECK_MS),
      new LoopSaturation(config.READINESS_MAX_EVENT_LOOP_UTILIZATION),
    );
    server.on('request', (req, res) => void ops.handle(req, res));
    // Probes are short requests; a keep-alive scraper must not hold the process open at shutdown.
    server.keepAliveTimeout = 5_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.OPS_PORT, config.OPS_HOST, () => {
        server.off('error', reject);
        resolve();
      });
    });
    return ops;
  }

  get url(): string {
    const { address, port } = this.server.address() as AddressInfo;
    return `http://${address.includes(':') ? `[${address}]` : address}:${port}`;
  }

  /** The app is up: readiness now runs its checks, and its shared dependencies are watched. */
  attach(probe: ReadinessProbe): void {
    this.probe = probe;
    this.state.serving();
    this.dependencies.start();
  }

  /** Checks the shared dependencies at once (a test that must not wait for the interval). */
  checkDependencies(): Promise<void> {
    return this.dependencies.checkNow();
  }

  /** The app is up ({@link attach}) and drains on SIGTERM or SIGINT ({@link closeOnSignal}). */
  serve(app: INestApplicationContext, options: ShutdownOptions): void {
    this.attach(app.get(ReadinessProbe));
    closeOnSignal(app, this, options);
  }

  async close(): Promise<void> {
    this.dependencies.stop();
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      send(res, 405, 'application/json', JSON.stringify({ error: 'method not allowed' }));
      return;
    }
    try {
      switch (path) {
        case '/livez':
          send(res, 200, 'application/json', JSON.stringify({ status: 'ok' }));
          return;
        case '/readyz': {
          const answer = await this.readiness();
          send(res, answer.status, 'application/json', JSON.stringify(answer.body));
          return;
        }
        case '/metrics':
          send(res, 200, this.registry.contentType, await this.registry.expose());
          return;
        default:
          send(res, 404, 'application/json', JSON.stringify({ error: 'not found' }));
      }
    } catch (error) {
      send(
        res,
        500,
        'application/json',
        JSON.stringify({ error: error instanceof Error ? error.message : String(error) }),
      );
    }
  }

  private async readiness(): Promise<ReadinessAnswer> {
    if (this.state.state !== 'serving' || !this.probe) {
      const waitingFor = this.state.waitingFor;
      return { status: 503, body: { status: this.state.state, ...(waitingFor && { waitingFor }) } };
    }
    const { saturated, utilization } = this.saturation.sample();
    if (saturated) {
      return { status: 503, body: { status: 'saturated', eventLoopUtilization: utilization } };
    }
    const answer = await this.probe.check(this.state.readinessChecks());
    return {
      status: answer.status,
      body: { ...(answer.body as object), dependencies: this.dependencies.snapshot() },
    };
  }
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

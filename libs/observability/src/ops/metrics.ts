import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Reads a figure that lives in a database or another process at scrape time and sets its gauges. */
export type MetricsSource = () => Promise<void>;

/** A source that does not answer within this is skipped for one scrape (its gauges keep their last values). */
const SOURCE_TIMEOUT_MS = 2_000;

/**
 * How often the event-loop delay histogram (`nodejs_eventloop_lag_*`) samples the loop. prom-client's default,
 * 10 ms, wakes an idle process 100 times a second; a tenth of that still sees any stall long enough to matter
 * to a probe or a client, and leaves an idle process asleep (issue 35: idle under 1 % of a core).
 */
const EVENT_LOOP_SAMPLE_MS = 100;

/**
 * The process's Prometheus metrics (docs/observability.md "Metrics"): one registry per process, like its
 * standard output, that every component of the process adds to (the standalone process hosts several apps
 * and serves them all at one `/metrics`). The catalogue lives here so that names and labels stay the same in
 * every app; a metric an app does not use is absent from its output (a labelled one) or stays 0.
 */
export class PlatformMetrics {
  readonly registry = new Registry();
  private readonly sources = new Set<MetricsSource>();
  private collectingProcessMetrics = false;

  /** A2A calls by binding and method, counted when the call is routed (before authentication). */
  readonly requests = new Counter({
    name: 'a2a_requests_total',
    help: 'A2A calls received, by binding and method',
    labelNames: ['binding', 'method'] as const,
    registers: [this.registry],
  });

  /** A2A calls answered with an error, by its reason (the A2A error catalogue's names). */
  readonly requestErrors = new Counter({
    name: 'a2a_request_errors_total',
    help: 'A2A calls answered with an error, by binding, method and reason',
    labelNames: ['binding', 'method', 'reason'] as const,
    registers: [this.registry],
  });

  /** Until the answer; a stream until its first event (the time it then stays open is not a latency). */
  readonly requestDuration = new Histogram({
    name: 'a2a_request_duration_seconds',
    help: 'A2A call duration until the answer (streams: until the first event), by binding and method',
    labelNames: ['binding', 'method'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });

  readonly streamSubscribers = new Gauge({
    name: 'a2a_stream_subscribers',
    help: 'Open task streams (SSE and gRPC) served by this process',
    registers: [this.registry],
  });

  readonly tasks = new Gauge({
    name: 'a2a_tasks',
    help: 'Tasks by state, all tenants (from read.task_counts)',
    labelNames: ['state'] as const,
    registers: [this.registry],
  });

  readonly workQueued = new Gauge({
    name: 'a2a_work_queue_depth',
    help: 'Tasks waiting for a worker (ops.task_work, queued)',
    registers: [this.registry],
  });

  readonly workQueuedOldest = new Gauge({
    name: 'a2a_work_queue_oldest_seconds',
    help: 'How long the task that has waited longest for a worker has waited (0 when none waits)',
    registers: [this.registry],
  });

  readonly leasesHeld = new Gauge({
    name: 'a2a_leases_held',
    help: 'Tasks leased to a worker (ops.task_work, leased)',
    registers: [this.registry],
  });

  readonly leaseExpiries = new Counter({
    name: 'a2a_lease_expiries_total',
    help: 'Leases this process expired, by what became of the task (requeued or failed)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly workerSessions = new Gauge({
    name: 'a2a_worker_sessions',
    help: 'Agent workers connected to this process',
    registers: [this.registry],
  });

  readonly relayLag = new Gauge({
    name: 'a2a_relay_lag_seconds',
    help: 'Age of the oldest event of the batch the relay last published (0 when it is caught up)',
    registers: [this.registry],
  });

  readonly relayPublished = new Counter({
    name: 'a2a_relay_events_published_total',
    help: 'Task events the relay published to Kafka',
    registers: [this.registry],
  });

  readonly pushBacklog = new Gauge({
    name: 'a2a_push_backlog',
    help: 'Webhook deliveries not yet delivered or dead (ops.push_deliveries, pending or sending)',
    registers: [this.registry],
  });

  readonly pushAttempts = new Counter({
    name: 'a2a_push_attempts_total',
    help: 'Webhook delivery attempts, by outcome (delivered, retry, dead)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly pushDeadLetters = new Counter({
    name: 'a2a_push_dead_letters_total',
    help: 'Webhook deliveries given up on (dead-lettered)',
    registers: [this.registry],
  });

  /** 1 while the last check of a shared dependency passed for every component that uses it, else 0. */
  readonly dependencyUp = new Gauge({
    name: 'a2a_dependency_up',
    help: 'Whether a shared dependency (postgres, kafka, redis) answered the last check of this process',
    labelNames: ['dependency'] as const,
    registers: [this.registry],
  });

  readonly sourceFailures = new Counter({
    name: 'a2a_metrics_source_failures_total',
    help: 'Scrapes in which a source (a database count) failed or timed out; its gauges kept their last values',
    registers: [this.registry],
  });

  /**
   * Adds the process's own metrics (CPU, memory, event-loop delay, handles, GC: prom-client's defaults) to the
   * registry; once, by the process's ops server. A process that serves no `/metrics` (an agent worker) never
   * starts their samplers.
   */
  collectProcessMetrics(): void {
    if (!this.collectingProcessMetrics) {
      this.collectingProcessMetrics = true;
      collectDefaultMetrics({
        register: this.registry,
        eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS,
      });
    }
  }

  /** Adds a scrape-time source; returns what removes it (at shutdown). */
  addSource(source: MetricsSource): () => void {
    this.sources.add(source);
    return () => this.sources.delete(source);
  }

  /** The Prometheus text exposition of every metric, after the scrape-time sources ran. */
  async expose(): Promise<string> {
    await Promise.all([...this.sources].map((source) => this.run(source)));
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  private async run(source: MetricsSource): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), SOURCE_TIMEOUT_MS);
    });
    try {
      const outcome = await Promise.race([source().then(() => 'done' as const), timeout]);
      if (outcome === 'timeout') {
        this.sourceFailures.inc();
      }
    } catch {
      this.sourceFailures.inc();
    } finally {
      clearTimeout(timer);
    }
  }
}

/** The metrics of this process. */
export const metrics = new PlatformMetrics();

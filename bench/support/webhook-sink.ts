/**
 * A healthy webhook receiver for the push benchmark: a node:http server on 127.0.0.1 that answers every POST
 * 204 as soon as its body is read, on keep-alive connections, and keeps only what the benchmark checks: when
 * each delivery id first arrived, how often ids came again, and whether a task's generations arrived in order.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { wallMs } from './wall-clock';

/** The first POST of one delivery. */
export interface SinkArrival {
  deliveryId: string;
  taskId: string;
  generation: number;
  /** Wall-clock ms (`wallMs`) when the request's headers arrived. */
  atMs: number;
}

export class WebhookSink {
  /** POSTs received, repeats included. */
  posts = 0;
  /** POSTs whose delivery id had come before. */
  repeats = 0;
  /** POSTs without the delivery headers (`X-A2A-Delivery-Id`, `X-A2A-Task-Id`, `X-A2A-Generation`). */
  malformed = 0;
  /** First arrivals of a task's generation that came after a higher one of the same task. */
  outOfOrder = 0;
  /** The first few of {@link outOfOrder}, described. */
  readonly outOfOrderSamples: string[] = [];
  /** Wall-clock ms of the first POST, and of the latest new delivery id. */
  firstAtMs: number | null = null;
  lastNewAtMs: number | null = null;
  /** First arrival per `<taskId>#<generation>`. */
  readonly arrivals = new Map<string, SinkArrival>();
  /** Called with every new delivery id (after the bookkeeping). */
  onArrival: ((arrival: SinkArrival, distinct: number) => void) | null = null;

  private readonly deliveryIds = new Set<string>();
  private readonly highest = new Map<string, number>();

  private constructor(private readonly server: Server) {}

  static async start(): Promise<WebhookSink> {
    const server = createServer({ keepAliveTimeout: 60_000 });
    const sink = new WebhookSink(server);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => sink.handle(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    return sink;
  }

  /** The webhook URL to register. */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  /** Distinct delivery ids received. */
  get distinct(): number {
    return this.deliveryIds.size;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const atMs = wallMs();
    this.posts++;
    this.firstAtMs ??= atMs;
    const deliveryId = req.headers['x-a2a-delivery-id'];
    const taskId = req.headers['x-a2a-task-id'];
    const generation = Number(req.headers['x-a2a-generation']);
    if (typeof deliveryId !== 'string' || typeof taskId !== 'string' || !(generation > 0)) {
      this.malformed++;
    } else if (this.deliveryIds.has(deliveryId)) {
      this.repeats++;
    } else {
      this.deliveryIds.add(deliveryId);
      this.lastNewAtMs = atMs;
      const before = this.highest.get(taskId) ?? 0;
      if (generation <= before) {
        this.outOfOrder++;
        if (this.outOfOrderSamples.length < 5) {
          this.outOfOrderSamples.push(`${taskId}: ${generation} after ${before}`);
        }
      } else {
        this.highest.set(taskId, generation);
      }
      const arrival = { deliveryId, taskId, generation, atMs };
      this.arrivals.set(`${taskId}#${generation}`, arrival);
      this.onArrival?.(arrival, this.deliveryIds.size);
    }
    req.resume();
    req.on('end', () => {
      res.statusCode = 204;
      res.end();
    });
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }
}

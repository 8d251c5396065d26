import {
  createServer,
  type IncomingHttpHeaders,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** One POST the receiver got, and what it answered. */
export interface ReceivedPost {
  deliveryId: string;
  taskId: string;
  generation: number;
  headers: IncomingHttpHeaders;
  /** The body bytes exactly as received (what the signature covers). */
  body: Buffer;
  /** What the receiver answered: a status, or `hang` (never answered). */
  answer: number | 'hang';
}

/** How the receiver answers the `n`-th POST (0-based) of a delivery id, given the post. */
export type Answering = (post: Omit<ReceivedPost, 'answer'>, attempt: number) => number | 'hang';

/**
 * A webhook receiver on 127.0.0.1 for the push tests: records every POST with its headers and exact body,
 * answers as told (2xx by default, per delivery id attempt), and counts the connections it accepted.
 */
export class WebhookReceiver {
  readonly posts: ReceivedPost[] = [];
  connections = 0;
  /** How long the receiver takes before it answers (a slow receiver keeps deliveries in flight). */
  delayMs = 0;
  private readonly attempts = new Map<string, number>();
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    public answering: Answering,
  ) {}

  static async start(answering: Answering = () => 200, port = 0): Promise<WebhookReceiver> {
    const server = createServer();
    server.keepAliveTimeout = 30_000;
    const receiver = new WebhookReceiver(server, answering);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => receiver.handle(req.headers, Buffer.concat(chunks), res));
    });
    server.on('connection', (socket: Socket) => {
      receiver.connections += 1;
      receiver.sockets.add(socket);
      socket.on('close', () => receiver.sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    return receiver;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  url(path = '/hook'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** The POSTs answered 2xx. */
  accepted(): ReceivedPost[] {
    return this.posts.filter((p) => typeof p.answer === 'number' && p.answer < 300);
  }

  /** The accepted POSTs of one task, deduplicated by delivery id, in arrival order. */
  acceptedOf(taskId: string): ReceivedPost[] {
    const seen = new Set<string>();
    return this.accepted().filter((p) => {
      if (p.taskId !== taskId || seen.has(p.deliveryId)) {
        return false;
      }
      seen.add(p.deliveryId);
      return true;
    });
  }

  private handle(headers: IncomingHttpHeaders, body: Buffer, res: ServerResponse): void {
    const post = {
      deliveryId: String(headers['x-a2a-delivery-id'] ?? ''),
      taskId: String(headers['x-a2a-task-id'] ?? ''),
      generation: Number(headers['x-a2a-generation'] ?? 0),
      headers,
      body,
    };
    const attempt = this.attempts.get(post.deliveryId) ?? 0;
    this.attempts.set(post.deliveryId, attempt + 1);
    const answer = this.answering(post, attempt);
    this.posts.push({ ...post, answer });
    if (answer !== 'hang') {
      const reply = (): void => {
        res.writeHead(answer, { 'Content-Type': 'text/plain' }).end('ok');
      };
      if (this.delayMs > 0) {
        setTimeout(reply, this.delayMs);
      } else {
        reply();
      }
    }
  }

  async close(): Promise<void> {
    this.sockets.forEach((socket) => socket.destroy());
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/** How one agent of the bad upstream misbehaves. */
export type BadMode =
  | 'garbage'
  | 'other-task'
  | 'early-close'
  | 'redirect'
  | 'huge-event'
  | 'huge-answer';

const STREAMING: Record<BadMode, boolean> = {
  garbage: false,
  'other-task': true,
  'early-close': true,
  redirect: false,
  'huge-event': true,
  'huge-answer': false,
};

/** The text of the oversized artifact: more than any event limit of the bridge, the SDK or gRPC (4 MiB). */
const HUGE_TEXT = 'x'.repeat(5 * 1024 * 1024);

/**
 * An A2A server that misbehaves on purpose (a real HTTP server on 127.0.0.1): cards that are not JSON, too
 * large, too slow or redirected (`/cards/<kind>`), and agents with a valid card whose JSON-RPC endpoint
 * answers garbage, sends events of another task, closes its stream before the task ends (the task is then
 * COMPLETED when read with GetTask), redirects to a metadata address, streams an event of 5 MiB after a
 * first small one (`huge-event`) or answers SendMessage with 5 MiB (`huge-answer`; GetTask of both: 5 MiB)
 * (`/<mode>/…`).
 * It counts the A2A calls it gets, by method.
 */
export class BadUpstream {
  readonly calls: { mode: string; method: string }[] = [];

  private constructor(private readonly server: Server) {}

  static async start(): Promise<BadUpstream> {
    const upstream = new BadUpstream(createServer());
    upstream.server.on('request', (req, res) => void upstream.handle(req, res));
    await new Promise<void>((resolve) => upstream.server.listen(0, '127.0.0.1', resolve));
    return upstream;
  }

  get base(): string {
    return `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
  }

  cardUrl(mode: BadMode): string {
    return `${this.base}/${mode}/.well-known/agent-card.json`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const [, first = '', ...rest] = (req.url ?? '/').split('/');
    if (first === 'cards') {
      this.badCard(rest[0] ?? '', res);
      return;
    }
    const mode = first as BadMode;
    if (!(mode in STREAMING)) {
      res.writeHead(404).end();
      return;
    }
    if (req.method === 'GET') {
      this.json(res, {
        name: `Bad ${mode}`,
        description: `An upstream that misbehaves: ${mode}`,
        version: '1.0.0',
        supportedInterfaces: [
          { url: `${this.base}/${mode}/rpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
        ],
        capabilities: { streaming: STREAMING[mode] },
        defaultInputModes: ['text/plain'],
        defaultOutputModes: ['text/plain'],
        skills: [],
      });
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) {
      chunks.push(chunk as Buffer);
    }
    const call = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
      id: unknown;
      method: string;
    };
    this.calls.push({ mode, method: call.method });
    const result = (value: unknown) =>
      JSON.stringify({ jsonrpc: '2.0', id: call.id, result: value });
    const task = (id: string, state: string, artifacts: unknown[] = []) => ({
      task: { id, contextId: 'bad-context', status: { state }, artifacts },
    });
    switch (mode) {
      case 'garbage':
        res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"jsonrpc": "2.0", "res');
        return;
      case 'redirect':
        res.writeHead(307, { Location: 'http://169.254.169.254/latest/meta-data' }).end();
        return;
      case 'other-task':
        this.events(res, [
          result(task('task-a', 'TASK_STATE_WORKING')),
          result({
            statusUpdate: {
              taskId: 'task-b',
              contextId: 'bad-context',
              status: { state: 'TASK_STATE_COMPLETED' },
            },
          }),
        ]);
        return;
      case 'early-close':
        if (call.method === 'GetTask') {
          res.writeHead(200, { 'Content-Type': 'application/json' }).end(
            JSON.stringify({
              jsonrpc: '2.0',
              id: call.id,
              result: task('task-e', 'TASK_STATE_COMPLETED', [
                { artifactId: 'late', name: 'late', parts: [{ text: 'finished after all' }] },
              ]).task,
            }),
          );
          return;
        }
        // The stream ends after the first event, long before the task does.
        this.events(res, [result(task('task-e', 'TASK_STATE_WORKING'))]);
        return;
      case 'huge-event':
      case 'huge-answer': {
        const huge = task('task-h', 'TASK_STATE_COMPLETED', [
          { artifactId: 'huge', parts: [{ text: HUGE_TEXT }] },
        ]);
        if (mode === 'huge-answer' || call.method === 'GetTask') {
          res
            .writeHead(200, { 'Content-Type': 'application/json' })
            .end(result(call.method === 'GetTask' ? huge.task : huge));
          return;
        }
        // A first event of a normal size, then the artifact in one event.
        this.events(res, [
          result(task('task-h', 'TASK_STATE_WORKING')),
          result({
            artifactUpdate: {
              taskId: 'task-h',
              contextId: 'bad-context',
              artifact: { artifactId: 'huge', parts: [{ text: HUGE_TEXT }] },
              lastChunk: true,
            },
          }),
        ]);
        return;
      }
    }
  }

  private badCard(kind: string, res: ServerResponse): void {
    switch (kind) {
      case 'not-json':
        res.writeHead(200, { 'Content-Type': 'text/html' }).end('<html>not a card</html>');
        return;
      case 'huge':
        this.json(res, { name: 'Huge', description: 'x'.repeat(1_000_000) });
        return;
      case 'redirect':
        res.writeHead(302, { Location: 'http://169.254.169.254/latest/meta-data' }).end();
        return;
      case 'slow':
        // Never answers; the connection is closed with the server.
        return;
      default:
        res.writeHead(404).end();
    }
  }

  private json(res: ServerResponse, body: unknown): void {
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
  }

  private events(res: ServerResponse, data: string[]): void {
    res.writeHead(200, { 'Content-Type': 'text/event-stream' });
    res.end(data.map((d) => `data: ${d}\n\n`).join(''));
  }
}

import type { INestApplication } from '@nestjs/common';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { lifecycle, type ProcessLifecycle } from './lifecycle';

const POLL_MS = 25;

/**
 * The drain step of a Nest application's HTTP server, and its refusal of new requests while it drains
 * ({@link refuseWhileDraining}). Call before `listen`.
 */
export function drainHttpApp(app: INestApplication, name: string): void {
  app.use(refuseWhileDraining());
  drainHttpServer(app.getHttpServer() as Server, name);
}

/**
 * The drain step of an HTTP server: it stops listening, lets the requests in flight finish (long-lived
 * streams end through their own drain step) and closes keep-alive connections as they fall idle. Returns
 * what removes the step.
 */
export function drainHttpServer(
  server: Server,
  name: string,
  state: ProcessLifecycle = lifecycle,
): () => void {
  const inFlight = new Set<ServerResponse>();
  server.prependListener('request', (_req: IncomingMessage, res: ServerResponse) => {
    inFlight.add(res);
    res.once('close', () => inFlight.delete(res));
  });
  return state.addDrainStep(name, async (deadline) => {
    server.close();
    while (inFlight.size > 0 && Date.now() < deadline) {
      server.closeIdleConnections();
      await sleep(POLL_MS);
    }
    server.closeIdleConnections();
  });
}

/**
 * Express middleware: while the process drains, a request that arrives on a connection still open is
 * answered 503 with `Retry-After` and `Connection: close` (the client retries on another replica).
 */
export function refuseWhileDraining(
  state: ProcessLifecycle = lifecycle,
): (req: IncomingMessage, res: ServerResponse, next: () => void) => void {
  return (_req, res, next) => {
    if (!state.draining) {
      next();
      return;
    }
    res.writeHead(503, {
      'content-type': 'application/json',
      'retry-after': '1',
      connection: 'close',
    });
    res.end(JSON.stringify({ error: 'this replica is shutting down; retry' }));
  };
}

import type { HttpAdapterHost } from '@nestjs/core';
import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';

/**
 * A route served by Node's HTTP server itself, ahead of Express and Nest: no router walk over every route the
 * process has, no middleware chain, no parameter decorators (ADR 0016). For the A2A calls, whose bindings
 * read and answer the request themselves.
 */
export interface BareRoute {
  /** Takes the request and answers it, or returns false to leave it to the framework. */
  serve(req: IncomingMessage, res: ServerResponse): boolean;
}

/**
 * Puts `route` in front of the Nest application's Express handler on its HTTP server. Other listeners (the
 * drain step's count of requests in flight) stay as they are.
 */
export function serveAhead(adapterHost: HttpAdapterHost, route: BareRoute): void {
  const server = adapterHost.httpAdapter.getHttpServer() as Server;
  const framework = adapterHost.httpAdapter.getInstance<RequestListener>();
  if (!server.listeners('request').includes(framework)) {
    throw new Error("the framework's request handler is not on the HTTP server");
  }
  server.removeListener('request', framework);
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (!route.serve(req, res)) {
      framework(req, res);
    }
  });
}

/** The path of a request target, without its query. */
export function pathOf(url: string | undefined): string {
  const target = url ?? '/';
  const query = target.indexOf('?');
  return query === -1 ? target : target.slice(0, query);
}

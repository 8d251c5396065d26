import { A2aError, toRestErrorBody, type RestErrorBody } from '@lib/a2a-protocol';
import type { IngressConfig } from '@lib/config';
import { All, Controller, Inject, Logger, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { performance } from 'node:perf_hooks';
import {
  A2aGateway,
  isStreamingMethod,
  reportedError,
  type A2aSession,
} from '../gateway/a2a-gateway';
import type { AgentRoute } from '../gateway/agent-route';
import { observeCall } from '../gateway/call-metrics';
import { noteMethod } from '../gateway/inbound-call';
import { readBody } from '../http/read-body';
import {
  errorHeaders,
  extensionHeaders,
  serviceParameters,
  streamError,
} from '../http/service-parameters';
import { writeSse } from '../streaming/sse-writer';
import { INGRESS_CONFIG } from '../tokens';
import {
  bodyTenants,
  parseJsonBody,
  parseQuery,
  queryFields,
  queryTenants,
  withPathFields,
} from './rest-request';
import { decodeSegment, matchRestRoute, type HttpMethod } from './rest-routes';

/** Response media type of the HTTP+JSON binding (spec digest §8.1). */
const A2A_JSON = 'application/a2a+json';

/** Where a request came in: the raw path segments of the entry point and those after its base URL. */
type Entry =
  | { kind: 'agent'; rawTenant: string; rawAgent: string; segments: string[] }
  | { kind: 'tenant'; segments: string[] };

/**
 * The HTTP+JSON/REST binding (spec digest §8): match the route, read path, query and body into the request
 * message's ProtoJSON, hand it to the gateway, write the response message or the google.rpc.Status error.
 * Two base URLs: one per agent (the card's HTTP+JSON interface, `/{tenant}` prefix optional) and one that
 * routes by a required `/{tenant}` segment. The routes' literal `:` does not fit Express patterns, so each
 * base is one catch-all and {@link matchRestRoute} reads the raw path.
 */
@Controller()
export class RestController {
  private readonly logger = new Logger(RestController.name);

  constructor(
    private readonly gateway: A2aGateway,
    @Inject(INGRESS_CONFIG) private readonly config: IngressConfig,
  ) {}

  @All('agents/:tenant/:agent/rest{/*route}')
  async perAgent(@Req() req: Request, @Res() res: Response): Promise<void> {
    const [, rawTenant = '', rawAgent = '', , ...segments] = rawPath(req);
    await this.handle({ kind: 'agent', rawTenant, rawAgent, segments }, req, res);
  }

  @All('a2a/rest{/*route}')
  async byTenant(@Req() req: Request, @Res() res: Response): Promise<void> {
    await this.handle({ kind: 'tenant', segments: rawPath(req).slice(2) }, req, res);
  }

  private async handle(entry: Entry, req: Request, res: Response): Promise<void> {
    const started = performance.now();
    let method = '';
    let session: A2aSession | null = null;
    try {
      const agent: AgentRoute | null =
        entry.kind === 'agent'
          ? { tenantId: decodeSegment(entry.rawTenant), agentId: decodeSegment(entry.rawAgent) }
          : null;
      const match = matchRestRoute(req.method, entry.segments, agent ? 'optional' : 'required');
      if (match.kind === 'method-not-allowed') {
        sendMethodNotAllowed(res, req.method, match.allow);
        return;
      }
      if (match.kind === 'not-found') {
        throw new A2aError(
          'METHOD_NOT_FOUND',
          agent
            ? `no A2A route ${req.method} /${entry.segments.join('/')}`
            : `no A2A route ${req.method} /${entry.segments.join('/')}; routes follow /a2a/rest/{tenant}/, the tenant <tenant>/<agent> being one segment (%2F)`,
        );
      }
      const { route, fields, tenant } = match;
      method = route.rpc;
      noteMethod(route.rpc, 'HTTP+JSON');
      const query = parseQuery(rawQuery(req));
      const body =
        route.method === 'POST'
          ? parseJsonBody(
              await readBody(req, this.config.MAX_BODY_BYTES),
              req.header('content-type'),
            )
          : {};
      session = await this.gateway.open({
        binding: 'HTTP+JSON',
        route: agent,
        tenants: [...(tenant ? [tenant] : []), ...queryTenants(query), ...bodyTenants(body)],
        ...serviceParameters(req),
      });
      const params = {
        ...queryFields(query, route.query ?? {}),
        ...(route.method === 'POST' ? withPathFields(body, fields) : fields),
      };
      const activated = extensionHeaders(session);
      if (isStreamingMethod(route.rpc)) {
        const stream = await this.gateway.stream(
          session,
          route.rpc,
          params,
          req.header('Last-Event-ID'),
        );
        observeCall('HTTP+JSON', method, started);
        await writeSse(
          res,
          {
            data: (item) => item.response,
            error: (reason) => toRestErrorBody(streamError(reason)),
          },
          stream.first,
          stream.subscription,
          activated,
        );
        return;
      }
      const result = await this.gateway.call(session, route.rpc, params);
      send(res.set(activated), 200, result ?? {});
      observeCall('HTTP+JSON', method, started);
    } catch (thrown) {
      const error = reportedError(thrown, this.logger);
      if (res.headersSent) {
        // A stream already started; its framing reports abnormal ends itself.
        res.end();
        return;
      }
      observeCall('HTTP+JSON', method, started, error);
      const body = toRestErrorBody(error);
      send(res.set(errorHeaders(error, session)), body.error.code, body);
    }
  }
}

/** The path's segments, still percent-encoded, without the leading empty one. */
function rawPath(req: Request): string[] {
  return (req.originalUrl.split('?')[0] ?? '').split('/').slice(1);
}

function rawQuery(req: Request): string {
  const at = req.originalUrl.indexOf('?');
  return at < 0 ? '' : req.originalUrl.slice(at + 1);
}

function send(res: Response, status: number, body: unknown): void {
  res.status(status).setHeader('Content-Type', A2A_JSON);
  res.send(JSON.stringify(body));
}

/**
 * 405 with `Allow` (RFC 9110 §15.5.6) for a known path and another HTTP method. The error catalogue has no
 * reason for it, so the ErrorInfo says METHOD_NOT_FOUND (no RPC behind this method and path) and the status
 * is UNIMPLEMENTED, as HTTP transcoders answer it.
 */
function sendMethodNotAllowed(res: Response, method: string, allow: readonly HttpMethod[]): void {
  const { error } = toRestErrorBody(
    new A2aError('METHOD_NOT_FOUND', `${method} is not allowed here; use ${allow.join(' or ')}`, {
      allow: allow.join(', '),
    }),
  );
  const body: RestErrorBody = { error: { ...error, code: 405, status: 'UNIMPLEMENTED' } };
  res.setHeader('Allow', allow.join(', '));
  send(res, 405, body);
}

import {
  A2aError,
  isA2aMethod,
  JSON_RPC_ERRORS,
  jsonRpcErrorResponse,
  jsonRpcRequestIdOf,
  jsonRpcResult,
  parseJsonRpcRequest,
  toRestErrorBody,
  type JsonRpcId,
} from '@lib/a2a-protocol';
import type { IngressConfig } from '@lib/config';
import { refuseWhileDraining } from '@lib/observability';
import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { IncomingMessage, ServerResponse } from 'node:http';
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
import { pathOf, serveAhead, type BareRoute } from '../http/bare-route';
import { startInboundCall } from '../http/inbound-call.middleware';
import { readBody } from '../http/read-body';
import {
  errorHeaders,
  extensionHeaders,
  headerOf,
  serviceParameters,
  streamError,
} from '../http/service-parameters';
import { writeJson } from '../http/write-json';
import { writeSse } from '../streaming/sse-writer';
import { INGRESS_CONFIG } from '../tokens';

/** `POST /agents/{tenant}/{agent}/jsonrpc`, matched as Express matches routes: any case, one slash after. */
const PER_AGENT = /^\/agents\/([^/]+)\/([^/]+)\/jsonrpc\/?$/i;
/** `POST /a2a/jsonrpc`, routed by `params.tenant`. */
const BY_TENANT = /^\/a2a\/jsonrpc\/?$/i;

/**
 * The JSON-RPC 2.0 binding (spec digest §7): parse the envelope, hand (method, params) to the gateway, frame
 * the result or the error. Two entry points: one per agent, and one that routes by `params.tenant`. Served
 * ahead of Express and Nest ({@link serveAhead}, ADR 0016): a draining process refuses the call as the
 * framework's middleware would, then the call starts ({@link startInboundCall}) and the binding runs.
 */
@Injectable()
export class JsonRpcRoute implements BareRoute, OnApplicationBootstrap {
  private readonly logger = new Logger(JsonRpcRoute.name);
  private readonly refuseIfDraining = refuseWhileDraining();

  constructor(
    private readonly gateway: A2aGateway,
    private readonly adapterHost: HttpAdapterHost,
    @Inject(INGRESS_CONFIG) private readonly config: IngressConfig,
  ) {}

  onApplicationBootstrap(): void {
    serveAhead(this.adapterHost, this);
  }

  serve(req: IncomingMessage, res: ServerResponse): boolean {
    if (req.method !== 'POST') {
      return false;
    }
    const path = pathOf(req.url);
    const perAgent = PER_AGENT.exec(path);
    if (!perAgent && !BY_TENANT.test(path)) {
      return false;
    }
    this.refuseIfDraining(req, res, () => {
      let route: AgentRoute | null = null;
      if (perAgent) {
        try {
          route = {
            tenantId: decodeURIComponent(perAgent[1] ?? ''),
            agentId: decodeURIComponent(perAgent[2] ?? ''),
          };
        } catch {
          // What Express answers for a malformed %-escape in a route's parameter (FrameworkErrorsFilter).
          const error = new A2aError('INVALID_REQUEST', `Failed to decode param in ${path}`);
          writeJson(
            res,
            400,
            { 'Content-Type': 'application/a2a+json; charset=utf-8' },
            toRestErrorBody(error),
          );
          return;
        }
      }
      startInboundCall(req, res, 'JSONRPC', () => void this.handle(route, req, res));
    });
    return true;
  }

  private async handle(
    route: AgentRoute | null,
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> {
    const started = performance.now();
    let id: JsonRpcId = null;
    let method = '';
    let session: A2aSession | null = null;
    try {
      const body = await readBody(req, this.config.MAX_BODY_BYTES);
      const rpc = parseJsonRpcRequest(body);
      id = rpc.id;
      method = rpc.method;
      if (isA2aMethod(rpc.method)) {
        noteMethod(rpc.method, 'JSONRPC');
      }
      session = await this.gateway.open({
        binding: 'JSONRPC',
        route,
        tenants: tenantOf(rpc.params),
        ...serviceParameters(req),
      });
      if (!isA2aMethod(rpc.method)) {
        throw new A2aError('METHOD_NOT_FOUND', `method ${rpc.method} not found`);
      }
      const activated = extensionHeaders(session);
      if (isStreamingMethod(rpc.method)) {
        const stream = await this.gateway.stream(
          session,
          rpc.method,
          rpc.params,
          headerOf(req, 'Last-Event-ID'),
        );
        const rpcId = id;
        observeCall('JSONRPC', method, started);
        await writeSse(
          res,
          {
            data: (item) => jsonRpcResult(rpcId, item.response),
            error: (reason) => jsonRpcErrorResponse(rpcId, streamError(reason)),
          },
          stream.first,
          stream.subscription,
          activated,
        );
        return;
      }
      const result = await this.gateway.call(session, rpc.method, rpc.params);
      writeJson(res, 200, activated, jsonRpcResult(id, result ?? {}));
      observeCall('JSONRPC', method, started);
    } catch (thrown) {
      const error = reportedError(thrown, this.logger);
      observeCall('JSONRPC', method, started, error);
      writeJson(
        res,
        JSON_RPC_ERRORS[error.reason].httpStatus,
        errorHeaders(error, session),
        jsonRpcErrorResponse(id ?? jsonRpcRequestIdOf(thrown), error),
      );
    }
  }
}

/** The `tenant` of a request's params, when it carries a non-empty one. */
function tenantOf(params: unknown): string[] {
  if (typeof params === 'object' && params !== null && 'tenant' in params) {
    const tenant = (params as { tenant: unknown }).tenant;
    if (typeof tenant === 'string' && tenant !== '') {
      return [tenant];
    }
  }
  return [];
}

import {
  A2aError,
  isA2aMethod,
  JSON_RPC_ERRORS,
  jsonRpcErrorResponse,
  jsonRpcRequestIdOf,
  jsonRpcResult,
  parseJsonRpcRequest,
  type JsonRpcId,
} from '@lib/a2a-protocol';
import type { IngressConfig } from '@lib/config';
import { Controller, Inject, Logger, Param, Post, Req, Res } from '@nestjs/common';
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
import { writeJson } from '../http/write-json';
import { writeSse } from '../streaming/sse-writer';
import { INGRESS_CONFIG } from '../tokens';

/**
 * The JSON-RPC 2.0 binding (spec digest §7): parse the envelope, hand (method, params) to the gateway, frame
 * the result or the error. Two entry points: one per agent, and one that routes by `params.tenant`.
 */
@Controller()
export class JsonRpcController {
  private readonly logger = new Logger(JsonRpcController.name);

  constructor(
    private readonly gateway: A2aGateway,
    @Inject(INGRESS_CONFIG) private readonly config: IngressConfig,
  ) {}

  @Post('agents/:tenant/:agent/jsonrpc')
  async perAgent(
    @Param('tenant') tenantId: string,
    @Param('agent') agentId: string,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    await this.handle({ tenantId, agentId }, req, res);
  }

  @Post('a2a/jsonrpc')
  async byTenant(@Req() req: Request, @Res() res: Response): Promise<void> {
    await this.handle(null, req, res);
  }

  private async handle(route: AgentRoute | null, req: Request, res: Response): Promise<void> {
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
          req.header('Last-Event-ID'),
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

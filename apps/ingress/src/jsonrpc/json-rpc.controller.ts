import {
  A2aError,
  asA2aError,
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
import { randomUUID } from 'node:crypto';
import { API_KEY_HEADER, ApiKeyAuthenticator } from '../auth/api-key.authenticator';
import { AgentRegistry } from '../cards/agent-registry';
import { readBody } from '../http/read-body';
import { A2aOperations } from '../operations/a2a-operations';
import type { CallContext } from '../operations/call-context';
import { INGRESS_CONFIG } from '../tokens';
import { negotiateVersion } from '../version';

/**
 * The JSON-RPC 2.0 binding (spec digest §7): parse the envelope, authenticate, negotiate the version, call
 * the operations port, frame the result or the error. No business rule lives here.
 */
@Controller()
export class JsonRpcController {
  private readonly logger = new Logger(JsonRpcController.name);

  constructor(
    private readonly operations: A2aOperations,
    private readonly auth: ApiKeyAuthenticator,
    private readonly agents: AgentRegistry,
    @Inject(INGRESS_CONFIG) private readonly config: IngressConfig,
  ) {}

  @Post('agents/:tenant/:agent/jsonrpc')
  async handle(
    @Param('tenant') tenantId: string,
    @Param('agent') agentId: string,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    let id: JsonRpcId = null;
    try {
      const body = await readBody(req, this.config.MAX_BODY_BYTES);
      const rpc = parseJsonRpcRequest(body);
      id = rpc.id;
      // Authenticate before anything about the tenant's agents is revealed.
      const principal = await this.auth.authenticate(tenantId, req.header(API_KEY_HEADER));
      const agent = await this.agents.find(tenantId, agentId);
      if (!agent) {
        throw new A2aError('METHOD_NOT_FOUND', `no agent ${agentId} is hosted here`);
      }
      const ctx: CallContext = {
        tenantId,
        agentId,
        principalId: principal.principalId,
        binding: 'JSONRPC',
        protocolVersion: negotiateVersion(
          req.header('A2A-Version'),
          this.config.A2A_ASSUME_V1_WHEN_MISSING,
        ),
        requestId: randomUUID(),
        ...(req.header('traceparent') ? { traceparent: req.header('traceparent') } : {}),
      };
      checkTenantParam(rpc.params);
      const result = await this.dispatch(rpc.method, rpc.params, ctx);
      res.status(200).json(jsonRpcResult(id, result));
    } catch (thrown) {
      const error = asA2aError(thrown);
      if (error.reason === 'INTERNAL') {
        this.logger.error(
          thrown instanceof Error ? (thrown.stack ?? thrown.message) : String(thrown),
        );
      }
      if (error.reason === 'UNAUTHENTICATED') {
        res.setHeader('WWW-Authenticate', `ApiKey header="${API_KEY_HEADER}"`);
      }
      res
        .status(JSON_RPC_ERRORS[error.reason].httpStatus)
        .json(jsonRpcErrorResponse(id ?? jsonRpcRequestIdOf(thrown), error));
    }
  }

  private dispatch(method: string, params: unknown, ctx: CallContext): Promise<unknown> {
    switch (method) {
      case 'SendMessage':
        return this.operations.sendMessage(params, ctx);
      case 'GetTask':
        return this.operations.getTask(params, ctx);
      case 'ListTasks':
        return this.operations.listTasks(params, ctx);
      case 'CancelTask':
        return this.operations.cancelTask(params, ctx);
      case 'SendStreamingMessage':
      case 'SubscribeToTask':
        throw new A2aError('UNSUPPORTED_OPERATION', 'this agent does not declare streaming');
      case 'CreateTaskPushNotificationConfig':
      case 'GetTaskPushNotificationConfig':
      case 'ListTaskPushNotificationConfigs':
      case 'DeleteTaskPushNotificationConfig':
        throw new A2aError(
          'PUSH_NOTIFICATION_NOT_SUPPORTED',
          'this agent does not declare push notifications',
        );
      case 'GetExtendedAgentCard':
        throw new A2aError('UNSUPPORTED_OPERATION', 'this agent offers no extended agent card');
      default:
        throw new A2aError('METHOD_NOT_FOUND', `method ${method} not found`);
    }
  }
}

/**
 * The interfaces of this platform route by path and declare no `tenant` (§10.9): clients must omit it.
 * A value that is present is refused rather than silently ignored.
 */
function checkTenantParam(params: unknown): void {
  if (typeof params === 'object' && params !== null && 'tenant' in params) {
    const tenant = (params as { tenant: unknown }).tenant;
    if (tenant !== undefined && tenant !== null && tenant !== '') {
      throw new A2aError(
        'INVALID_PARAMS',
        'this interface declares no tenant; omit the tenant field',
        {},
        [{ field: 'tenant', description: 'must be empty for this interface' }],
      );
    }
  }
}

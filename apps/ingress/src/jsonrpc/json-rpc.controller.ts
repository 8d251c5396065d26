import {
  A2aError,
  asA2aError,
  decodeSubscribeToTaskRequest,
  isTerminalState,
  JSON_RPC_ERRORS,
  jsonRpcErrorResponse,
  jsonRpcRequestIdOf,
  jsonRpcResult,
  parseJsonRpcRequest,
  type JsonRpcId,
  type Task,
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
import {
  lastEventId,
  requestedExtensions,
  RESUMABLE_STREAMS_URI,
} from '../streaming/resumable-streams';
import { writeSse } from '../streaming/sse-writer';
import {
  endsStream,
  TaskEventFeed,
  type StreamItem,
  type TaskSubscription,
} from '../streaming/task-event-feed';
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
    private readonly feed: TaskEventFeed,
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
      if (rpc.method === 'SendStreamingMessage' || rpc.method === 'SubscribeToTask') {
        const extensions = requestedExtensions(req.header('A2A-Extensions'));
        const stream = await this.openStream(rpc.method, rpc.params, ctx, extensions, req);
        const rpcId = id;
        await writeSse(
          res,
          {
            data: (item) => jsonRpcResult(rpcId, item.response),
            error: (reason) => jsonRpcErrorResponse(rpcId, streamError(reason)),
          },
          stream.first,
          stream.subscription,
          stream.activated.length > 0 ? { 'A2A-Extensions': stream.activated.join(', ') } : {},
        );
        return;
      }
      const { result } = await this.dispatch(rpc.method, rpc.params, ctx);
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

  /**
   * Opens SendStreamingMessage / SubscribeToTask (spec digest §10.6). Errors before the first event are
   * thrown, so they reach the client as a plain JSON-RPC error, not as a stream.
   */
  private async openStream(
    method: 'SendStreamingMessage' | 'SubscribeToTask',
    params: unknown,
    ctx: CallContext,
    extensions: string[],
    req: Request,
  ): Promise<{
    first: StreamItem | null;
    subscription: TaskSubscription | null;
    activated: string[];
  }> {
    if (method === 'SendStreamingMessage') {
      // The stream, not the call, waits for the task: the message is accepted first, then watched.
      const { result, version } = await this.operations.sendMessage(returnImmediately(params), ctx);
      if (!('task' in result)) {
        return { first: { id: version, response: result }, subscription: null, activated: [] };
      }
      return this.follow(ctx, result.task, version, true, []);
    }
    const { id } = decodeSubscribeToTaskRequest(params);
    const { result: task, version } = await this.operations.getTask({ id }, ctx);
    const resume = extensions.includes(RESUMABLE_STREAMS_URI)
      ? lastEventId(req.header('Last-Event-ID'))
      : null;
    if (resume !== null) {
      // Resuming (our extension): exactly the events after the client's last one, even of an ended task.
      const missed = Math.min(resume, version);
      const done = isTerminalState(task.status.state) && missed >= version;
      return done
        ? { first: null, subscription: null, activated: [RESUMABLE_STREAMS_URI] }
        : this.follow(ctx, task, missed, false, [RESUMABLE_STREAMS_URI]);
    }
    if (isTerminalState(task.status.state)) {
      throw new A2aError(
        'UNSUPPORTED_OPERATION',
        `task ${task.id} is ${task.status.state}; there is nothing to subscribe to`,
        { taskId: task.id, state: task.status.state },
      );
    }
    const activated = extensions.includes(RESUMABLE_STREAMS_URI) ? [RESUMABLE_STREAMS_URI] : [];
    return this.follow(ctx, task, version, true, activated);
  }

  private follow(
    ctx: CallContext,
    task: Task,
    after: number,
    snapshotFirst: boolean,
    activated: string[],
  ): { first: StreamItem | null; subscription: TaskSubscription | null; activated: string[] } {
    const first = snapshotFirst ? { id: after, response: { task } } : null;
    if (first && endsStream(first.response)) {
      return { first, subscription: null, activated };
    }
    const ref = { taskId: task.id, contextId: task.contextId };
    return { first, subscription: this.feed.subscribe(ctx.tenantId, ref, after), activated };
  }

  private dispatch(
    method: string,
    params: unknown,
    ctx: CallContext,
  ): Promise<{ result: unknown }> {
    switch (method) {
      case 'SendMessage':
        return this.operations.sendMessage(params, ctx);
      case 'GetTask':
        return this.operations.getTask(params, ctx);
      case 'ListTasks':
        return this.operations.listTasks(params, ctx);
      case 'CancelTask':
        return this.operations.cancelTask(params, ctx);
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

/** SendStreamingMessage accepts the message without blocking; the stream follows the task instead. */
function returnImmediately(params: unknown): unknown {
  if (typeof params !== 'object' || params === null || Array.isArray(params)) {
    return params;
  }
  const request = params as { configuration?: unknown };
  const configuration =
    typeof request.configuration === 'object' && request.configuration !== null
      ? request.configuration
      : {};
  return { ...request, configuration: { ...configuration, returnImmediately: true } };
}

function streamError(reason: 'overflow' | 'error'): A2aError {
  return reason === 'overflow'
    ? new A2aError(
        'UNAVAILABLE',
        'the client did not keep up with the stream; resume with SubscribeToTask and Last-Event-ID',
      )
    : new A2aError('INTERNAL', 'the stream failed');
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

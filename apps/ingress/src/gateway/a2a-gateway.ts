import {
  A2aError,
  asA2aError,
  decodeGetExtendedAgentCardRequest,
  decodeSubscribeToTaskRequest,
  decodeTaskCommand,
  isTerminalState,
  type A2aJsonRpcMethod,
  type AgentCard,
  type SendMessageRequest,
  type Task,
  type TaskCommandMethod,
  type TaskCommandRequests,
  type TaskCommandResponses,
} from '@lib/a2a-protocol';
import { authorizeOperation, CLIENT_SCOPES } from '@lib/authz';
import type { IngressConfig } from '@lib/config';
import { isTransientDatabaseError } from '@lib/event-store';
import { activeTraceparent, currentLogContext } from '@lib/observability';
import { principalIdOf, taskIdOf, type AgentRef, type CallContext } from '@lib/tenancy';
import { Inject, Injectable, type Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { A2aAudit } from '../auth/a2a-audit';
import { ApiKeyAuthenticator, type Identity } from '../auth/api-key.authenticator';
import { BearerAuthenticator } from '../auth/bearer.authenticator';
import { TenantQuotas } from '../auth/tenant-quotas';
import { agentExtensions, declaredExtensions } from '../cards/agent-card.builder';
import type { RequestOrigin } from '../cards/agent-cards';
import { AgentRegistry, type HostedAgent } from '../cards/agent-registry';
import { SignedAgentCards } from '../cards/signed-agent-cards';
import { A2aOperations } from '../operations/a2a-operations';
import {
  lastEventId,
  requestedExtensions,
  RESUMABLE_STREAMS_URI,
} from '../streaming/resumable-streams';
import {
  endsStream,
  TaskEventFeed,
  type StreamEnd,
  type StreamItem,
  type TaskSubscription,
} from '../streaming/task-event-feed';
import { INGRESS_CONFIG } from '../tokens';
import { negotiateVersion } from '../version';
import { agentRefOf, parseRoutingTenant, routingTenant, type AgentRoute } from './agent-route';
import { noteFailure, noteRoute, noteTaskOf } from './inbound-call';

/** The three standard bindings (spec digest §7, §8, §8b). */
export type A2aBinding = 'JSONRPC' | 'HTTP+JSON' | 'GRPC';

/** What a binding read off the wire before any A2A rule applies. */
export interface InboundRequest {
  binding: A2aBinding;
  /** The agent the URL names; null on entry points that route by the request's `tenant`. */
  route: AgentRoute | null;
  /** Every non-empty `tenant` the request carries (REST path prefix, body or message field). */
  tenants: readonly string[];
  apiKey: string | undefined;
  /** The token of an `Authorization: Bearer` header (an OIDC/JWT credential). */
  bearer?: string | undefined;
  /** The A2A-Version service parameter as the binding found it (header, query or metadata). */
  version: string | undefined;
  /** The A2A-Extensions service parameter, comma-separated. */
  extensions: string | undefined;
  traceparent: string | undefined;
  /** For URLs in cards when no public base URL is configured. */
  origin?: RequestOrigin;
  /** The peer's address (for the audit record). */
  sourceAddress?: string;
}

/** An authenticated, routed, version-checked request. */
export interface A2aSession {
  ctx: CallContext;
  agent: HostedAgent;
  /** Requested extensions this agent declares: echoed in `A2A-Extensions` (spec digest §10.2). */
  activatedExtensions: string[];
  origin: RequestOrigin | undefined;
}

/** The principal of keyless callers of an ANONYMOUS_AGENTS agent; they share its tasks. */
export const ANONYMOUS_PRINCIPAL = principalIdOf('anonymous');

/** Keyless callers of an ANONYMOUS_AGENTS agent may do what a client key does by default. */
const ANONYMOUS_IDENTITY: Identity = {
  principalId: ANONYMOUS_PRINCIPAL,
  credentialId: null,
  scopes: CLIENT_SCOPES,
};

export type StreamingMethod = 'SendStreamingMessage' | 'SubscribeToTask';

/** The operations that only agents declaring push notifications take. */
type PushConfigMethod = Extract<TaskCommandMethod, `${string}TaskPushNotificationConfig${string}`>;
export type UnaryMethod = Exclude<A2aJsonRpcMethod, StreamingMethod>;

/** A stream ready to be written: the first item (if any) and the live rest (if any). */
export interface OpenedStream {
  first: StreamItem | null;
  subscription: TaskSubscription | null;
}

/** What a client is told while the platform's database cannot be reached: retry the same request. */
export function databaseUnavailable(): A2aError {
  return new A2aError('UNAVAILABLE', 'the platform database is unavailable; retry shortly');
}

/**
 * Any thrown value as the A2aError a binding reports. A database that cannot be reached is UNAVAILABLE (the
 * client retries). Unexpected errors leave as INTERNAL with the generic message; their cause is logged here,
 * once, for every binding.
 */
export function reportedError(thrown: unknown, logger: Logger): A2aError {
  const error = isTransientDatabaseError(thrown) ? databaseUnavailable() : asA2aError(thrown);
  noteFailure(error);
  if (error.reason === 'INTERNAL') {
    logger.error(thrown instanceof Error ? (thrown.stack ?? thrown.message) : String(thrown));
  }
  return error;
}

export function isStreamingMethod(method: string): method is StreamingMethod {
  return method === 'SendStreamingMessage' || method === 'SubscribeToTask';
}

/**
 * Everything the three bindings share (ARCHITECTURE.md "Bindings hold no business rule"): routing by path
 * or `tenant`, authentication, version and extension negotiation, capability gating and the calls to the
 * operations port. A binding only turns its wire format into (method, ProtoJSON params) and back.
 */
@Injectable()
export class A2aGateway {
  /** DEFAULT_AGENT: the agent of `/.well-known/agent-card.json`, reached by tenant-less requests too. */
  private readonly defaultRoute: AgentRoute | null;

  constructor(
    private readonly operations: A2aOperations,
    private readonly auth: ApiKeyAuthenticator,
    private readonly bearer: BearerAuthenticator,
    private readonly audit: A2aAudit,
    private readonly quotas: TenantQuotas,
    private readonly agents: AgentRegistry,
    private readonly cards: SignedAgentCards,
    private readonly feed: TaskEventFeed,
    @Inject(INGRESS_CONFIG) private readonly config: IngressConfig,
  ) {
    this.defaultRoute = parseRoutingTenant(config.DEFAULT_AGENT);
  }

  /**
   * Routes, authenticates and negotiates. Authentication comes before anything about the tenant's agents
   * is revealed; a key of another tenant fails like a wrong key.
   */
  async open(request: InboundRequest): Promise<A2aSession> {
    const ref = agentRefOf(request.route ?? routeByTenant(request.tenants, this.defaultRoute));
    if (!ref) {
      throw new A2aError('METHOD_NOT_FOUND', 'no agent is hosted at this path');
    }
    noteRoute(ref);
    try {
      return await this.openFor(ref, request);
    } catch (error) {
      if (
        error instanceof A2aError &&
        (error.reason === 'UNAUTHENTICATED' || error.reason === 'PERMISSION_DENIED')
      ) {
        const known = await this.agents.find(ref).then(
          (agent) => agent !== null,
          () => false,
        );
        await this.audit.refused(request, ref, known, error);
      }
      throw error;
    }
  }

  private async openFor(ref: AgentRef, request: InboundRequest): Promise<A2aSession> {
    const identity = await this.identify(ref, request);
    if (request.route) {
      checkTenants(request.route, request.tenants);
    }
    const agent = await this.agents.find(ref);
    if (agent && agent.tenantStatus !== 'active') {
      throw new A2aError('PERMISSION_DENIED', `tenant ${ref.tenantId} is ${agent.tenantStatus}`);
    }
    if (!agent) {
      throw new A2aError('METHOD_NOT_FOUND', `no agent ${ref.agentId} is hosted here`);
    }
    await this.quotas.admitRequest(agent);
    const protocolVersion = negotiateVersion(
      request.version,
      this.config.A2A_ASSUME_V1_WHEN_MISSING,
    );
    const requested = requestedExtensions(request.extensions);
    const declared = declaredExtensions(agent);
    const missing = declared
      .filter((e) => e.required === true)
      .map((e) => e.uri ?? '')
      .filter((uri) => !requested.includes(uri));
    if (missing.length > 0) {
      throw new A2aError(
        'EXTENSION_SUPPORT_REQUIRED',
        `this agent requires the extension(s) ${missing.join(', ')}; list them in A2A-Extensions`,
        { extensions: missing.join(',') },
      );
    }
    const activatedExtensions = requested.filter((uri) => declared.some((e) => e.uri === uri));
    // The call's own span when this process traces it (the task-service and the events continue it).
    const traceparent = activeTraceparent() ?? request.traceparent;
    return {
      ctx: {
        ...ref,
        ...identity,
        binding: request.binding,
        protocolVersion,
        requestId: currentLogContext()?.requestId ?? randomUUID(),
        ...(traceparent ? { traceparent } : {}),
        ...(request.sourceAddress ? { sourceAddress: request.sourceAddress } : {}),
      },
      agent,
      activatedExtensions,
      origin: request.origin,
    };
  }

  /**
   * Who the caller is: a bearer token when one is presented (an API key beside it is ignored), else the API
   * key, else the anonymous principal of an ANONYMOUS_AGENTS agent.
   */
  private async identify(ref: AgentRef, request: InboundRequest): Promise<Identity> {
    if (request.bearer !== undefined) {
      return this.bearer.authenticate(ref.tenantId, request.bearer);
    }
    if (request.apiKey === undefined && this.agents.isAnonymous(ref)) {
      return ANONYMOUS_IDENTITY;
    }
    return this.auth.authenticate(ref.tenantId, request.apiKey);
  }

  /** A unary operation; the result is the ProtoJSON of the RPC's response message. */
  async call(session: A2aSession, method: UnaryMethod, params: unknown): Promise<unknown> {
    try {
      authorizeOperation(session.ctx, method);
      await this.quotas.admitNewTask(session.agent, method, params);
      const result = await this.dispatch(session, method, params);
      noteTaskOf(result);
      await this.audit.operation(session.ctx, method, params, { result });
      return result;
    } catch (error) {
      await this.audit.operation(session.ctx, method, params, { error });
      throw error;
    }
  }

  private async dispatch(
    session: A2aSession,
    method: UnaryMethod,
    params: unknown,
  ): Promise<unknown> {
    const ctx = { ...session.ctx, method };
    switch (method) {
      case 'SendMessage': {
        const request = decodeTaskCommand('sendMessage', params);
        return this.result('sendMessage', withActivatedExtensions(session, request), ctx);
      }
      case 'GetTask':
        return this.result('getTask', decodeTaskCommand('getTask', params), ctx);
      case 'ListTasks':
        return this.result('listTasks', decodeTaskCommand('listTasks', params), ctx);
      case 'CancelTask':
        return this.result('cancelTask', decodeTaskCommand('cancelTask', params), ctx);
      case 'CreateTaskPushNotificationConfig':
        return this.pushConfigResult(session, 'createTaskPushNotificationConfig', params, ctx);
      case 'GetTaskPushNotificationConfig':
        return this.pushConfigResult(session, 'getTaskPushNotificationConfig', params, ctx);
      case 'ListTaskPushNotificationConfigs':
        return this.pushConfigResult(session, 'listTaskPushNotificationConfigs', params, ctx);
      case 'DeleteTaskPushNotificationConfig':
        return this.pushConfigResult(session, 'deleteTaskPushNotificationConfig', params, ctx);
      case 'GetExtendedAgentCard':
        return this.extendedCard(session, params);
    }
  }

  private async result<M extends TaskCommandMethod>(
    method: M,
    request: TaskCommandRequests[M],
    ctx: CallContext,
  ): Promise<TaskCommandResponses[M]> {
    return (await this.operations.invoke(method, request, ctx)).result;
  }

  /**
   * Capability gating of the push-config operations (spec digest §6): only agents whose card declares push
   * notifications take them. The request is decoded first, so malformed input gets its validation error
   * either way.
   */
  private pushConfigResult<M extends PushConfigMethod>(
    session: A2aSession,
    method: M,
    params: unknown,
    ctx: CallContext,
  ): Promise<TaskCommandResponses[M]> {
    const request = decodeTaskCommand(method, params);
    if (session.agent.profile.pushNotifications !== true) {
      throw new A2aError(
        'PUSH_NOTIFICATION_NOT_SUPPORTED',
        'this agent does not declare push notifications',
      );
    }
    return this.result(method, request, ctx);
  }

  /**
   * Opens SendStreamingMessage / SubscribeToTask (spec digest §10.6). Errors before the first event are
   * thrown, so every binding reports them as a plain error, not as a stream.
   */
  async stream(
    session: A2aSession,
    method: StreamingMethod,
    params: unknown,
    lastEventIdHeader: string | undefined,
  ): Promise<OpenedStream> {
    try {
      authorizeOperation(session.ctx, method);
      await this.quotas.admitNewTask(session.agent, method, params);
      const opened = await this.openStream(session, method, params, lastEventIdHeader);
      const first = opened.first?.response;
      noteTaskOf(first);
      await this.audit.operation(session.ctx, method, params, { result: first });
      return opened;
    } catch (error) {
      await this.audit.operation(session.ctx, method, params, { error });
      throw error;
    }
  }

  private async openStream(
    session: A2aSession,
    method: StreamingMethod,
    params: unknown,
    lastEventIdHeader: string | undefined,
  ): Promise<OpenedStream> {
    const ctx = { ...session.ctx, method };
    if (method === 'SendStreamingMessage') {
      // The stream, not the call, waits for the task: the message is accepted first, then watched.
      const request = decodeTaskCommand('sendMessage', params);
      const { result, version } = await this.operations.invoke(
        'sendMessage',
        returnImmediately(withActivatedExtensions(session, request)),
        ctx,
      );
      if (!('task' in result)) {
        return { first: { id: version, response: result }, subscription: null };
      }
      // The turn's stream: it ends when the task is terminal or asks the client for more (§10.6).
      return this.follow(ctx, result.task, version, true, 'turn');
    }
    // SubscribeToTask follows the task through INPUT_REQUIRED / AUTH_REQUIRED to its end (§10.6, corrected).
    const { id } = decodeSubscribeToTaskRequest(params);
    const { result: task, version } = await this.operations.invoke('getTask', { id }, ctx);
    const resume = session.activatedExtensions.includes(RESUMABLE_STREAMS_URI)
      ? lastEventId(lastEventIdHeader)
      : null;
    if (resume !== null) {
      // Resuming (our extension): exactly the events after the client's last one, even of an ended task.
      const missed = Math.min(resume, version);
      const done = isTerminalState(task.status.state) && missed >= version;
      return done
        ? { first: null, subscription: null }
        : this.follow(ctx, task, missed, false, 'terminal');
    }
    if (isTerminalState(task.status.state)) {
      throw new A2aError(
        'UNSUPPORTED_OPERATION',
        `task ${task.id} is ${task.status.state}; there is nothing to subscribe to`,
        { taskId: task.id, state: task.status.state },
      );
    }
    return this.follow(ctx, task, version, true, 'terminal');
  }

  private follow(
    ctx: CallContext,
    task: Task,
    after: number,
    snapshotFirst: boolean,
    end: StreamEnd,
  ): OpenedStream {
    const first = snapshotFirst ? { id: after, response: { task } } : null;
    if (first && endsStream(first.response, end)) {
      return { first, subscription: null };
    }
    const followed = {
      tenantId: ctx.tenantId,
      taskId: taskIdOf(task.id),
      contextId: task.contextId,
    };
    return { first, subscription: this.feed.subscribe(followed, after, end) };
  }

  /**
   * GetExtendedAgentCard (spec digest §10.11): only for authenticated callers, only when declared; signed
   * like the public card (§10.12).
   */
  private extendedCard(session: A2aSession, params: unknown): AgentCard {
    decodeGetExtendedAgentCardRequest(params);
    if (session.agent.profile.extendedAgentCard !== true) {
      throw new A2aError('UNSUPPORTED_OPERATION', 'this agent offers no extended agent card');
    }
    if (session.ctx.principalId === ANONYMOUS_PRINCIPAL) {
      throw new A2aError('UNAUTHENTICATED', 'the extended agent card is for authenticated callers');
    }
    const card = this.cards.extendedCard(session.agent, session.origin)?.card;
    if (!card) {
      throw new A2aError(
        'EXTENDED_AGENT_CARD_NOT_CONFIGURED',
        'this agent declares an extended agent card but none is configured',
      );
    }
    return card;
  }
}

/**
 * On a per-agent URL every `tenant` the request carries must be that agent's routing value (clients copy it
 * from the card's AgentInterface.tenant), spec digest §10.9.
 */
function checkTenants(route: AgentRoute, tenants: readonly string[]): void {
  const own = routingTenant(route);
  if (tenants.some((t) => t !== own)) {
    throw new A2aError(
      'INVALID_PARAMS',
      `this interface serves tenant ${own}; omit the tenant field or send that value`,
      {},
      [{ field: 'tenant', description: `must be empty or ${own} on this interface` }],
    );
  }
}

/**
 * On entry points without a per-agent URL, the request's `tenant` names the agent; a request without one is
 * for the default agent, whose card is the one at the root (`/.well-known/agent-card.json`).
 */
function routeByTenant(tenants: readonly string[], defaultRoute: AgentRoute | null): AgentRoute {
  const distinct = [...new Set(tenants)];
  if (distinct.length === 0 && defaultRoute) {
    return defaultRoute;
  }
  const named = distinct.length === 1 ? parseRoutingTenant(distinct[0] ?? '') : null;
  if (!named) {
    throw new A2aError(
      'INVALID_PARAMS',
      distinct.length === 0
        ? 'this interface routes by tenant: copy AgentInterface.tenant from the agent card into the request'
        : `tenant must be the AgentInterface.tenant of the agent card (<tenant>/<agent>), got ${distinct.join(', ')}`,
      {},
      [{ field: 'tenant', description: 'must be the AgentInterface.tenant of the agent card' }],
    );
  }
  return named;
}

/**
 * Records the agent's own extensions that the request activated in the message's `extensions` (the URIs of
 * the extensions the message uses, spec digest §4.1, §10.2), so that the agent learns from the message it is
 * given that it may answer in the extension's terms, e.g. with A2UI (docs/a2ui.md).
 */
export function withActivatedExtensions(
  session: A2aSession,
  request: SendMessageRequest,
): SendMessageRequest {
  const declared = agentExtensions(session.agent);
  const activated = session.activatedExtensions.filter((uri) =>
    declared.some((e) => e.uri === uri),
  );
  if (activated.length === 0) {
    return request;
  }
  const listed = request.message.extensions ?? [];
  return {
    ...request,
    message: { ...request.message, extensions: [...new Set([...listed, ...activated])] },
  };
}

/**
 * SendStreamingMessage accepts the message without blocking; the stream follows the task instead
 * (`returnImmediately` is ignored for streaming, spec digest §4.3).
 */
function returnImmediately(request: SendMessageRequest): SendMessageRequest {
  return { ...request, configuration: { ...request.configuration, returnImmediately: true } };
}

import {
  A2aError,
  applyHistoryLength,
  canonicalize,
  invalidParams,
  isInterruptedState,
  isTerminalState,
  taskNotFound,
  type Message,
  type SendMessageRequest,
  type SendMessageResponse,
  type TaskStateName,
} from '@lib/a2a-protocol';
import type { TaskServiceConfig } from '@lib/config';
import { noteTask } from '@lib/observability';
import { decide, decideAll, type TaskCommand, type TaskEvent } from '@lib/task-domain';
import { taskIdOf, type TaskId } from '@lib/tenancy';
import { Inject, Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { AgentDirectory } from '../agent-directory';
import { callAudit, callerMetadata, type CallContext, type Versioned } from '../call-context';
import { Clock, IdGenerator } from '../clock';
import { Dispatcher } from '../dispatch/dispatcher';
import { PushConfigs } from '../queries/push-configs';
import { TaskViews, type TaskViewRecord } from '../queries/task-views';
import { TASK_SERVICE_CONFIG } from '../tokens';
import { TaskDecisions } from '../write/task-decisions';
import { TaskStore, type MessageIdClaim, type PushConfigSpec } from '../write/task-store';
import { recordOf, TaskWatch } from '../write/task-watch';
import { AuditSink, TaskWriter, type WriteOutcome } from '../write/task-writer';
import { assertAcceptedParts } from './content-types';
import { pushConfigSpec } from './push-config-spec';

/** A push config registered inline: the spec to write, its origin, and whether the client named its id. */
interface InlineWebhook {
  spec: PushConfigSpec;
  origin: string;
  named: boolean;
}

/**
 * SendMessage (spec digest §10.3–§10.5): creates a task or continues an interrupted one, durably, before any
 * worker sees it. Idempotent per (tenant, agent, caller, message): the same message (messageId and canonical
 * content) sent again is a retry and gets the first task, with what its own configuration asks for (see
 * {@link repeated}); another message under a used messageId is a new message (spec digest §6,
 * "Idempotency"). Blocking unless `returnImmediately`. An agent that declares
 * message replies may answer a new message with a bare Message instead of a task; that is then the result
 * (docs/adr/0009-message-replies.md).
 */
@Injectable()
export class SendMessageHandler {
  constructor(
    private readonly writer: TaskWriter,
    private readonly decisions: TaskDecisions,
    private readonly store: TaskStore,
    private readonly views: TaskViews,
    private readonly configs: PushConfigs,
    private readonly watch: TaskWatch,
    private readonly agents: AgentDirectory,
    private readonly dispatcher: Dispatcher,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly audit: AuditSink,
    @Inject(TASK_SERVICE_CONFIG) private readonly config: TaskServiceConfig,
  ) {}

  async execute(
    request: SendMessageRequest,
    ctx: CallContext,
  ): Promise<Versioned<SendMessageResponse>> {
    const { message } = request;
    const agent = await this.agents.intake(ctx);
    assertAcceptedParts(message, agent.inputModes);
    if (message.taskId) {
      // Only the owner may continue a task; anyone else sees TaskNotFound.
      await this.views.get(ctx, taskIdOf(message.taskId));
    }
    const webhook = this.inlineWebhook(request, agent.pushNotifications);
    // A new message to an agent that may answer it with a bare Message opens an exchange (ADR 0009).
    const mayReply = !message.taskId && agent.messageReplies;
    const accepted = await this.accept(ctx, request, mayReply, webhook);
    const config = request.configuration;
    const read = (): Promise<TaskViewRecord> => this.read(ctx, accepted.taskId);
    // `returnImmediately` returns the task as accepted, except that an exchange waits for the agent's
    // answer: until then there is no task to return (ADR 0009).
    const known = accepted.record ?? (config?.returnImmediately ? await read() : undefined);
    let record =
      config?.returnImmediately && known && answered(known)
        ? known
        : await this.watch.waitFor(
            ctx,
            accepted.taskId,
            config?.returnImmediately ? answered : settled,
            this.config.BLOCKING_SEND_TIMEOUT_MS,
            known,
            read,
          );
    if (config?.returnImmediately && known?.exchange && !record.exchange) {
      // Answered with a task: the task as accepted, as for any agent; a stream of it then carries the
      // agent's first updates too.
      record = await this.asAccepted(ctx, accepted.taskId);
    }
    if (record.exchange) {
      if (record.exchange.reply) {
        return { result: { message: record.exchange.reply }, version: record.version };
      }
      throw new A2aError(
        'UNAVAILABLE',
        `the agent has not answered message ${message.messageId} yet; it is accepted: send the same ` +
          'message again to get the answer',
        { messageId: message.messageId },
      );
    }
    return {
      result: { task: applyHistoryLength(record.task, config?.historyLength) },
      version: record.version,
    };
  }

  /**
   * The webhook registered inline (`configuration.taskPushNotificationConfig`, spec digest §10.10): for the
   * task the message goes to, written in the message's own append, so the task's first event is delivered.
   */
  private inlineWebhook(
    request: SendMessageRequest,
    pushNotifications: boolean,
  ): InlineWebhook | null {
    const config = request.configuration?.taskPushNotificationConfig;
    if (!config) {
      return null;
    }
    if (!pushNotifications) {
      throw new A2aError(
        'PUSH_NOTIFICATION_NOT_SUPPORTED',
        'this agent does not declare push notifications',
      );
    }
    return {
      ...pushConfigSpec(
        config,
        config.id || this.ids.randomId(),
        'configuration.taskPushNotificationConfig.',
      ),
      named: Boolean(config.id),
    };
  }

  /** The task from the view; else, as an exchange not shown as a task, from its stream (ADR 0009). */
  private async read(ctx: CallContext, taskId: TaskId): Promise<TaskViewRecord> {
    const found = await this.views.find(ctx, taskId);
    if (found) {
      return found;
    }
    const state = await this.decisions.state({ tenantId: ctx.tenantId, taskId });
    if (
      state.status === 'absent' ||
      state.agentId !== ctx.agentId ||
      state.ownerId !== ctx.principalId
    ) {
      throw taskNotFound(taskId);
    }
    return recordOf(state);
  }

  /** An exchange the agent answered with a task, as it stood before the agent's first update. */
  private async asAccepted(ctx: CallContext, taskId: TaskId): Promise<TaskViewRecord> {
    const state = await this.decisions.state(
      { tenantId: ctx.tenantId, taskId },
      (next) => next.status === 'present' && next.answer.kind === 'task',
    );
    if (state.status === 'absent') {
      throw taskNotFound(taskId);
    }
    return { task: state.task, state: state.task.status.state, version: state.version };
  }

  /**
   * A message sent again (same messageId and content) goes to the task the first one went to and appends no
   * second message, but what the resend's configuration asks for holds (docs/conformance.md, "A message sent
   * again"): a webhook it carries is registered for that task, unless the task has the same one already,
   * in one commit with the resend's audit record; output modes other than the first send's are refused.
   * `returnImmediately` and `historyLength` shape the resend's answer as for any call ({@link execute}).
   * Otherwise its audit record is written on its own, naming that task.
   */
  private async repeated(
    ctx: CallContext,
    earlier: TaskId,
    request: SendMessageRequest,
    webhook: InlineWebhook | null,
  ): Promise<{ taskId: TaskId }> {
    const task = { tenantId: ctx.tenantId, taskId: earlier };
    const events = await this.decisions.events(task);
    assertSameOutputModes(events, request);
    const audit = callAudit(ctx, 'SendMessage', task);
    // An exchange the agent answered with a message has no task to notify about: as for the first send.
    const register =
      webhook !== null &&
      !events.some((event) => event.type === 'AgentReplied') &&
      !(await this.configs.has(task, webhook.spec, webhook.named));
    if (webhook && register) {
      await this.writer.write({
        ...task,
        decide: (state) =>
          decide(
            { type: 'RegisterPushConfig', configId: webhook.spec.configId, origin: webhook.origin },
            state,
          ),
        metadata: callerMetadata(ctx),
        pushConfigs: [webhook.spec],
        audit,
      });
    } else {
      await this.audit.recordApart(audit);
    }
    return { taskId: earlier };
  }

  /**
   * Appends the message (a new task, or the next turn of an interrupted one) together with its messageId
   * claim, and with a lease when a worker of the agent connected here has room and the agent's leases are
   * not capped (`maxConcurrency`: its tasks wait for the dispatcher): one append, one commit.
   * Returns the task an earlier SendMessage with the same message went to instead, when there is one.
   */
  private async accept(
    ctx: CallContext,
    request: SendMessageRequest,
    mayReply: boolean,
    webhook: InlineWebhook | null,
  ): Promise<{ taskId: TaskId; record?: TaskViewRecord }> {
    const { message } = request;
    const acceptedOutputModes = request.configuration?.acceptedOutputModes;
    const claim: MessageIdClaim = {
      agentId: ctx.agentId,
      principalId: ctx.principalId,
      messageId: message.messageId,
      digest: messageDigest(message),
    };
    for (;;) {
      const now = this.clock.now();
      const taskId = taskIdOf(message.taskId ?? this.ids.randomId());
      noteTask(taskId);
      const first: TaskCommand = message.taskId
        ? {
            type: 'AppendUserMessage',
            message,
            now,
            ...(acceptedOutputModes && { acceptedOutputModes }),
          }
        : {
            type: 'SubmitTask',
            taskId,
            contextId: message.contextId ?? this.ids.randomId(),
            agentId: ctx.agentId,
            ownerId: ctx.principalId,
            message,
            ...(request.metadata ? { metadata: request.metadata } : {}),
            ...(mayReply ? { mayReply } : {}),
            ...(acceptedOutputModes && { acceptedOutputModes }),
            now,
          };
      const commands: TaskCommand[] = [first];
      if (webhook) {
        commands.push({
          type: 'RegisterPushConfig',
          configId: webhook.spec.configId,
          origin: webhook.origin,
        });
      }
      const session = this.dispatcher.reserve(ctx);
      if (session) {
        commands.push({
          type: 'GrantLease',
          workerId: session.workerId,
          leaseTtlMs: this.agents.leaseTtlMs(ctx),
          now,
        });
      }
      let outcome: WriteOutcome | null = null;
      try {
        outcome = await this.writer.write({
          tenantId: ctx.tenantId,
          taskId,
          decide: (state) => decideAll(commands, state),
          metadata: callerMetadata(ctx),
          fresh: !message.taskId,
          claim,
          audit: callAudit(ctx, 'SendMessage', { tenantId: ctx.tenantId, taskId }),
          ...(webhook ? { pushConfigs: [webhook.spec] } : {}),
        });
      } catch (error) {
        // A turn refused on the task's state may be the retry of a turn that was accepted.
        const earlier = message.taskId ? await this.store.findMessageId(ctx.tenantId, claim) : null;
        if (!earlier) {
          throw error;
        }
        return this.repeated(ctx, earlier, request, webhook);
      } finally {
        if (session) {
          this.dispatcher.granted(session, outcome, { tenantId: ctx.tenantId, taskId });
        }
      }
      switch (outcome.kind) {
        case 'written':
          return { taskId, record: recordOf(outcome.after) };
        case 'unchanged':
          return { taskId };
        case 'duplicate': {
          const earlier = await this.store.findMessageId(ctx.tenantId, claim);
          if (earlier) {
            return this.repeated(ctx, earlier, request, webhook);
          }
          // The claim was given back meanwhile (its append conflicted): claim it again.
        }
      }
    }
  }
}

/**
 * Refuses a resend whose `acceptedOutputModes` differ from those its first send recorded (as a set of media
 * types, case aside; none named means any): the task was made for what the first send accepted.
 */
function assertSameOutputModes(events: readonly TaskEvent[], request: SendMessageRequest): void {
  const { messageId } = request.message;
  const first = events
    .map((event) =>
      event.type === 'TaskSubmitted' || event.type === 'UserMessageAppended' ? event.data : null,
    )
    .filter((data) => data?.message.messageId === messageId)
    .at(-1);
  const before = modeSet(first?.acceptedOutputModes);
  const now = modeSet(request.configuration?.acceptedOutputModes);
  if (before !== now) {
    throw invalidParams([
      {
        field: 'configuration.acceptedOutputModes',
        description:
          `message ${messageId} was first sent accepting ${before || 'any output mode'}; a resend must ` +
          'accept the same (send a message with a new messageId to ask for other output modes)',
      },
    ]);
  }
}

/** Media types as a comparable set: lower case, sorted, each once, comma-separated; "" for none (any). */
function modeSet(modes: readonly string[] | undefined): string {
  return [...new Set((modes ?? []).map((mode) => mode.trim().toLowerCase()))].sort().join(', ');
}

/** SHA-256 of the decoded message's canonical JSON (RFC 8785): equal for a byte-different but same message. */
function messageDigest(message: Message): string {
  return createHash('sha256').update(canonicalize(message)).digest('hex');
}

/** A blocking SendMessage returns once the agent replied, or once its task is terminal or interrupted (§10.4). */
function settled(record: TaskViewRecord): boolean {
  if (record.exchange) {
    return record.exchange.reply !== null;
  }
  const state = record.state as TaskStateName;
  return isTerminalState(state) || isInterruptedState(state);
}

/** The agent answered: with a task (every stream of an agent without message replies) or a message. */
function answered(record: TaskViewRecord): boolean {
  return !record.exchange || record.exchange.reply !== null;
}

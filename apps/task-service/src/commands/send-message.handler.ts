import {
  applyHistoryLength,
  canonicalize,
  decodeSendMessageRequest,
  invalidParams,
  isInterruptedState,
  isTerminalState,
  type Message,
  type SendMessageRequest,
  type SendMessageResponse,
  type TaskStateName,
} from '@lib/a2a-protocol';
import type { TaskServiceConfig } from '@lib/config';
import { decide } from '@lib/task-domain';
import { Inject, Injectable } from '@nestjs/common';
import { createHash, randomUUID } from 'node:crypto';
import type { PoolClient } from 'pg';
import { AgentDirectory } from '../agent-directory';
import { callerMetadata, type CallContext, type Versioned } from '../call-context';
import { NoticeBus } from '../notice-bus';
import { TaskViews } from '../queries/task-views';
import { TaskRepository } from '../task.repository';
import { TASK_SERVICE_CONFIG } from '../tokens';
import { assertAcceptedParts } from './content-types';

/**
 * SendMessage (spec digest §10.3–§10.5): creates a task or continues an interrupted one, durably, before any
 * worker sees it. Idempotent per (tenant, agent, caller, messageId): repeating the same message is a retry and
 * gets the first task; another message under a used messageId is refused (its content would otherwise be
 * dropped). Blocking unless `returnImmediately`.
 */
@Injectable()
export class SendMessageHandler {
  constructor(
    private readonly tasks: TaskRepository,
    private readonly views: TaskViews,
    private readonly bus: NoticeBus,
    private readonly agents: AgentDirectory,
    @Inject(TASK_SERVICE_CONFIG) private readonly config: TaskServiceConfig,
  ) {}

  async execute(input: unknown, ctx: CallContext): Promise<Versioned<SendMessageResponse>> {
    const request = decodeSendMessageRequest(input);
    const { message } = request;
    assertAcceptedParts(message, await this.agents.inputModes(ctx.tenantId, ctx.agentId));
    if (message.taskId) {
      // Only the owner may continue a task; anyone else sees TaskNotFound.
      await this.views.get(ctx, message.taskId);
    }
    const taskId = await this.tasks.transact(async (client) => {
      const earlier = await this.claimMessageId(client, ctx, message);
      if (earlier) {
        return earlier;
      }
      return message.taskId
        ? this.continueTask(client, ctx, message.taskId, message)
        : this.submitTask(client, ctx, request);
    });

    const config = request.configuration;
    const record = config?.returnImmediately
      ? await this.views.get(ctx, taskId)
      : await this.views.waitFor(
          ctx,
          taskId,
          this.bus,
          (r) => settled(r.state as TaskStateName),
          this.config.BLOCKING_SEND_TIMEOUT_MS,
        );
    return {
      result: { task: applyHistoryLength(record.task, config?.historyLength) },
      version: record.version,
    };
  }

  private async submitTask(
    client: PoolClient,
    ctx: CallContext,
    request: SendMessageRequest,
  ): Promise<string> {
    const taskId = randomUUID();
    const command = {
      type: 'SubmitTask' as const,
      taskId,
      contextId: request.message.contextId ?? randomUUID(),
      agentId: ctx.agentId,
      ownerId: ctx.principalId,
      message: request.message,
      ...(request.metadata ? { metadata: request.metadata } : {}),
      now: new Date(),
    };
    await this.tasks.executeIn(
      client,
      ctx.tenantId,
      taskId,
      (s) => decide(command, s),
      callerMetadata(ctx),
    );
    await this.recordMessageId(client, ctx, request.message, taskId);
    return taskId;
  }

  private async continueTask(
    client: PoolClient,
    ctx: CallContext,
    taskId: string,
    message: Message,
  ): Promise<string> {
    const command = { type: 'AppendUserMessage' as const, message, now: new Date() };
    await this.tasks.executeIn(
      client,
      ctx.tenantId,
      taskId,
      (s) => decide(command, s),
      callerMetadata(ctx),
    );
    await this.recordMessageId(client, ctx, message, taskId);
    return taskId;
  }

  /**
   * Returns the task an earlier request with the same message went to, locking the key for this
   * transaction otherwise (a concurrent duplicate waits, then finds the first one's task). The same
   * messageId with another message, or naming another task, is invalid params.
   */
  private async claimMessageId(
    client: PoolClient,
    ctx: CallContext,
    message: Message,
  ): Promise<string | null> {
    await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
      JSON.stringify([ctx.tenantId, ctx.agentId, ctx.principalId, message.messageId]),
    ]);
    const found = await client.query<{ task_id: string; message_digest: string | null }>(
      `SELECT task_id, message_digest FROM ops.message_ids
        WHERE tenant_id = $1 AND agent_id = $2 AND principal_id = $3 AND message_id = $4`,
      [ctx.tenantId, ctx.agentId, ctx.principalId, message.messageId],
    );
    const row = found.rows[0];
    if (!row) {
      return null;
    }
    const sameMessage =
      row.message_digest === null || row.message_digest === messageDigest(message);
    if (!sameMessage || (message.taskId && row.task_id !== message.taskId)) {
      throw invalidParams([
        {
          field: 'message.messageId',
          description: `already used for another message (task ${row.task_id}); a retry repeats the message unchanged, a new message needs a new messageId`,
        },
      ]);
    }
    return row.task_id;
  }

  private async recordMessageId(
    client: PoolClient,
    ctx: CallContext,
    message: Message,
    taskId: string,
  ): Promise<void> {
    await client.query(
      `INSERT INTO ops.message_ids
         (tenant_id, agent_id, principal_id, message_id, task_id, message_digest)
       VALUES ($1, $2, $3, $4, $5, $6)`,
      [
        ctx.tenantId,
        ctx.agentId,
        ctx.principalId,
        message.messageId,
        taskId,
        messageDigest(message),
      ],
    );
  }
}

/** SHA-256 of the decoded message's canonical JSON (RFC 8785): equal for a byte-different but same message. */
function messageDigest(message: Message): string {
  return createHash('sha256').update(canonicalize(message)).digest('hex');
}

/** A blocking SendMessage returns once the task is terminal or interrupted (§10.4). */
function settled(state: TaskStateName): boolean {
  return isTerminalState(state) || isInterruptedState(state);
}

import {
  applyHistoryLength,
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
import { randomUUID } from 'node:crypto';
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
 * worker sees it. Idempotent per (tenant, agent, caller, messageId). Blocking unless `returnImmediately`.
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
    await this.recordMessageId(client, ctx, request.message.messageId, taskId);
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
    await this.recordMessageId(client, ctx, message.messageId, taskId);
    return taskId;
  }

  /**
   * Returns the task an earlier request with the same messageId went to, locking the key for this
   * transaction otherwise (a concurrent duplicate waits, then finds the first one's task).
   */
  private async claimMessageId(
    client: PoolClient,
    ctx: CallContext,
    message: Message,
  ): Promise<string | null> {
    await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
      JSON.stringify([ctx.tenantId, ctx.agentId, ctx.principalId, message.messageId]),
    ]);
    const found = await client.query<{ task_id: string }>(
      `SELECT task_id FROM ops.message_ids
        WHERE tenant_id = $1 AND agent_id = $2 AND principal_id = $3 AND message_id = $4`,
      [ctx.tenantId, ctx.agentId, ctx.principalId, message.messageId],
    );
    const earlier = found.rows[0]?.task_id ?? null;
    if (earlier && message.taskId && earlier !== message.taskId) {
      throw invalidParams([
        { field: 'message.messageId', description: `already used for task ${earlier}` },
      ]);
    }
    return earlier;
  }

  private async recordMessageId(
    client: PoolClient,
    ctx: CallContext,
    messageId: string,
    taskId: string,
  ): Promise<void> {
    await client.query(
      `INSERT INTO ops.message_ids (tenant_id, agent_id, principal_id, message_id, task_id)
       VALUES ($1, $2, $3, $4, $5)`,
      [ctx.tenantId, ctx.agentId, ctx.principalId, messageId, taskId],
    );
  }
}

/** A blocking SendMessage returns once the task is terminal or interrupted (§10.4). */
function settled(state: TaskStateName): boolean {
  return isTerminalState(state) || isInterruptedState(state);
}

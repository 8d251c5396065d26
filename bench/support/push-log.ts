import type { TenantId } from '@lib/ids';
/**
 * What the push benchmark writes into Postgres: webhook configs straight into `ops.push_configs` (the rows the
 * task-service writes when a client registers a webhook, without the `PushConfigRegistered` event, which no
 * webhook is sent for), and task events that a stream of the task shows, appended the way the task-service
 * appends them (`appendToStream` in a transaction, the view row with the first event, a task notice).
 */
import type { Message } from '@lib/a2a-protocol';
import { appendToStream, NOTICE_CHANNEL, type Notice } from '@lib/event-store';
import {
  TASK_EVENT_SCHEMA_VERSION,
  taskStreamId,
  toStreamResponse,
  type TaskEvent,
} from '@lib/task-domain';
import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { wallMs } from './wall-clock';

/** A task the benchmark delivers webhooks for. */
export interface PushTask {
  tenantId: TenantId;
  taskId: string;
  contextId: string;
  agentId: string;
}

/** The id every benchmark task's one webhook is registered under. */
export const BENCH_CONFIG_ID = 'bench-hook';

/** Principal recorded as the creator of the configs and the owner of the tasks. */
const OWNER = 'push-bench';

/** Rows per INSERT when seeding configs. */
const SEED_CHUNK = 5_000;

export function newPushTasks(tenantId: TenantId, count: number, agentId = 'echo'): PushTask[] {
  return Array.from({ length: count }, () => ({
    tenantId,
    taskId: randomUUID(),
    contextId: randomUUID(),
    agentId,
  }));
}

/**
 * Registers one webhook (`url`, no token or authentication) for each task, applying from its first event
 * (`from_generation` 0, as an inline registration with the task's first message): the bulk path for many
 * tasks, writing the same rows as the task-service.
 */
export async function seedPushConfigs(
  pool: Pool,
  tasks: readonly PushTask[],
  url: string,
): Promise<void> {
  for (let start = 0; start < tasks.length; start += SEED_CHUNK) {
    const chunk = tasks.slice(start, start + SEED_CHUNK);
    await pool.query(
      `INSERT INTO ops.push_configs (tenant_id, task_id, config_id, url, from_generation, created_by)
       SELECT t, k, $3, $4, 0, $5 FROM unnest($1::text[], $2::text[]) AS c(t, k)`,
      [chunk.map((t) => t.tenantId), chunk.map((t) => t.taskId), BENCH_CONFIG_ID, url, OWNER],
    );
  }
}

/**
 * Generation `generation` of a task whose every event is shown by streams (so every one is a webhook):
 * `TaskSubmitted` first, then a working status, an artifact chunk and an agent message in turn.
 */
export function deliverableEvent(task: PushTask, generation: number): TaskEvent {
  const at = new Date().toISOString();
  const ref = { taskId: task.taskId, contextId: task.contextId };
  const message = (role: Message['role'], text: string): Message => ({
    messageId: randomUUID(),
    role,
    parts: [{ text }],
    ...ref,
  });
  if (generation === 1) {
    return {
      type: 'TaskSubmitted',
      data: {
        ...ref,
        agentId: task.agentId,
        ownerId: OWNER,
        message: message('ROLE_USER', `task ${task.taskId}`),
        submittedAt: at,
      },
    };
  }
  switch (generation % 3) {
    case 0:
      return {
        type: 'TaskStatusUpdated',
        data: { status: { state: 'TASK_STATE_WORKING', timestamp: at } },
      };
    case 1:
      return {
        type: 'ArtifactChunkAppended',
        data: {
          artifact: { artifactId: `a-${task.taskId}`, parts: [{ text: `chunk ${generation}` }] },
          append: generation > 4,
          lastChunk: false,
        },
      };
    default:
      return {
        type: 'AgentMessageAppended',
        data: { message: message('ROLE_AGENT', `note ${generation}`) },
      };
  }
}

/** True when a stream (hence a webhook) shows the event: what the feed consumer derives deliveries from. */
export function isDeliverable(task: PushTask, event: TaskEvent): boolean {
  return toStreamResponse(event, { taskId: task.taskId, contextId: task.contextId }) !== null;
}

/** One committed append. */
export interface CommittedEvent {
  eventId: string;
  /** Wall-clock ms (`wallMs`) right after COMMIT returned. */
  committedAtMs: number;
}

/**
 * Appends generation `generation` of `task` ({@link deliverableEvent}) in a transaction of its own, and a task
 * notice (`pg_notify`) as the task-service sends with every append, so that the relay wakes up at once. With
 * the first generation, in the same transaction, the task's view row and, when `webhookUrl` is given, its
 * webhook config (as an inline registration with SendMessage). The caller appends a task's generations one
 * after the other.
 */
export async function appendDeliverable(
  pool: Pool,
  task: PushTask,
  generation: number,
  webhookUrl?: string,
): Promise<CommittedEvent> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    try {
      const [stored] = await appendToStream(
        client,
        task.tenantId,
        taskStreamId(task.tenantId, task.taskId),
        generation - 1,
        [{ event: deliverableEvent(task, generation), schemaVersion: TASK_EVENT_SCHEMA_VERSION }],
        {
          actor: { kind: generation === 1 ? 'caller' : 'agent-worker', id: OWNER },
          binding: 'bench',
        },
      );
      if (generation === 1) {
        await client.query(
          `INSERT INTO read.task_view
             (tenant_id, task_id, agent_id, owner_id, context_id, state, status_timestamp, version, task)
           VALUES ($1, $2, $3, $4, $5, 'TASK_STATE_SUBMITTED', now(), 1, $6)`,
          [
            task.tenantId,
            task.taskId,
            task.agentId,
            OWNER,
            task.contextId,
            JSON.stringify({ id: task.taskId, contextId: task.contextId }),
          ],
        );
        if (webhookUrl !== undefined) {
          await client.query(
            `INSERT INTO ops.push_configs (tenant_id, task_id, config_id, url, from_generation, created_by)
             VALUES ($1, $2, $3, $4, 0, $5)`,
            [task.tenantId, task.taskId, BENCH_CONFIG_ID, webhookUrl, OWNER],
          );
        }
      }
      const notice: Notice = { k: 'task', t: task.tenantId, id: task.taskId, v: generation };
      await client.query('SELECT pg_notify($1, $2)', [NOTICE_CHANNEL, JSON.stringify(notice)]);
      await client.query('COMMIT');
      const committedAtMs = wallMs();
      if (!stored) {
        throw new Error(`nothing appended to ${task.taskId} at generation ${generation}`);
      }
      return { eventId: stored.eventId, committedAtMs };
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  } finally {
    client.release();
  }
}

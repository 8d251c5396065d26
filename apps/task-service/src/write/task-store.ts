import type { SealedAuditEntry } from '@lib/audit';
import {
  NOTICE_CHANNEL,
  TaskLog,
  withTransaction,
  type EventMetadata,
  type TaskStreamHistory,
} from '@lib/event-store';
import {
  shownAsTask,
  TASK_EVENT_SCHEMA_VERSION,
  type PresentTask,
  type TaskAggregate,
  type TaskEvent,
} from '@lib/task-domain';
import {
  taskIdOf,
  type AgentId,
  type PrincipalId,
  type TaskId,
  type TaskRef,
  type TenantId,
} from '@lib/tenancy';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Pool, PoolClient } from 'pg';
import { noticesFor } from '../notices';
import { taskViewRow } from '../projections/task-view.projection';
import { PG_POOL } from '../tokens';
import type { TaskBatch, TaskBatchAudit } from './task-batch';

/**
 * A SendMessage's claim on its (tenant, agent, caller, messageId, digest): the same message sent again is a
 * retry; another message under the same messageId is a message of its own.
 */
export interface MessageIdClaim {
  agentId: AgentId;
  principalId: PrincipalId;
  messageId: string;
  digest: string;
}

/**
 * A webhook as its client registered it (spec digest §4.4 `TaskPushNotificationConfig`, without tenant and
 * task). Written to `ops.push_configs` beside the `PushConfigRegistered` event that names it, never into the
 * log: the token and credentials are secrets (docs/adr/0010-push-notifications.md).
 */
export interface PushConfigSpec {
  configId: string;
  url: string;
  token?: string;
  authentication?: { scheme: string; credentials?: string };
}

/** The change of one stream in a batch: events after `expectedVersion`, with everything derived from them. */
export interface StreamChange {
  tenantId: TenantId;
  streamId: string;
  expectedVersion: number;
  events: readonly TaskEvent[];
  eventIds: readonly string[];
  metadata: EventMetadata;
  after: PresentTask;
  notices: readonly string[];
  claim?: { taskId: TaskId } & MessageIdClaim;
  /** The webhooks the change's `PushConfigRegistered` events name. */
  pushConfigs?: readonly PushConfigSpec[];
  /** The audit record of the call that made the change, committed with it. */
  audit?: SealedAuditEntry;
}

/** The change `events` make to a stream at `before`, with everything derived from it. */
export function streamChange(
  tenantId: TenantId,
  streamId: string,
  before: TaskAggregate,
  events: readonly TaskEvent[],
  after: PresentTask,
  metadata: EventMetadata,
  eventId: () => string,
): StreamChange {
  const byWorker = metadata.actor.kind === 'agent-worker';
  return {
    tenantId,
    streamId,
    expectedVersion: before.version,
    events,
    eventIds: events.map(() => eventId()),
    metadata,
    after,
    notices: noticesFor(tenantId, before, events, after, byWorker).map((n) => JSON.stringify(n)),
  };
}

/** Whether a change registers or removes a webhook (its rows are written beside the events). */
function changesPushConfigs(change: StreamChange): boolean {
  return change.events.some(
    (event) => event.type === 'PushConfigRegistered' || event.type === 'PushConfigRemoved',
  );
}

interface PushConfigRow extends TaskRef {
  spec: PushConfigSpec;
  fromGeneration: number;
  createdBy: string;
}

/** Why a stream's change was left out of a batch; the others were written. */
export type ChangeRefusal = 'conflict' | 'duplicate';

/**
 * The event store port of task streams, as the writer uses it: histories read in bulk, and many streams'
 * changes appended atomically per stream, each under its own expected version.
 */
export abstract class TaskStore {
  /** The histories of several streams (of one tenant or many); a stream that does not exist is absent. */
  abstract readStreams(
    streams: readonly { tenantId: TenantId; streamId: string }[],
    within?: PoolClient,
  ): Promise<Map<string, TaskStreamHistory>>;

  /**
   * Appends every change whose stream is still at its expected version and whose messageId claim (if any) is
   * free, with the task view, work queue and notices derived from it. Returns the changes left out, by index;
   * all others are durable when this resolves (or, `within` a caller's transaction, when it commits).
   */
  abstract append(
    changes: readonly StreamChange[],
    within?: PoolClient,
  ): Promise<Map<number, ChangeRefusal>>;

  /** The task an earlier SendMessage of the same message (messageId and digest) went to. */
  abstract findMessageId(tenantId: TenantId, claim: MessageIdClaim): Promise<TaskId | null>;
}

/** {@link TaskStore} on Postgres: one query per read, one statement (and one commit) per batch. */
@Injectable()
export class PostgresTaskStore extends TaskStore {
  private readonly logger = new Logger(PostgresTaskStore.name);
  private readonly log: TaskLog;

  constructor(@Inject(PG_POOL) private readonly pool: Pool) {
    super();
    this.log = new TaskLog(pool);
  }

  readStreams(
    streams: readonly { tenantId: TenantId; streamId: string }[],
    within?: PoolClient,
  ): Promise<Map<string, TaskStreamHistory>> {
    return this.log.histories(streams, within);
  }

  /**
   * One statement, `events.append_task_batch`: one transaction, one commit. A batch that registers or removes
   * webhooks also writes their rows, in a transaction around both (only such batches pay for it).
   */
  async append(
    changes: readonly StreamChange[],
    within?: PoolClient,
  ): Promise<Map<number, ChangeRefusal>> {
    if (!changes.some(changesPushConfigs)) {
      return this.appendBatch(changes, within);
    }
    const appendWithConfigs = async (client: PoolClient): Promise<Map<number, ChangeRefusal>> => {
      const refused = await this.appendBatch(changes, client);
      await this.writePushConfigs(
        changes.filter((_, index) => !refused.has(index)),
        client,
      );
      return refused;
    };
    return within ? appendWithConfigs(within) : withTransaction(this.pool, appendWithConfigs);
  }

  /**
   * The rows of the webhooks registered and removed by written changes. A config applies to the events after
   * the version its change started from, so an inline registration in SendMessage gets the task's first event;
   * a removal stops at its own event.
   */
  private async writePushConfigs(
    changes: readonly StreamChange[],
    client: PoolClient,
  ): Promise<void> {
    const registered: PushConfigRow[] = [];
    const removed: (TaskRef & { configId: string; generation: number })[] = [];
    for (const change of changes) {
      const taskId = taskIdOf(change.after.task.id);
      change.events.forEach((event, index) => {
        if (event.type === 'PushConfigRemoved') {
          const generation = change.expectedVersion + index + 1;
          removed.push({
            tenantId: change.tenantId,
            taskId,
            configId: event.data.configId,
            generation,
          });
        } else if (event.type === 'PushConfigRegistered') {
          const spec = change.pushConfigs?.find((c) => c.configId === event.data.configId);
          if (!spec) {
            throw new Error(`webhook ${event.data.configId} registered without its config`);
          }
          registered.push({
            tenantId: change.tenantId,
            taskId,
            spec,
            fromGeneration: change.expectedVersion,
            createdBy: change.metadata.actor.id,
          });
        }
      });
    }
    if (registered.length > 0) {
      await client.query({
        name: 'task-store.register-push-configs',
        text: `INSERT INTO ops.push_configs
                 (tenant_id, task_id, config_id, url, token, authentication, from_generation, created_by)
               SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::jsonb[],
                                    $7::integer[], $8::text[])
               ON CONFLICT (tenant_id, task_id, config_id) DO UPDATE SET
                 url = EXCLUDED.url, token = EXCLUDED.token, authentication = EXCLUDED.authentication,
                 from_generation = CASE WHEN push_configs.to_generation IS NULL
                                        THEN push_configs.from_generation ELSE EXCLUDED.from_generation END,
                 to_generation = NULL, created_by = EXCLUDED.created_by, created_at = EXCLUDED.created_at`,
        values: [
          registered.map((r) => r.tenantId),
          registered.map((r) => r.taskId),
          registered.map((r) => r.spec.configId),
          registered.map((r) => r.spec.url),
          registered.map((r) => r.spec.token ?? null),
          registered.map((r) =>
            r.spec.authentication ? JSON.stringify(r.spec.authentication) : null,
          ),
          registered.map((r) => r.fromGeneration),
          registered.map((r) => r.createdBy),
        ],
      });
    }
    if (removed.length > 0) {
      await client.query({
        name: 'task-store.remove-push-configs',
        text: `UPDATE ops.push_configs pc SET to_generation = r.generation
                 FROM unnest($1::text[], $2::text[], $3::text[], $4::integer[])
                   AS r(tenant_id, task_id, config_id, generation)
                WHERE (pc.tenant_id, pc.task_id, pc.config_id) = (r.tenant_id, r.task_id, r.config_id)
                  AND pc.to_generation IS NULL`,
        values: [
          removed.map((r) => r.tenantId),
          removed.map((r) => r.taskId),
          removed.map((r) => r.configId),
          removed.map((r) => r.generation),
        ],
      });
    }
  }

  private async appendBatch(
    changes: readonly StreamChange[],
    within?: PoolClient,
  ): Promise<Map<number, ChangeRefusal>> {
    const batch = taskBatch(changes);
    const result = await (within ?? this.pool).query<{
      stream_index: number;
      outcome: ChangeRefusal | 'reused';
    }>({
      name: 'task-store.append-batch',
      text: 'SELECT stream_index, outcome FROM events.append_task_batch($1::jsonb)',
      values: [JSON.stringify(batch)],
    });
    const refused = new Map<number, ChangeRefusal>();
    for (const { stream_index: index, outcome } of result.rows) {
      if (outcome === 'reused') {
        this.logReuse(changes[index]);
      } else {
        refused.set(index, outcome);
      }
    }
    return refused;
  }

  /** A messageId used before for another message was accepted as a new message (spec digest §6). */
  private logReuse(change: StreamChange | undefined): void {
    const claim = change?.claim;
    if (change && claim) {
      this.logger.log(
        `messageId ${JSON.stringify(claim.messageId)} of ${claim.principalId} (tenant ${change.tenantId}, ` +
          `agent ${claim.agentId}) was used before for another message; accepted as a new message ` +
          `(task ${claim.taskId})`,
      );
    }
  }

  async findMessageId(tenantId: TenantId, claim: MessageIdClaim): Promise<TaskId | null> {
    const result = await this.pool.query<{ task_id: string }>({
      name: 'task-store.find-message-id',
      text: `SELECT task_id FROM ops.message_ids
              WHERE tenant_id = $1 AND agent_id = $2 AND principal_id = $3 AND message_id = $4
                AND message_digest = $5`,
      values: [tenantId, claim.agentId, claim.principalId, claim.messageId, claim.digest],
    });
    const row = result.rows[0];
    return row ? taskIdOf(row.task_id) : null;
  }
}

/** The batch `events.append_task_batch` takes for `changes`: stream `i` is `changes[i]`. */
function taskBatch(changes: readonly StreamChange[]): TaskBatch {
  return {
    channel: NOTICE_CHANNEL,
    streams: changes.map((c, i) => ({
      stream_index: i,
      tenant_id: c.tenantId,
      stream_id: c.streamId,
      expected_version: c.expectedVersion,
      version: c.expectedVersion + c.events.length,
    })),
    claims: changes.flatMap((c, i) =>
      c.claim
        ? [
            {
              stream_index: i,
              tenant_id: c.tenantId,
              agent_id: c.claim.agentId,
              principal_id: c.claim.principalId,
              message_id: c.claim.messageId,
              task_id: c.claim.taskId,
              message_digest: c.claim.digest,
            },
          ]
        : [],
    ),
    events: changes.flatMap((c, i) =>
      c.events.map((event, n) => {
        const eventId = c.eventIds[n];
        if (eventId === undefined) {
          throw new Error(`the change of ${c.streamId} has no id for its event ${n}`);
        }
        return {
          stream_index: i,
          tenant_id: c.tenantId,
          stream_id: c.streamId,
          event_id: eventId,
          stream_version: c.expectedVersion + n + 1,
          event_type: event.type,
          schema_version: TASK_EVENT_SCHEMA_VERSION,
          data: event.data,
          metadata: c.metadata,
        };
      }),
    ),
    // A stream clients do not see as a task (an exchange answered by a message, ADR 0009) has no view row.
    views: changes.flatMap((c, i) => {
      if (!shownAsTask(c.after)) {
        return [];
      }
      const row = taskViewRow(c.tenantId, c.after);
      return {
        stream_index: i,
        tenant_id: c.tenantId,
        task_id: row.taskId,
        agent_id: row.agentId,
        owner_id: row.ownerId,
        context_id: row.contextId,
        state: row.state,
        status_timestamp: row.statusTimestamp,
        version: row.version,
        task: row.task,
      };
    }),
    work: changes.map((c, i) => {
      const lease = c.after.work === 'leased' ? c.after.lease : null;
      return {
        stream_index: i,
        tenant_id: c.tenantId,
        task_id: c.after.task.id,
        agent_id: c.after.agentId,
        status: c.after.work,
        attempt: c.after.attempt,
        lease_epoch: lease?.epoch ?? null,
        worker_id: lease?.workerId ?? null,
        lease_expires_at: lease?.expiresAt ?? null,
        cancel_deadline: c.after.cancel?.deadline ?? null,
      };
    }),
    notices: changes.flatMap((c, i) => c.notices.map((payload) => ({ stream_index: i, payload }))),
    // At most one record per change: the stream index orders them.
    audit: changes.flatMap((c, i) => (c.audit ? [auditRow(c.audit, i)] : [])),
  };
}

/** An audit entry as `events.append_task_batch` takes it (chained in SQL: `audit.chain_records`). */
function auditRow(entry: SealedAuditEntry, streamIndex: number): TaskBatchAudit {
  return {
    stream_index: streamIndex,
    tenant_id: entry.tenantId,
    record_id: entry.recordId,
    occurred_at: entry.occurredAt,
    principal_id: entry.principalId,
    credential_id: entry.credentialId,
    source_address: entry.sourceAddress,
    operation: entry.operation,
    binding: entry.binding,
    resource: entry.resource,
    outcome: entry.outcome,
    reason: entry.reason,
    trace_id: entry.traceId,
    digest: entry.digest,
  };
}

import type { TaskPushNotificationConfig } from '@lib/a2a-protocol';
import type { TaskRef } from '@lib/tenancy';
import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { PG_POOL } from '../tokens';
import type { PushConfigSpec } from '../write/task-store';

interface PushConfigRow {
  task_id: string;
  config_id: string;
  url: string;
  token: string | null;
  authentication: { scheme: string; credentials?: string } | null;
}

/**
 * Reads of a task's current webhooks (`ops.push_configs`, not removed). The caller has checked that the task
 * is the caller's to see; these reads only ever name one tenant's one task.
 */
@Injectable()
export class PushConfigs {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  async find(task: TaskRef, configId: string): Promise<TaskPushNotificationConfig | null> {
    const result = await this.pool.query<PushConfigRow>({
      name: 'push-configs.find',
      text: `SELECT task_id, config_id, url, token, authentication FROM ops.push_configs
              WHERE tenant_id = $1 AND task_id = $2 AND config_id = $3 AND to_generation IS NULL`,
      values: [task.tenantId, task.taskId, configId],
    });
    const row = result.rows[0];
    return row ? asConfig(row) : null;
  }

  /**
   * Whether the task has a webhook to the same URL with the same token and authentication as `spec`; with
   * `sameId`, only the config of `spec`'s id counts (a client-chosen id names one config).
   */
  async has(task: TaskRef, spec: PushConfigSpec, sameId: boolean): Promise<boolean> {
    const result = await this.pool.query({
      name: 'push-configs.has',
      text: `SELECT 1 FROM ops.push_configs
              WHERE tenant_id = $1 AND task_id = $2 AND to_generation IS NULL
                AND ($3::text IS NULL OR config_id = $3) AND url = $4
                AND token IS NOT DISTINCT FROM $5 AND authentication IS NOT DISTINCT FROM $6::jsonb
              LIMIT 1`,
      values: [
        task.tenantId,
        task.taskId,
        sameId ? spec.configId : null,
        spec.url,
        spec.token ?? null,
        spec.authentication ? JSON.stringify(spec.authentication) : null,
      ],
    });
    return result.rows.length > 0;
  }

  /** Up to `limit` configs with ids after `after` (all when null), in id order. */
  async page(
    task: TaskRef,
    after: string | null,
    limit: number,
  ): Promise<TaskPushNotificationConfig[]> {
    const result = await this.pool.query<PushConfigRow>({
      name: 'push-configs.page',
      text: `SELECT task_id, config_id, url, token, authentication FROM ops.push_configs
              WHERE tenant_id = $1 AND task_id = $2 AND to_generation IS NULL
                AND ($3::text IS NULL OR config_id > $3)
              ORDER BY config_id
              LIMIT $4`,
      values: [task.tenantId, task.taskId, after, limit],
    });
    return result.rows.map(asConfig);
  }
}

function asConfig(row: PushConfigRow): TaskPushNotificationConfig {
  return {
    id: row.config_id,
    taskId: row.task_id,
    url: row.url,
    ...(row.token !== null ? { token: row.token } : {}),
    ...(row.authentication ? { authentication: row.authentication } : {}),
  };
}

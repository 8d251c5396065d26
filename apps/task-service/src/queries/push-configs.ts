import type { TaskPushNotificationConfig } from '@lib/a2a-protocol';
import type { TaskRef } from '@lib/tenancy';
import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { PG_POOL } from '../tokens';

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

import {
  type ListTaskPushNotificationConfigsResponse,
  type SendMessageResponse,
  type Task,
  type TaskPushNotificationConfig,
} from '@lib/a2a-protocol';
import { tenantIdOf } from '@lib/ids';
import { taskStreamId } from '@lib/task-domain';
import { createTestDatabase, type TestDatabase } from '@lib/testing';
import type { INestApplicationContext } from '@nestjs/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CommandClient,
  seedTestTenant,
  startReplica,
  userMessage,
  type Caller,
} from './task-service.harness';

// Push-config operations on the task-service, against real Postgres and gRPC: where configs are stored, what
// the log records of them, and who may see them (docs/adr/0010-push-notifications.md). No worker serves these
// agents, so every task stays SUBMITTED (or an exchange stays pending).
const alice: Caller = { tenantId: 'acme', agentId: 'hooks', principalId: 'alice' };
const bob: Caller = { ...alice, principalId: 'bob' };
const mallory: Caller = { tenantId: 'evil', agentId: 'hooks', principalId: 'mallory' };
/** An agent that may answer with a bare Message: a new message opens an exchange, not yet a task. */
const oracle: Caller = { ...alice, agentId: 'oracle' };

interface ConfigRow {
  config_id: string;
  url: string;
  token: string | null;
  authentication: unknown;
  from_generation: number;
  to_generation: number | null;
  created_by: string;
}

describe('push-notification configs on the task-service', () => {
  let db: TestDatabase;
  let app: INestApplicationContext;
  let commands: CommandClient;

  const newTask = async (caller = alice, configuration: Record<string, unknown> = {}) => {
    const response = await commands.call<SendMessageResponse>('sendMessage', caller, {
      message: userMessage('hook me'),
      configuration: { returnImmediately: true, ...configuration },
    });
    if (!('task' in response)) {
      throw new Error('expected a task');
    }
    return response.task;
  };
  const rows = async (task: Task): Promise<ConfigRow[]> =>
    (
      await db.pool.query<ConfigRow>(
        `SELECT config_id, url, token, authentication, from_generation, to_generation, created_by
           FROM ops.push_configs WHERE tenant_id = 'acme' AND task_id = $1 ORDER BY config_id`,
        [task.id],
      )
    ).rows;
  const events = async (task: Task, tenantId = 'acme') =>
    (
      await db.pool.query<{ stream_version: number; event_type: string; data: unknown }>(
        `SELECT stream_version, event_type, data FROM events.messages
          WHERE tenant_id = $1 AND stream_id = $2 ORDER BY stream_version`,
        [tenantId, taskStreamId(tenantIdOf(tenantId), task.id)],
      )
    ).rows;

  beforeAll(async () => {
    db = await createTestDatabase('push_configs');
    await seedTestTenant(db, 'acme', [
      { agentId: 'hooks', pushNotifications: true },
      { agentId: 'plain' },
      { agentId: 'oracle', messageReplies: true, pushNotifications: true },
    ]);
    await seedTestTenant(db, 'evil', [{ agentId: 'hooks', pushNotifications: true }]);
    const replica = await startReplica(db, { BLOCKING_SEND_TIMEOUT_MS: '1500' });
    app = replica.app;
    commands = new CommandClient(replica.commandTarget);
  });

  afterAll(async () => {
    commands.close();
    await app.close();
    await db.drop();
  });

  it('writes a config beside the event that registers it; the log holds no URL path, token or credentials', async () => {
    const task = await newTask();
    const created = await commands.call<TaskPushNotificationConfig>(
      'createTaskPushNotificationConfig',
      alice,
      {
        taskId: task.id,
        id: 'cfg-1',
        url: 'https://hooks.example.org:8443/secret-path?sig=abc',
        token: 'tok-secret',
        authentication: { scheme: 'Bearer', credentials: 'cred-secret' },
      },
    );
    expect(created).toStrictEqual({
      id: 'cfg-1',
      taskId: task.id,
      url: 'https://hooks.example.org:8443/secret-path?sig=abc',
      token: 'tok-secret',
      authentication: { scheme: 'Bearer', credentials: 'cred-secret' },
    });
    expect(await rows(task)).toStrictEqual([
      {
        config_id: 'cfg-1',
        url: 'https://hooks.example.org:8443/secret-path?sig=abc',
        token: 'tok-secret',
        authentication: { scheme: 'Bearer', credentials: 'cred-secret' },
        // Registered at generation 2: it applies to the events after generation 1 (the task's first).
        from_generation: 1,
        to_generation: null,
        created_by: 'alice',
      },
    ]);
    const log = await events(task);
    expect(log.map((e) => [e.stream_version, e.event_type])).toStrictEqual([
      [1, 'TaskSubmitted'],
      [2, 'PushConfigRegistered'],
    ]);
    expect(log[1]?.data).toStrictEqual({
      configId: 'cfg-1',
      origin: 'https://hooks.example.org:8443',
    });
    const everything = JSON.stringify(
      (await db.pool.query(`SELECT data, metadata FROM events.messages`)).rows,
    );
    for (const secret of ['secret-path', 'sig=abc', 'tok-secret', 'cred-secret']) {
      expect(everything).not.toContain(secret);
    }
  });

  it('ends a deleted config at its removal event, and a delete of an unknown or deleted id changes nothing', async () => {
    const task = await newTask();
    await commands.call('createTaskPushNotificationConfig', alice, {
      taskId: task.id,
      id: 'gone',
      url: 'https://hooks.example.org/',
    });
    for (let time = 0; time < 2; time++) {
      expect(
        await commands.call('deleteTaskPushNotificationConfig', alice, {
          taskId: task.id,
          id: 'gone',
        }),
      ).toStrictEqual({});
    }
    await commands.call('deleteTaskPushNotificationConfig', alice, {
      taskId: task.id,
      id: 'never-there',
    });
    expect((await events(task)).map((e) => [e.stream_version, e.event_type, e.data])).toStrictEqual(
      [
        [1, 'TaskSubmitted', expect.anything()],
        [2, 'PushConfigRegistered', { configId: 'gone', origin: 'https://hooks.example.org' }],
        [3, 'PushConfigRemoved', { configId: 'gone' }],
      ],
    );
    expect(await rows(task)).toMatchObject([
      { config_id: 'gone', from_generation: 1, to_generation: 3 },
    ]);
    // Registering the id again revives it from its new registration on.
    await commands.call('createTaskPushNotificationConfig', alice, {
      taskId: task.id,
      id: 'gone',
      url: 'https://hooks.example.org/again',
    });
    expect(await rows(task)).toMatchObject([
      {
        config_id: 'gone',
        url: 'https://hooks.example.org/again',
        from_generation: 3,
        to_generation: null,
      },
    ]);
  });

  it('registers an inline config in the append that accepts the message, from the first event on; a retry registers nothing again', async () => {
    const message = userMessage('inline hook');
    const send = () =>
      commands.call<SendMessageResponse>('sendMessage', alice, {
        message,
        configuration: {
          returnImmediately: true,
          taskPushNotificationConfig: { id: 'inline', url: 'https://hooks.example.org/in' },
        },
      });
    const first = await send();
    const again = await send();
    const task = 'task' in first ? first.task : undefined;
    expect(task).toBeDefined();
    expect('task' in again && again.task.id).toBe(task?.id);
    expect(await rows(task!)).toMatchObject([
      { config_id: 'inline', url: 'https://hooks.example.org/in', from_generation: 0 },
    ]);
    expect((await events(task!)).map((e) => e.event_type)).toStrictEqual([
      'TaskSubmitted',
      'PushConfigRegistered',
    ]);
  });

  it('takes an inline config on a new exchange, whose configs the four operations cannot see until it is a task', async () => {
    const response = await commands
      .call<SendMessageResponse>('sendMessage', oracle, {
        message: userMessage('ask the oracle'),
        configuration: {
          returnImmediately: true,
          taskPushNotificationConfig: { id: 'x', url: 'https://hooks.example.org/x' },
        },
      })
      .catch((error: unknown) => error);
    // Nobody answers the exchange: the call ends UNAVAILABLE, the message and its config accepted.
    expect(response).toMatchObject({ reason: 'UNAVAILABLE' });
    const stored = await db.pool.query<{ task_id: string; from_generation: number }>(
      `SELECT pc.task_id, pc.from_generation FROM ops.push_configs pc
         JOIN events.messages m ON m.tenant_id = pc.tenant_id
          AND m.stream_id = 'task:acme:' || pc.task_id AND m.event_type = 'TaskSubmitted'
        WHERE pc.tenant_id = 'acme' AND pc.config_id = 'x' AND m.data -> 'mayReply' = 'true'`,
    );
    expect(stored.rows).toHaveLength(1);
    const taskId = stored.rows[0]!.task_id;
    const listed = await commands
      .call('listTaskPushNotificationConfigs', oracle, { taskId })
      .catch((error: unknown) => error);
    expect(listed).toMatchObject({ reason: 'TASK_NOT_FOUND' });
  });

  it('shows configs to the task owner only: other principals, tenants and agents get TASK_NOT_FOUND and change nothing', async () => {
    const task = await newTask();
    await commands.call('createTaskPushNotificationConfig', alice, {
      taskId: task.id,
      id: 'mine',
      url: 'https://hooks.example.org/mine',
    });
    const before = await events(task);
    const strangers: Caller[] = [bob, mallory, { ...alice, agentId: 'plain' }];
    for (const caller of strangers) {
      for (const [method, params] of [
        ['createTaskPushNotificationConfig', { taskId: task.id, url: 'https://evil.example/' }],
        ['getTaskPushNotificationConfig', { taskId: task.id, id: 'mine' }],
        ['listTaskPushNotificationConfigs', { taskId: task.id }],
        ['deleteTaskPushNotificationConfig', { taskId: task.id, id: 'mine' }],
      ] as const) {
        const outcome = await commands
          .call(method, caller, params)
          .catch((error: unknown) => error);
        expect(outcome, `${method} by ${JSON.stringify(caller)}`).toMatchObject({
          reason: 'TASK_NOT_FOUND',
        });
      }
    }
    expect(await events(task)).toStrictEqual(before);
    expect(await rows(task)).toMatchObject([{ config_id: 'mine', to_generation: null }]);
  });

  it('keeps the stream gap-free when many configs are registered at once', async () => {
    const task = await newTask();
    const ids = Array.from({ length: 20 }, (_, n) => `c${String(n).padStart(2, '0')}`);
    await Promise.all(
      ids.map((id) =>
        commands.call('createTaskPushNotificationConfig', alice, {
          taskId: task.id,
          id,
          url: `https://hooks.example.org/${id}`,
        }),
      ),
    );
    const log = await events(task);
    expect(log.map((e) => e.stream_version)).toStrictEqual(
      Array.from({ length: 21 }, (_, n) => n + 1),
    );
    const listed: string[] = [];
    let pageToken: string | undefined;
    do {
      const page: ListTaskPushNotificationConfigsResponse = await commands.call(
        'listTaskPushNotificationConfigs',
        alice,
        { taskId: task.id, pageSize: 7, ...(pageToken ? { pageToken } : {}) },
      );
      expect(page.configs.length).toBeLessThanOrEqual(7);
      listed.push(...page.configs.map((c) => c.id ?? ''));
      pageToken = page.nextPageToken;
    } while (pageToken);
    expect(listed).toStrictEqual(ids);
  });
});

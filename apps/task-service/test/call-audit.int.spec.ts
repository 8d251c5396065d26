import { AuditLog } from '@lib/audit';
import { tenantIdOf } from '@lib/ids';
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

/** No worker serves this agent: its tasks stay queued, and a queued task is canceled at once. */
const alice: Caller = {
  tenantId: 'acme',
  agentId: 'lonely',
  principalId: 'alice',
  credentialId: 'key-alice',
};

interface TaskResult {
  task: { id: string };
}

describe('audit records of successful mutating calls, committed with their change', () => {
  let db: TestDatabase;
  let apps: INestApplicationContext[];
  let commands: CommandClient;

  beforeAll(async () => {
    db = await createTestDatabase('call_audit');
    await seedTestTenant(db, 'acme', [{ agentId: 'lonely' }]);
    const replica = await startReplica(db);
    apps = [replica.app];
    commands = new CommandClient(replica.commandTarget);
  });

  afterAll(async () => {
    commands.close();
    await Promise.all(apps.map((app) => app.close()));
    await db.drop();
  });

  /** The task's records, each with whether it was committed by the transaction of one of the task's events. */
  const recordsOf = async (taskId: string) => {
    const { rows } = await db.pool.query<{
      operation: string;
      principal_id: string;
      credential_id: string | null;
      binding: string;
      outcome: string;
      with_event: string | null;
    }>(
      `SELECT r.operation, r.principal_id, r.credential_id, r.binding, r.outcome,
              (SELECT min(m.event_type) FROM events.messages m
                WHERE m.tenant_id = r.tenant_id AND m.stream_id = 'task:acme:' || $1
                  AND m.xmin = r.xmin) AS with_event
         FROM audit.records r
        WHERE r.tenant_id = 'acme' AND r.resource = 'task/' || $1
        ORDER BY r.seq`,
      [taskId],
    );
    return rows;
  };

  it('writes the record of a SendMessage in the transaction of the task it submits', async () => {
    const sent = await commands.call<TaskResult>('sendMessage', alice, {
      message: userMessage('hello'),
    });
    expect(await recordsOf(sent.task.id)).toEqual([
      {
        operation: 'a2a.SendMessage',
        principal_id: 'alice',
        credential_id: 'key-alice',
        binding: 'JSONRPC',
        outcome: 'ok',
        with_event: 'TaskSubmitted',
      },
    ]);
  });

  it('names SendStreamingMessage when the ingress says the client called it', async () => {
    const sent = await commands.call<TaskResult>(
      'sendMessage',
      { ...alice, method: 'SendStreamingMessage' },
      { message: userMessage('stream me'), configuration: { returnImmediately: true } },
    );
    const [record] = await recordsOf(sent.task.id);
    expect(record).toMatchObject({
      operation: 'a2a.SendStreamingMessage',
      with_event: 'TaskSubmitted',
    });
  });

  it('does not let a caller name another operation', async () => {
    const sent = await commands.call<TaskResult>(
      'sendMessage',
      { ...alice, method: 'CancelTask' },
      { message: userMessage('named wrong') },
    );
    const [record] = await recordsOf(sent.task.id);
    expect(record?.operation).toBe('a2a.SendMessage');
  });

  it('records a repeated message, which changes nothing, on its own', async () => {
    const message = userMessage('once');
    const configuration = { returnImmediately: true };
    const first = await commands.call<TaskResult>('sendMessage', alice, { message, configuration });
    const again = await commands.call<TaskResult>('sendMessage', alice, { message, configuration });
    expect(again.task.id).toBe(first.task.id);
    const records = await recordsOf(first.task.id);
    expect(records.map((r) => [r.operation, r.with_event])).toEqual([
      ['a2a.SendMessage', 'TaskSubmitted'],
      ['a2a.SendMessage', null],
    ]);
  });

  it('writes the record of a CancelTask with the cancel, and none for a refused one', async () => {
    const sent = await commands.call<TaskResult>('sendMessage', alice, {
      message: userMessage('cancel me'),
    });
    await commands.call('cancelTask', alice, { id: sent.task.id });
    await expect(commands.call('cancelTask', alice, { id: sent.task.id })).rejects.toMatchObject({
      reason: 'TASK_NOT_CANCELABLE',
    });
    const records = await recordsOf(sent.task.id);
    expect(records.map((r) => r.operation)).toEqual(['a2a.SendMessage', 'a2a.CancelTask']);
    expect(records[1]?.with_event).not.toBeNull();
  });

  it('keeps one valid chain for the tenant', async () => {
    expect(await new AuditLog(db.pool).verify(tenantIdOf('acme'))).toMatchObject({ ok: true });
  });
});

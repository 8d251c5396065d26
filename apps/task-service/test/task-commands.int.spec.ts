import { a2aPb, taskPb } from '@lib/a2a-protocol';
import { createTestDatabase, type TestDatabase } from '@lib/testing';
import type { INestApplicationContext } from '@nestjs/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  callerContext,
  CommandClient,
  seedTestTenant,
  startReplica,
  userMessage,
  type Caller,
} from './task-service.harness';

/** No worker serves this agent: its tasks stay queued. */
const alice: Caller = { tenantId: 'acme', agentId: 'lonely', principalId: 'alice' };

interface TaskResult {
  task: { id: string; status: { state: string } };
}

describe('the TaskCommandService wire: protobuf requests, checked again by the task-service', () => {
  let db: TestDatabase;
  let app: INestApplicationContext;
  let commands: CommandClient;

  beforeAll(async () => {
    db = await createTestDatabase('task_commands');
    await seedTestTenant(db, 'acme', [{ agentId: 'lonely' }]);
    const replica = await startReplica(db);
    app = replica.app;
    commands = new CommandClient(replica.commandTarget);
  });

  afterAll(async () => {
    commands.close();
    await app.close();
    await db.drop();
  });

  it('answers a request carried as protobuf with the response document and the task generation', async () => {
    const sent = await commands.call<TaskResult>('sendMessage', alice, {
      message: userMessage('hello'),
      configuration: { returnImmediately: true },
    });
    const call = taskPb.OperationCall.fromPartial({
      context: callerContext(alice),
      getTask: { id: sent.task.id, historyLength: 1 },
    });
    const result = await commands.result('getTask', call);
    expect(result.error).toBeUndefined();
    expect(result.version).toBeGreaterThan(0);
    const task = JSON.parse(result.responseJson ?? 'null') as TaskResult['task'] & {
      history: unknown[];
    };
    expect(task).toMatchObject({ id: sent.task.id, status: { state: 'TASK_STATE_SUBMITTED' } });
    expect(task.history).toHaveLength(1);
  });

  it('refuses a protobuf request that breaks an A2A rule, as the binding would (INVALID_PARAMS)', async () => {
    const call = taskPb.OperationCall.fromPartial({
      context: callerContext(alice),
      sendMessage: a2aPb.SendMessageRequest.fromPartial({}),
    });
    await expect(commands.send('sendMessage', call)).rejects.toMatchObject({
      reason: 'INVALID_PARAMS',
    });
    const negative = taskPb.OperationCall.fromPartial({
      context: callerContext(alice),
      getTask: { id: 'anything', historyLength: -1 },
    });
    await expect(commands.send('getTask', negative)).rejects.toMatchObject({
      reason: 'INVALID_PARAMS',
    });
  });

  it('refuses a call without its context (INVALID_REQUEST)', async () => {
    const call = taskPb.OperationCall.fromPartial({ getTask: { id: 'anything' } });
    await expect(commands.send('getTask', call)).rejects.toMatchObject({
      reason: 'INVALID_REQUEST',
    });
  });

  it('serves an ingress of the previous release, whose request is ProtoJSON text (request_json)', async () => {
    const legacy = taskPb.OperationCall.fromPartial({
      context: callerContext(alice),
      requestJson: JSON.stringify({
        message: userMessage('from an older ingress'),
        configuration: { returnImmediately: true },
      }),
    });
    const sent = await commands.send<TaskResult>('sendMessage', legacy);
    expect(sent.task.status.state).toBe('TASK_STATE_SUBMITTED');
    const read = await commands.send<TaskResult['task']>(
      'getTask',
      taskPb.OperationCall.fromPartial({
        context: callerContext(alice),
        requestJson: JSON.stringify({ id: sent.task.id }),
      }),
    );
    expect(read.id).toBe(sent.task.id);
    const invalid = taskPb.OperationCall.fromPartial({
      context: callerContext(alice),
      requestJson: JSON.stringify({ id: 7 }),
    });
    await expect(commands.send('getTask', invalid)).rejects.toMatchObject({
      reason: 'INVALID_PARAMS',
    });
  });
});

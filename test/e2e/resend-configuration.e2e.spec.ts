import { tenantIdOf } from '@lib/ids';
/**
 * A message sent again with a configuration of its own (issue 31, docs/conformance.md "A message sent
 * again"): on each binding, for SendMessage and SendStreamingMessage, the resend of a message that left its
 * task waiting for input gets that task; the webhook it carries is registered for the task (once, however
 * often it is sent) and delivered the task's next change; output modes other than the first send's are
 * refused with INVALID_PARAMS; the log holds one message, and every send is audited.
 */
import { taskStreamId } from '@lib/task-domain';
import { kafkaBrokers, uniqueTopic } from '@lib/testing';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTopic } from '../../apps/relay/test/support/topic';
import {
  bindingClients,
  type BindingClient,
  type BindingName,
  type CallOutcome,
} from './support/binding-clients';
import { eventually } from './support/json-rpc';
import { bootStandalone, type Standalone } from './support/platform';
import { WebhookReceiver } from './support/webhook-receiver';

const BINDINGS: readonly BindingName[] = ['JSONRPC', 'HTTP+JSON', 'GRPC'];
const SENDS = ['SendMessage', 'SendStreamingMessage'] as const;
const INTERVIEW = { agent: 'interview' };

let platform: Standalone;
let receiver: WebhookReceiver;
let clients: Record<BindingName, BindingClient>;
let closeClients: () => void;

beforeAll(async () => {
  const brokers = await kafkaBrokers();
  const topic = uniqueTopic('resend-e2e');
  await createTopic(brokers, topic);
  receiver = await WebhookReceiver.start();
  const suffix = randomUUID().slice(0, 8);
  platform = await bootStandalone('e2e_resend', {
    START_RELAY: 'true',
    START_PUSH_DISPATCHER: 'true',
    KAFKA_BROKERS: brokers.join(','),
    TASK_EVENTS_TOPIC: topic,
    PUSH_CONSUMER_GROUP: `resend-e2e-${suffix}`,
    PUSH_QUEUE_PREFIX: `resend-e2e-${suffix}`,
    PUSH_ALLOWLIST: JSON.stringify({ demo: ['127.0.0.1'] }),
  });
  ({ clients, close: closeClients } = bindingClients(platform));
});

afterAll(async () => {
  closeClients?.();
  await platform?.close();
  await receiver?.close();
});

function userMessage(messageId: string, text: string, taskId?: string): Record<string, unknown> {
  return { messageId, role: 'ROLE_USER', parts: [{ text }], ...(taskId ? { taskId } : {}) };
}

function resultOf(outcome: CallOutcome): Record<string, unknown> {
  if (!outcome.ok) {
    throw new Error(`expected a result, got ${JSON.stringify(outcome)}`);
  }
  return outcome.result as Record<string, unknown>;
}

/**
 * The task a send answered with and the state it ended the call in: the result's task; or, for a stream,
 * the first event's task and the last state the stream showed.
 */
async function send(
  client: BindingClient,
  method: (typeof SENDS)[number],
  params: Record<string, unknown>,
): Promise<{ id: string; state: string }> {
  if (method === 'SendMessage') {
    const task = resultOf(await client.call('SendMessage', params, INTERVIEW))['task'] as Shown;
    return { id: String(task.id), state: task.status.state };
  }
  const outcome = await client.stream('SendStreamingMessage', params, INTERVIEW);
  if (!outcome.ok) {
    throw new Error(`expected a stream, got ${JSON.stringify(outcome)}`);
  }
  const shown = outcome.events.map((event) => (event['task'] ?? event['statusUpdate']) as Shown);
  return { id: String(shown[0]?.id), state: String(shown.at(-1)?.status.state) };
}

/** What a task or a status update shows of the task. */
interface Shown {
  id?: string;
  status: { state: string };
}

/** Rows of the task's log (events.messages) of one type. */
async function eventCount(taskId: string, type: string): Promise<number> {
  const result = await platform.db.pool.query<{ n: string }>(
    `SELECT count(*) AS n FROM events.messages
      WHERE tenant_id = 'demo' AND stream_id = $1 AND event_type = $2`,
    [taskStreamId(tenantIdOf('demo'), taskId), type],
  );
  return Number(result.rows[0]?.n);
}

describe.each(BINDINGS)('%s binding', (binding) => {
  describe.each(SENDS)('%s', (method) => {
    it('registers the webhook a resend carries, once, and delivers the task’s next change to it', async () => {
      const client = clients[binding];
      const messageId = `resend-${randomUUID()}`;
      const message = userMessage(messageId, 'Hello');
      const first = await send(client, method, { message });
      expect(first.state).toBe('TASK_STATE_INPUT_REQUIRED');

      const url = receiver.url('/hooks/resend');
      const token = `resend-${binding}-${method}`;
      const webhook = { taskPushNotificationConfig: { url, token } };
      for (let i = 0; i < 2; i++) {
        const again = await send(client, method, { message, configuration: webhook });
        expect(again).toEqual(first);
      }
      const listed = resultOf(
        await client.call('ListTaskPushNotificationConfigs', { taskId: first.id }, INTERVIEW),
      );
      expect(listed['configs']).toEqual([{ id: expect.any(String), taskId: first.id, url, token }]);

      // Output modes other than the first send's (none: any) are refused, and change nothing.
      const contradicting = await client.call(
        'SendMessage',
        { message, configuration: { acceptedOutputModes: ['application/x-not-text'] } },
        INTERVIEW,
      );
      expect(contradicting.ok).toBe(false);
      expect(contradicting.ok ? null : contradicting.reason).toBe('INVALID_PARAMS');
      expect(contradicting.ok ? [] : contradicting.badRequestFields).toEqual([
        'configuration.acceptedOutputModes',
      ]);

      // The log holds the first message only; the send and its two resends are audited against the task.
      expect(await eventCount(first.id, 'TaskSubmitted')).toBe(1);
      expect(await eventCount(first.id, 'UserMessageAppended')).toBe(0);
      const audited = await platform.db.pool.query<{ operation: string; outcome: string }>(
        `SELECT operation, outcome FROM audit.records
          WHERE tenant_id = 'demo' AND resource = $1 ORDER BY seq`,
        [`task/${first.id}`],
      );
      expect(audited.rows).toEqual(
        [1, 2, 3].map(() => ({ operation: `a2a.${method}`, outcome: 'ok' })),
      );

      // The task's next change reaches the webhook the resend registered.
      const answered = await send(client, method, {
        message: userMessage(`answer-${randomUUID()}`, 'Grace Hopper', first.id),
      });
      expect(answered.id).toBe(first.id);
      const posts = await eventually(
        () => Promise.resolve(receiver.acceptedOf(first.id)),
        (got) => got.some((post) => post.body.toString('utf8').includes('"TASK_STATE_COMPLETED"')),
        30_000,
      );
      // Through the config the resend registered, and no other.
      expect(new Set(posts.map((post) => post.headers['x-a2a-notification-token']))).toEqual(
        new Set([token]),
      );
    });
  });
});

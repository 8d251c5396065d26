/**
 * One trace follows a SendMessage through the platform (issue 13, docs/observability.md): the standalone
 * process with its echo worker, relay and push dispatcher, exporting spans over OTLP/HTTP to a receiver in
 * this process. A blocking JSON-RPC SendMessage sent with a known `traceparent` must give one trace with that
 * trace id: the binding's span under the caller's, the task-service command under it, the append under that,
 * the dispatch, the worker's `execute` under the dispatch and its updates under `execute`; the relay's batch
 * span linked to it, and the webhook delivery in it (its POST carrying the trace). Spans name the tenant and
 * the task, never the message's text; the events the call and the worker appended carry the trace too.
 */
import { kafkaBrokers, startIngress, uniqueTopic } from '@lib/testing';
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTopic } from '../../apps/relay/test/support/topic';
import { eventually, rawRpc, rawUserMessage, request, sentTask } from './support/json-rpc';
import { OtlpReceiver, type ReceivedSpan } from './support/otlp-receiver';
import { bootStandalone, taskEvents, type Standalone } from './support/platform';
import { WebhookReceiver } from './support/webhook-receiver';

const TRACE_ID = randomBytes(16).toString('hex');
const CALLER_SPAN_ID = randomBytes(8).toString('hex');
const TEXT = `a message nobody may trace ${randomUUID()}`;

let platform: Standalone;
let otlp: OtlpReceiver;
let webhooks: WebhookReceiver;
let taskId: string;

beforeAll(async () => {
  const brokers = await kafkaBrokers();
  const topic = uniqueTopic('tracing-e2e');
  await createTopic(brokers, topic);
  otlp = await OtlpReceiver.start();
  webhooks = await WebhookReceiver.start();
  const suffix = randomUUID().slice(0, 8);
  platform = await bootStandalone('e2e_tracing', {
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: otlp.tracesUrl,
    START_RELAY: 'true',
    START_PUSH_DISPATCHER: 'true',
    KAFKA_BROKERS: brokers.join(','),
    TASK_EVENTS_TOPIC: topic,
    RELAY_NAME: `tracing-e2e-${suffix}`,
    RELAY_IDLE_POLL_MS: '20',
    PUSH_CONSUMER_GROUP: `tracing-e2e-${suffix}`,
    PUSH_QUEUE_PREFIX: `tracing-e2e-${suffix}`,
    PUSH_ALLOWLIST: JSON.stringify({ demo: ['127.0.0.1'] }),
  });
  const reply = await rawRpc(
    platform.endpoint('demo', 'echo'),
    request('SendMessage', {
      message: rawUserMessage(TEXT),
      configuration: { taskPushNotificationConfig: { url: webhooks.url(), token: 'hook-token' } },
    }),
    { headers: { traceparent: `00-${TRACE_ID}-${CALLER_SPAN_ID}-01` } },
  );
  const task = sentTask(reply);
  expect(task.status.state).toBe('TASK_STATE_COMPLETED');
  taskId = task.id;
});

afterAll(async () => {
  await platform?.close();
  await webhooks?.close();
  await otlp?.close();
});

/** Waits until spans named `names` (each at least once) have arrived in a trace (default: the request's). */
function traceWith(names: readonly string[], traceId = TRACE_ID): Promise<ReceivedSpan[]> {
  return eventually(
    () => Promise.resolve(otlp.spans.filter((span) => span.traceId === traceId)),
    (spans) => names.every((name) => spans.some((span) => span.name === name)),
    30_000,
    200,
  );
}

function only(spans: readonly ReceivedSpan[], name: string): ReceivedSpan {
  const named = spans.filter((span) => span.name === name);
  expect(named.map((span) => span.name)).toStrictEqual([name]);
  return named[0]!;
}

describe('the trace of one SendMessage', () => {
  it('runs from the binding through the command and its append to dispatch, the worker and its updates', async () => {
    const spans = await traceWith([
      'A2A SendMessage',
      'task-service SendMessage',
      'task-service append',
      'task-service dispatch',
      'agent echo execute',
      'task-service PublishUpdate',
    ]);
    const call = only(spans, 'A2A SendMessage');
    expect(call).toMatchObject({
      service: 'a2a-standalone',
      parentSpanId: CALLER_SPAN_ID,
      kind: 2, // SERVER
      attributes: {
        'a2a.binding': 'JSONRPC',
        'a2a.method': 'SendMessage',
        'a2a.tenant': 'demo',
        'a2a.agent': 'echo',
        'a2a.task_id': taskId,
        'rpc.system.name': 'jsonrpc',
        'http.request.method': 'POST',
        'http.response.status_code': 200,
      },
    });
    const command = only(spans, 'task-service SendMessage');
    expect(command).toMatchObject({
      parentSpanId: call.spanId,
      attributes: { 'a2a.tenant': 'demo', 'a2a.agent': 'echo', 'a2a.task_id': taskId },
    });
    const appends = spans.filter((span) => span.name === 'task-service append');
    const accepted = appends.find((span) => span.parentSpanId === command.spanId);
    expect(accepted?.attributes).toMatchObject({
      'a2a.task_id': taskId,
      'a2a.write.outcome': 'written',
      'a2a.write.batch_size': expect.any(Number),
    });
    const dispatch = only(spans, 'task-service dispatch');
    expect(dispatch).toMatchObject({
      parentSpanId: command.spanId,
      attributes: { 'a2a.task_id': taskId, 'a2a.lease_epoch': 1, 'a2a.attempt': 1 },
    });
    const execute = only(spans, 'agent echo execute');
    expect(execute).toMatchObject({
      service: 'a2a-agents',
      parentSpanId: dispatch.spanId,
      attributes: { 'a2a.tenant': 'demo', 'a2a.task_id': taskId },
    });
    const updates = spans.filter((span) => span.name === 'task-service PublishUpdate');
    expect(updates.length).toBeGreaterThan(0);
    for (const update of updates) {
      expect(update).toMatchObject({
        service: 'a2a-standalone',
        parentSpanId: execute.spanId,
        attributes: { 'a2a.task_id': taskId },
      });
      // Each update's append is its child.
      expect(appends.some((span) => span.parentSpanId === update.spanId)).toBe(true);
    }
  });

  it('is continued by the webhook delivery, whose POST carries it, and linked from the relay', async () => {
    const posts = await eventually(
      () => Promise.resolve(webhooks.acceptedOf(taskId)),
      (accepted) => accepted.length >= 2,
      30_000,
    );
    for (const post of posts) {
      expect(post.headers['traceparent']).toMatch(new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-01$`));
    }
    const spans = await traceWith(['push deliver']);
    const deliveries = spans.filter((span) => span.name === 'push deliver');
    expect(deliveries[0]?.attributes).toMatchObject({
      'a2a.task_id': taskId,
      'a2a.tenant': 'demo',
    });
    const posted = new Set(posts.map((post) => String(post.headers['traceparent']).split('-')[2]));
    expect(deliveries.some((span) => posted.has(span.spanId))).toBe(true);
    const relayed = await eventually(
      () =>
        Promise.resolve(
          otlp.spans.filter(
            (span) =>
              span.name === 'relay publish' && span.links.some((l) => l.traceId === TRACE_ID),
          ),
        ),
      (found) => found.length > 0,
      30_000,
      200,
    );
    expect(relayed[0]?.traceId).not.toBe(TRACE_ID);
    expect(relayed[0]?.attributes).toMatchObject({ 'messaging.system': 'kafka' });
  });

  it('is named by every event the call and the worker appended', async () => {
    const events = await taskEvents(platform.db.pool, 'demo', taskId);
    expect(events.length).toBeGreaterThan(2);
    for (const event of events) {
      const { traceparent } = event.metadata as { traceparent?: string };
      expect(traceparent, event.event_type).toMatch(new RegExp(`^00-${TRACE_ID}-`));
    }
  });

  it('is named by a lease the dispatcher grants to queued work (an agent with a cap)', async () => {
    const capped = `UPDATE ops.agents SET max_concurrency = $1 WHERE tenant_id = 'demo' AND agent_id = 'countdown'`;
    await platform.db.pool.query(capped, [1]);
    try {
      const traceId = randomBytes(16).toString('hex');
      // Until the cap reaches the task-service, a task may still be leased on acceptance: send until the
      // dispatcher leases one.
      const grant = await eventually(
        async () => {
          const reply = await rawRpc(
            platform.endpoint('demo', 'countdown'),
            request('SendMessage', { message: rawUserMessage('1', { metadata: { stepMs: 10 } }) }),
            { headers: { traceparent: `00-${traceId}-${CALLER_SPAN_ID}-01` } },
          );
          const events = await taskEvents(platform.db.pool, 'demo', sentTask(reply).id);
          return events.find((event) => event.event_type === 'TaskLeaseGranted');
        },
        (found) => found?.metadata.binding === 'dispatcher',
        15_000,
        100,
      );
      expect((grant?.metadata as { traceparent?: string }).traceparent).toMatch(
        new RegExp(`^00-${traceId}-`),
      );
    } finally {
      await platform.db.pool.query(capped, [null]);
    }
  });

  it('has tenant and task attributes but never the message text, nor the webhook token', () => {
    const exported = otlp.bodies.join('\n');
    expect(exported).toContain(taskId);
    expect(exported).not.toContain(TEXT);
    expect(exported).not.toContain('hook-token');
  });
});

describe('an ingress replica of its own', () => {
  it('hands the trace to the task-service over gRPC (traceparent metadata)', async () => {
    const ingress = await startIngress(
      { POSTGRES_URL: platform.db.url, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: otlp.tracesUrl },
      [`127.0.0.1:${platform.process.env['TASK_SERVICE_GRPC_PORT']}`],
    );
    const traceId = randomBytes(16).toString('hex');
    try {
      const reply = await rawRpc(
        `${ingress.baseUrl}/agents/demo/echo/jsonrpc`,
        request('SendMessage', { message: rawUserMessage('over the hop') }),
        { headers: { traceparent: `00-${traceId}-${CALLER_SPAN_ID}-01` } },
      );
      expect(sentTask(reply).status.state).toBe('TASK_STATE_COMPLETED');
      const spans = await traceWith(
        ['A2A SendMessage', 'task-service SendMessage', 'agent echo execute'],
        traceId,
      );
      const call = only(spans, 'A2A SendMessage');
      expect(call).toMatchObject({ service: 'a2a-ingress', parentSpanId: CALLER_SPAN_ID });
      expect(only(spans, 'task-service SendMessage')).toMatchObject({
        service: 'a2a-standalone',
        parentSpanId: call.spanId,
        kind: 2, // SERVER
        attributes: { 'rpc.method': 'platform.task.v1.TaskCommandService/SendMessage' },
      });
    } finally {
      await ingress.process.stop();
    }
  });
});

/**
 * The platform as a conformance kit meets it (docs/conformance.md): the `tck` agent is public
 * (ANONYMOUS_AGENTS), is the default agent (DEFAULT_AGENT: the root card, and tenant-less gRPC requests)
 * and clients that send no A2A-Version are served as 1.0 (A2A_ASSUME_V1_WHEN_MISSING). Every binding,
 * no credentials, no version, no tenant.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bindingClients,
  type BindingClient,
  type BindingName,
  type CallOptions,
} from './support/binding-clients';
import { bootStandalone, type Standalone } from './support/platform';

const BINDINGS: BindingName[] = ['JSONRPC', 'HTTP+JSON', 'GRPC'];

/** How the kit calls: the tck agent's own URLs, no key, no A2A-Version. */
const KIT: CallOptions = { agent: 'tck', apiKey: null, version: null };

let platform: Standalone;
let clients: Record<BindingName, BindingClient>;
let closeClients: () => void;

beforeAll(async () => {
  platform = await bootStandalone('public_agents', {
    ANONYMOUS_AGENTS: 'demo/tck',
    DEFAULT_AGENT: 'demo/tck',
    A2A_ASSUME_V1_WHEN_MISSING: 'true',
  });
  ({ clients, close: closeClients } = bindingClients(platform));
}, 120_000);

afterAll(async () => {
  closeClients?.();
  await platform?.close();
});

/**
 * gRPC has no per-agent URL: there the request carries an empty tenant and reaches DEFAULT_AGENT, as from a
 * kit that ignores AgentInterface.tenant. The HTTP bindings use the agent's own URLs.
 */
function noTenant(binding: BindingName): Record<string, unknown> {
  return binding === 'GRPC' ? { tenant: '' } : {};
}

/** A SendMessage request whose messageId selects a TCK scenario. */
function scenario(binding: BindingName, prefix: string, text = 'hi'): Record<string, unknown> {
  return {
    ...noTenant(binding),
    message: {
      messageId: `${prefix}-${randomUUID().slice(0, 8)}`,
      role: 'ROLE_USER',
      parts: [{ text }],
    },
  };
}

describe('cards of a public default agent', () => {
  it('the root card is the tck agent, with its schemes declared and no security requirement', async () => {
    const response = await fetch(`${platform.baseUrl}/.well-known/agent-card.json`);
    expect(response.status).toBe(200);
    const card = (await response.json()) as Record<string, unknown>;
    expect(card['name']).toBe('TCK');
    expect(card['securitySchemes']).toHaveProperty('apiKey');
    expect(card).not.toHaveProperty('securityRequirements');
    expect(card['capabilities']).toMatchObject({ extendedAgentCard: true });
    expect((card['skills'] as { id: string }[]).map((s) => s.id)).not.toContain(
      'tck-authenticated',
    );
  });

  it('other agents still require their key', async () => {
    const response = await fetch(
      `${platform.baseUrl}/agents/demo/echo/.well-known/agent-card.json`,
    );
    const card = (await response.json()) as Record<string, unknown>;
    expect(card['securityRequirements']).toStrictEqual([{ schemes: { apiKey: {} } }]);
  });
});

describe.each(BINDINGS)('%s without key, version or tenant', (binding) => {
  it('SendMessage runs a TCK scenario to completion', async () => {
    const outcome = await clients[binding].call(
      'SendMessage',
      scenario(binding, 'tck-complete-task'),
      KIT,
    );
    expect(outcome.ok).toBe(true);
    const task = (outcome as { result: { task: Record<string, unknown> } }).result.task;
    expect(task['status']).toMatchObject({
      state: 'TASK_STATE_COMPLETED',
      message: { parts: [{ text: 'Hello from TCK' }] },
    });
    const read = await clients[binding].call(
      'GetTask',
      { ...noTenant(binding), id: task['id'] },
      KIT,
    );
    expect(read).toMatchObject({ ok: true, result: { id: task['id'] } });
  });

  it('an anonymous task is invisible to a keyed caller of the same tenant (another principal)', async () => {
    const sent = await clients[binding].call(
      'SendMessage',
      scenario(binding, 'tck-complete-task'),
      KIT,
    );
    const id = (sent as { result: { task: { id: string } } }).result.task.id;
    const keyed = await clients[binding].call(
      'GetTask',
      { ...noTenant(binding), id },
      { ...KIT, apiKey: 'demo-key' },
    );
    expect(keyed).toMatchObject({ ok: false, reason: 'TASK_NOT_FOUND' });
  });

  it('as the kit does it (STREAM-SUB-002): a subscription to an input-required task carries the follow-up to COMPLETED', async () => {
    const asked = await clients[binding].call(
      'SendMessage',
      scenario(binding, 'tck-input-required'),
      KIT,
    );
    const task = (asked as { result: { task: { id: string; contextId: string } } }).result.task;
    let followUp: Promise<unknown> | undefined;
    const outcome = await clients[binding].stream(
      'SubscribeToTask',
      { ...noTenant(binding), id: task.id },
      {
        ...KIT,
        onEvent: () => {
          followUp ??= clients[binding].call(
            'SendMessage',
            {
              ...noTenant(binding),
              message: {
                messageId: `tck-complete-task-${randomUUID().slice(0, 8)}`,
                role: 'ROLE_USER',
                taskId: task.id,
                contextId: task.contextId,
                parts: [{ text: 'go on' }],
              },
            },
            KIT,
          );
        },
      },
    );
    expect(outcome.ok).toBe(true);
    const events = (outcome as { events: Record<string, { status?: { state?: string } }>[] })
      .events;
    expect(events[0]?.['task']?.status?.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(events.at(-1)?.['statusUpdate']?.status?.state).toBe('TASK_STATE_COMPLETED');
    expect(await followUp).toMatchObject({ ok: true });
  });

  it('as the kit does it: another message under a used messageId is a new task, the same one again is a retry', async () => {
    const first = scenario(binding, 'tck-complete-task', 'first');
    const send = async (params: Record<string, unknown>): Promise<string> => {
      const outcome = await clients[binding].call('SendMessage', params, KIT);
      return (outcome as { result: { task: { id: string } } }).result.task.id;
    };
    const firstId = await send(first);
    const message = first['message'] as Record<string, unknown>;
    const second = { ...first, message: { ...message, parts: [{ text: 'second' }] } };
    const secondId = await send(second);
    expect(secondId).not.toBe(firstId);
    expect(await send(first)).toBe(firstId);
    expect(await send(second)).toBe(secondId);
  });

  it('a wrong key is refused even on a public agent', async () => {
    const outcome = await clients[binding].call(
      'GetTask',
      { ...noTenant(binding), id: 'anything' },
      { ...KIT, apiKey: 'not-a-key' },
    );
    expect(outcome).toMatchObject({ ok: false, reason: 'UNAUTHENTICATED' });
  });

  it('an agent that is not public still needs a key', async () => {
    const outcome = await clients[binding].call(
      'GetTask',
      { id: 'anything' },
      { ...KIT, agent: 'echo', routing: 'tenant' },
    );
    expect(outcome).toMatchObject({ ok: false, reason: 'UNAUTHENTICATED' });
  });

  it('the direct-message scenario (tck-message-response) is answered with a bare Message, unary and streaming', async () => {
    const unary = await clients[binding].call(
      'SendMessage',
      scenario(binding, 'tck-message-response'),
      KIT,
    );
    expect(unary, JSON.stringify(unary)).toMatchObject({
      ok: true,
      result: { message: { role: 'ROLE_AGENT', parts: [{ text: 'Direct message response' }] } },
    });
    expect(Object.keys((unary as { result: object }).result)).toStrictEqual(['message']);
    const streamed = await clients[binding].stream(
      'SendStreamingMessage',
      scenario(binding, 'tck-message-response'),
      KIT,
    );
    expect(streamed.ok).toBe(true);
    const events = (streamed as { events: Record<string, unknown>[] }).events;
    expect(events.map((event) => Object.keys(event))).toStrictEqual([['message']]);
    expect(events[0]?.['message']).toMatchObject({ parts: [{ text: 'Direct message response' }] });
  });

  it('streams a TCK streaming scenario: task first, ends COMPLETED', async () => {
    const outcome = await clients[binding].stream(
      'SendStreamingMessage',
      scenario(binding, 'tck-stream-001'),
      KIT,
    );
    expect(outcome.ok).toBe(true);
    const events = (outcome as { events: Record<string, { status?: { state?: string } }>[] })
      .events;
    expect(Object.keys(events[0] ?? {})).toStrictEqual(['task']);
    expect(events.at(-1)?.['statusUpdate']?.status?.state).toBe('TASK_STATE_COMPLETED');
  });

  it('GetExtendedAgentCard: UNAUTHENTICATED without a key, the extended card with one', async () => {
    const anonymous = await clients[binding].call('GetExtendedAgentCard', noTenant(binding), KIT);
    expect(anonymous).toMatchObject({ ok: false, reason: 'UNAUTHENTICATED' });
    const keyed = await clients[binding].call('GetExtendedAgentCard', noTenant(binding), {
      ...KIT,
      apiKey: 'demo-key',
    });
    expect(keyed.ok).toBe(true);
    const card = (keyed as { result: { name: string; skills: { id: string }[] } }).result;
    expect(card.name).toBe('TCK');
    expect(card.skills.map((s) => s.id)).toContain('tck-authenticated');
  });
});

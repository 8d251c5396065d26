import type { Message } from '@lib/a2a-protocol';
import { agentIdOf, principalIdOf, tenantIdOf } from '@lib/tenancy';
import { describe, expect, it } from 'vitest';
import type { HostedAgent } from '../cards/agent-registry';
import { withActivatedExtensions, type A2aSession } from './a2a-gateway';

const V09 = 'https://a2ui.org/a2a-extension/a2ui/v0.9';
const RESUMABLE = 'https://a2a-platform.dev/extensions/resumable-streams/v1';

const session = (activatedExtensions: string[], a2ui = true): A2aSession => {
  const agent: HostedAgent = {
    tenantId: tenantIdOf('demo'),
    agentId: agentIdOf('expense'),
    profile: { name: 'Expenses', description: 'd', version: '1', a2ui },
    tenantStatus: 'active',
    acceptsBearer: false,
    quotas: { requestsPerSecond: null, maxActiveTasks: null },
    anonymousAccess: false,
  };
  return {
    ctx: {
      tenantId: agent.tenantId,
      agentId: agent.agentId,
      principalId: principalIdOf('u'),
      credentialId: null,
      scopes: [],
      binding: 'JSONRPC',
      protocolVersion: '1.0',
      requestId: 'r',
    },
    agent,
    activatedExtensions,
    origin: undefined,
  };
};
const message: Message = { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'hi' }] };

describe("the agent's activated extensions are recorded in the message (docs/a2ui.md)", () => {
  it("adds the agent's own activated extensions to message.extensions, not the platform's", () => {
    expect(withActivatedExtensions(session([RESUMABLE, V09]), { message })).toEqual({
      message: { ...message, extensions: [V09] },
    });
  });

  it('keeps what the client listed, without duplicates', () => {
    const listed = { ...message, extensions: ['https://example.com/x', V09] };
    expect(withActivatedExtensions(session([V09]), { message: listed })).toEqual({
      message: { ...listed, extensions: ['https://example.com/x', V09] },
    });
  });

  it('leaves the request as it is when the agent declares none of the activated extensions', () => {
    const request = { message };
    expect(withActivatedExtensions(session([V09], false), request)).toBe(request);
    expect(withActivatedExtensions(session([RESUMABLE]), request)).toBe(request);
    expect(withActivatedExtensions(session([]), request)).toBe(request);
  });
});

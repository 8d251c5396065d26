import { agentIdOf, tenantIdOf } from '@lib/tenancy';
import { describe, expect, it } from 'vitest';
import { agentExtensions, buildAgentCard, declaredExtensions } from './agent-card.builder';
import type { AgentProfile, HostedAgent } from './agent-registry';

const hosted = (profile: Partial<AgentProfile>): HostedAgent => ({
  tenantId: tenantIdOf('demo'),
  agentId: agentIdOf('expense'),
  profile: { name: 'Expenses', description: 'd', version: '1.0.0', ...profile },
  tenantStatus: 'active',
  acceptsBearer: false,
  quotas: { requestsPerSecond: null, maxActiveTasks: null },
  anonymousAccess: false,
});
const origin = { baseUrl: 'https://a.example', grpcAddress: 'a.example:50051' };
const BASIC = 'https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json';

describe('the A2UI extension on the card (docs/a2ui.md)', () => {
  it('an agent with a2ui declares v0.9 and v0.9.1 with the basic catalog, after the platform extension', () => {
    const card = buildAgentCard(hosted({ a2ui: true }), origin);
    expect(card.capabilities.extensions?.map((e) => e.uri)).toEqual([
      'https://a2a-platform.dev/extensions/resumable-streams/v1',
      'https://a2ui.org/a2a-extension/a2ui/v0.9',
      'https://a2ui.org/a2a-extension/a2ui/v0.9.1',
    ]);
    expect(card.capabilities.extensions?.[1]).toMatchObject({
      required: false,
      params: { supportedCatalogIds: [BASIC] },
    });
  });

  it('declares none without a2ui, and an own entry with the same URI takes the place of the default', () => {
    expect(declaredExtensions(hosted({})).map((e) => e.uri)).toEqual([
      'https://a2a-platform.dev/extensions/resumable-streams/v1',
    ]);
    const own = {
      uri: 'https://a2ui.org/a2a-extension/a2ui/v0.9',
      required: false,
      params: { supportedCatalogIds: ['https://example.com/catalog'] },
    };
    expect(agentExtensions(hosted({ a2ui: true, extensions: [own] }))).toEqual([
      expect.objectContaining({ uri: 'https://a2ui.org/a2a-extension/a2ui/v0.9.1' }),
      own,
    ]);
  });
});

import type { AgentCard } from '@lib/a2a-protocol';
import { API_KEY_HEADER } from '../auth/api-key.authenticator';
import { RESUMABLE_STREAMS_EXTENSION } from '../streaming/resumable-streams';
import type { HostedAgent } from './agent-registry';

/** The A2A protocol version every interface of this platform speaks. */
export const PROTOCOL_VERSION = '1.0';

/** Path of an agent's JSON-RPC endpoint, relative to the public base URL. */
export function jsonRpcPath(tenantId: string, agentId: string): string {
  return `/agents/${encodeURIComponent(tenantId)}/${encodeURIComponent(agentId)}/jsonrpc`;
}

/** Path of an agent's own card. */
export function agentCardPath(tenantId: string, agentId: string): string {
  return `/agents/${encodeURIComponent(tenantId)}/${encodeURIComponent(agentId)}/.well-known/agent-card.json`;
}

/**
 * Builds the public Agent Card (spec digest §4.5, §10.11) of a hosted agent: its own profile plus the
 * interfaces that actually serve it and the security the platform actually enforces.
 */
export function buildAgentCard(agent: HostedAgent, baseUrl: string): AgentCard {
  const { profile } = agent;
  const base = baseUrl.replace(/\/+$/, '');
  return {
    name: profile.name,
    description: profile.description,
    supportedInterfaces: [
      {
        url: `${base}${jsonRpcPath(agent.tenantId, agent.agentId)}`,
        protocolBinding: 'JSONRPC',
        protocolVersion: PROTOCOL_VERSION,
      },
    ],
    provider: { organization: 'A2A Platform', url: base },
    version: profile.version,
    ...(profile.documentationUrl ? { documentationUrl: profile.documentationUrl } : {}),
    capabilities: {
      streaming: true,
      pushNotifications: false,
      extendedAgentCard: false,
      extensions: [RESUMABLE_STREAMS_EXTENSION],
    },
    securitySchemes: {
      apiKey: {
        apiKeySecurityScheme: {
          description: 'Tenant API key',
          location: 'header',
          name: API_KEY_HEADER,
        },
      },
    },
    securityRequirements: [{ schemes: { apiKey: {} } }],
    defaultInputModes: profile.defaultInputModes ?? ['text/plain'],
    defaultOutputModes: profile.defaultOutputModes ?? ['text/plain'],
    skills: profile.skills ?? [],
    ...(profile.iconUrl ? { iconUrl: profile.iconUrl } : {}),
  };
}

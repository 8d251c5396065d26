import type { AgentCard, AgentExtension } from '@lib/a2a-protocol';
import type { AgentRef } from '@lib/tenancy';
import { a2uiAgentExtensions } from '@lib/worker-sdk';
import { API_KEY_HEADER } from '../auth/api-key.authenticator';
import { routingTenant } from '../gateway/agent-route';
import { RESUMABLE_STREAMS_EXTENSION } from '../streaming/resumable-streams';
import type { HostedAgent } from './agent-registry';

/** The A2A protocol version every interface of this platform speaks. */
export const PROTOCOL_VERSION = '1.0';

/** Path of an agent's JSON-RPC endpoint, relative to the public base URL. */
export function jsonRpcPath({ tenantId, agentId }: AgentRef): string {
  return `/agents/${encodeURIComponent(tenantId)}/${encodeURIComponent(agentId)}/jsonrpc`;
}

/** Path of an agent's HTTP+JSON base URL, relative to the public base URL; routes are appended to it. */
export function restPath({ tenantId, agentId }: AgentRef): string {
  return `/agents/${encodeURIComponent(tenantId)}/${encodeURIComponent(agentId)}/rest`;
}

/** Where clients reach this platform: the HTTP base URL and the gRPC `host:port`. */
export interface PublicOrigin {
  baseUrl: string;
  grpcAddress: string;
}

/**
 * Builds the public Agent Card (spec digest §4.5, §10.11) of a hosted agent: its own profile plus the
 * interfaces that actually serve it, in preference order, and the security the platform actually enforces.
 * The gRPC interface has no per-agent path, so it names the agent by `tenant` (§10.9).
 */
export function buildAgentCard(agent: HostedAgent, origin: PublicOrigin): AgentCard {
  const { profile } = agent;
  const base = origin.baseUrl.replace(/\/+$/, '');
  return {
    name: profile.name,
    description: profile.description,
    supportedInterfaces: [
      {
        url: `${base}${jsonRpcPath(agent)}`,
        protocolBinding: 'JSONRPC',
        protocolVersion: PROTOCOL_VERSION,
      },
      {
        url: `${base}${restPath(agent)}`,
        protocolBinding: 'HTTP+JSON',
        protocolVersion: PROTOCOL_VERSION,
      },
      {
        url: origin.grpcAddress,
        protocolBinding: 'GRPC',
        tenant: routingTenant(agent),
        protocolVersion: PROTOCOL_VERSION,
      },
    ],
    provider: { organization: 'A2A Platform', url: base },
    version: profile.version,
    ...(profile.documentationUrl ? { documentationUrl: profile.documentationUrl } : {}),
    capabilities: {
      streaming: true,
      pushNotifications: profile.pushNotifications === true,
      extendedAgentCard: profile.extendedAgentCard === true,
      extensions: declaredExtensions(agent),
    },
    securitySchemes: {
      apiKey: {
        apiKeySecurityScheme: {
          description: 'Tenant API key',
          location: 'header',
          name: API_KEY_HEADER,
        },
      },
      ...(agent.acceptsBearer
        ? {
            bearer: {
              httpAuthSecurityScheme: {
                description: 'A JWT of an OIDC issuer the tenant trusts',
                scheme: 'Bearer',
                bearerFormat: 'JWT',
              },
            },
          }
        : {}),
    },
    // A public agent requires nothing; a credential is still accepted and identifies the caller. Otherwise
    // either scheme suffices (each requirement is an alternative).
    ...(agent.anonymousAccess
      ? {}
      : {
          securityRequirements: [
            { schemes: { apiKey: {} } },
            ...(agent.acceptsBearer ? [{ schemes: { bearer: {} } }] : []),
          ],
        }),
    defaultInputModes: profile.defaultInputModes ?? ['text/plain'],
    defaultOutputModes: profile.defaultOutputModes ?? ['text/plain'],
    skills: profile.skills ?? [],
    ...(profile.iconUrl ? { iconUrl: profile.iconUrl } : {}),
  };
}

/**
 * The card authenticated callers get from GetExtendedAgentCard: the public card with the agent's extended
 * description and additional skills. `null` when the agent declares the capability but configured none.
 */
export function buildExtendedAgentCard(agent: HostedAgent, origin: PublicOrigin): AgentCard | null {
  const extended = agent.profile.extendedCard;
  if (!extended) {
    return null;
  }
  const card = buildAgentCard(agent, origin);
  return {
    ...card,
    description: extended.description ?? card.description,
    skills: [...card.skills, ...(extended.skills ?? [])],
  };
}

/** The platform's extensions followed by the agent's own. */
export function declaredExtensions(agent: HostedAgent): AgentExtension[] {
  return [RESUMABLE_STREAMS_EXTENSION, ...agentExtensions(agent)];
}

/**
 * The extensions the agent itself declares: A2UI's when its definition enables it (docs/a2ui.md), except
 * for URIs its `extensions` declare themselves, then those.
 */
export function agentExtensions(agent: HostedAgent): AgentExtension[] {
  const own = agent.profile.extensions ?? [];
  const a2ui = agent.profile.a2ui
    ? a2uiAgentExtensions().filter((e) => !own.some((o) => o.uri === e.uri))
    : [];
  return [...a2ui, ...own];
}

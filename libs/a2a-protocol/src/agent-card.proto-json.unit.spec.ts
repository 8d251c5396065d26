import { describe, expect, it } from 'vitest';
import { agentCardProtoJson } from './agent-card.proto-json';
import type { AgentCard } from './model';

const card = (extra: Partial<AgentCard> = {}): AgentCard => ({
  name: 'Echo',
  description: 'Echoes.',
  supportedInterfaces: [
    { url: 'https://a.example/jsonrpc', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
  ],
  version: '1.0.0',
  capabilities: { streaming: true },
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [{ id: 'echo', name: 'Echo', description: 'Echoes.', tags: ['demo'] }],
  ...extra,
});

describe('agentCardProtoJson (ProtoJSON presence for signing, spec digest §3, §10.12 step 1)', () => {
  it('keeps REQUIRED fields even when empty or default: description "", skills [], tags []', () => {
    const encoded = agentCardProtoJson(
      card({
        description: '',
        skills: [],
        defaultOutputModes: [],
        supportedInterfaces: [{ url: '', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
      }),
    );
    expect(encoded.description).toBe('');
    expect(encoded.skills).toStrictEqual([]);
    expect(encoded.defaultOutputModes).toStrictEqual([]);
    expect(encoded.supportedInterfaces).toStrictEqual([
      { url: '', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
    ]);
    const withEmptyTags = agentCardProtoJson(
      card({ skills: [{ id: 's', name: 'S', description: 'd', tags: [] }] }),
    );
    expect(withEmptyTags.skills).toStrictEqual([
      { id: 's', name: 'S', description: 'd', tags: [] },
    ]);
  });

  it('fills in a REQUIRED field that is missing with its default', () => {
    const { capabilities: _capabilities, ...rest } = card();
    const encoded = agentCardProtoJson(rest as AgentCard);
    expect(encoded.capabilities).toStrictEqual({});
  });

  it('drops empty non-required repeated and map fields and default implicit scalars', () => {
    const encoded = agentCardProtoJson(
      card({
        supportedInterfaces: [
          { url: 'u', protocolBinding: 'GRPC', tenant: '', protocolVersion: '1.0' },
        ],
        capabilities: { streaming: true, extensions: [] },
        securitySchemes: {},
        securityRequirements: [],
        skills: [
          {
            id: 's',
            name: 'S',
            description: 'd',
            tags: ['t'],
            examples: [],
            inputModes: [],
            outputModes: [],
            securityRequirements: [],
          },
        ],
      }),
    );
    expect(encoded.supportedInterfaces[0]).toStrictEqual({
      url: 'u',
      protocolBinding: 'GRPC',
      protocolVersion: '1.0',
    });
    expect(encoded.capabilities).toStrictEqual({ streaming: true });
    expect(encoded).not.toHaveProperty('securitySchemes');
    expect(encoded).not.toHaveProperty('securityRequirements');
    expect(encoded.skills).toStrictEqual([{ id: 's', name: 'S', description: 'd', tags: ['t'] }]);
  });

  it('keeps proto3 optional fields that are set, even to their default, and omits unset ones', () => {
    const encoded = agentCardProtoJson(
      card({
        capabilities: { streaming: false, pushNotifications: false, extendedAgentCard: false },
        documentationUrl: '',
      }),
    );
    expect(encoded.capabilities).toStrictEqual({
      streaming: false,
      pushNotifications: false,
      extendedAgentCard: false,
    });
    expect(encoded.documentationUrl).toBe('');
    expect(encoded).not.toHaveProperty('iconUrl');
  });

  it('drops default members of extensions but keeps a set params Struct as is', () => {
    const encoded = agentCardProtoJson(
      card({
        capabilities: {
          extensions: [
            { uri: 'urn:x', description: '', required: false, params: {} },
            { uri: 'urn:y', required: true, params: { depth: 0, list: [] } },
          ],
        },
      }),
    );
    expect(encoded.capabilities.extensions).toStrictEqual([
      { uri: 'urn:x', params: {} },
      { uri: 'urn:y', required: true, params: { depth: 0, list: [] } },
    ]);
  });

  it('encodes security: a scope-less requirement keeps its map entry as {} (spec digest §14), oneof members are kept', () => {
    const encoded = agentCardProtoJson(
      card({
        securitySchemes: {
          key: { apiKeySecurityScheme: { description: '', location: 'header', name: 'X-API-Key' } },
          oauth: {
            oauth2SecurityScheme: {
              flows: {
                clientCredentials: { tokenUrl: 'https://t', refreshUrl: '', scopes: {} },
              },
            },
          },
        },
        securityRequirements: [{ schemes: { key: { list: [] } } }, { schemes: {} }],
      }),
    );
    expect(encoded.securitySchemes).toStrictEqual({
      key: { apiKeySecurityScheme: { location: 'header', name: 'X-API-Key' } },
      oauth: {
        oauth2SecurityScheme: {
          flows: { clientCredentials: { tokenUrl: 'https://t', scopes: {} } },
        },
      },
    });
    expect(encoded.securityRequirements).toStrictEqual([{ schemes: { key: {} } }, {}]);
  });

  it('drops members the AgentCard message does not define and removes nothing else', () => {
    const input = { ...card(), kind: 'agent-card', url: 'https://legacy' } as AgentCard;
    const encoded = agentCardProtoJson(input);
    expect(encoded).not.toHaveProperty('kind');
    expect(encoded).not.toHaveProperty('url');
    expect(encoded).toStrictEqual(card());
  });

  it('keeps signatures (REQUIRED protected and signature) so a served card round-trips', () => {
    const signatures = [{ protected: 'p', signature: 's', header: { note: 'x' } }];
    expect(agentCardProtoJson(card({ signatures })).signatures).toStrictEqual(signatures);
  });
});

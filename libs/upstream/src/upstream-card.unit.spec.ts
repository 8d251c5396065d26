import { describe, expect, it } from 'vitest';
import {
  importCard,
  UpstreamCardError,
  withExtendedCard,
  withKeptExtendedCard,
} from './upstream-card';

const card = (over: Record<string, unknown> = {}) => ({
  name: 'Weather',
  description: 'Forecasts',
  version: '2.1.0',
  supportedInterfaces: [
    { url: 'https://w.example/a2a/jsonrpc', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
    { url: 'https://w.example/a2a/rest', protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
    { url: 'w.example:443', protocolBinding: 'GRPC', protocolVersion: '1.0', tenant: 't1' },
  ],
  capabilities: {
    streaming: true,
    extensions: [{ uri: 'https://ext.example/v1', required: false }],
  },
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['application/json'],
  skills: [{ id: 'forecast', name: 'Forecast', description: '', tags: ['weather'] }],
  securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: 'Bearer' } } },
  ...over,
});

describe('importCard', () => {
  it("keeps the upstream's own fields and gives the platform's capabilities", () => {
    const imported = importCard(card());
    expect(imported.definition).toMatchObject({
      name: 'Weather',
      description: 'Forecasts',
      version: '2.1.0',
      defaultOutputModes: ['application/json'],
      skills: [{ id: 'forecast', name: 'Forecast', description: 'Forecast', tags: ['weather'] }],
      extensions: [{ uri: 'https://ext.example/v1', required: false }],
      pushNotifications: true,
      messageReplies: true,
    });
    expect(imported).toMatchObject({
      binding: 'JSONRPC',
      endpoint: 'https://w.example/a2a/jsonrpc',
      streaming: true,
      signed: false,
    });
  });

  it('takes the binding asked for, with its tenant', () => {
    expect(importCard(card(), 'GRPC')).toMatchObject({
      binding: 'GRPC',
      endpoint: 'w.example:443',
      tenant: 't1',
    });
  });

  it('refuses a binding the card does not offer, or none the bridge speaks', () => {
    const restOnly = card({
      supportedInterfaces: [{ url: 'https://w.example/rest', protocolBinding: 'HTTP+JSON' }],
    });
    expect(() => importCard(restOnly, 'GRPC')).toThrow(
      /no GRPC interface \(it offers HTTP\+JSON\)/,
    );
    const custom = card({
      supportedInterfaces: [{ url: 'https://w.example/x', protocolBinding: 'urn:custom' }],
    });
    expect(() => importCard(custom)).toThrow(UpstreamCardError);
  });

  it('refuses an HTTP interface whose url is not an http(s) URL', () => {
    const odd = card({
      supportedInterfaces: [{ url: 'ftp://w.example/rpc', protocolBinding: 'JSONRPC' }],
    });
    expect(() => importCard(odd)).toThrow(/not an http\(s\) URL/);
  });

  it('refuses an interface of another protocol version', () => {
    const old = card({
      supportedInterfaces: [
        { url: 'https://w.example/rpc', protocolBinding: 'JSONRPC', protocolVersion: '0.3.0' },
      ],
    });
    expect(() => importCard(old)).toThrow(/speaks A2A 0\.3\.0/);
  });

  it('names what is missing or wrong in a card', () => {
    expect(() => importCard({ hello: 'world' })).toThrow(/not an A2A agent card: name/);
    expect(() => importCard('text')).toThrow(/not an A2A agent card/);
    const badMode = card({ defaultInputModes: ['not a media type'] });
    try {
      importCard(badMode);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(UpstreamCardError);
      expect((error as UpstreamCardError).field).toBe('defaultInputModes.0');
    }
  });

  it('fills a missing description, version and modes, and notes a signature', () => {
    const bare = importCard({
      name: 'Bare',
      supportedInterfaces: [{ url: 'http://127.0.0.1:1/rpc', protocolBinding: 'JSONRPC' }],
      signatures: [{ protected: 'e30', signature: 'x' }],
    });
    expect(bare.definition).toMatchObject({
      description: 'Bare (imported A2A agent)',
      version: '1.0.0',
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain'],
    });
    expect(bare.streaming).toBe(false);
    expect(bare.signed).toBe(true);
  });
});

describe('withExtendedCard', () => {
  const extendedCard = (over: Record<string, unknown> = {}) =>
    card({
      description: 'Forecasts, and more for our customers',
      skills: [
        {
          id: 'forecast',
          name: 'Forecast',
          description: 'Changed, still public',
          tags: ['weather'],
        },
        { id: 'alerts', name: 'Alerts', tags: ['weather', 'vip'], examples: ['any storm?'] },
      ],
      ...over,
    });

  it('adds the skills only the extended card lists, and its description, and declares the capability', () => {
    const { definition } = importCard(card({ capabilities: { extendedAgentCard: true } }));
    const extended = withExtendedCard(definition, extendedCard());
    expect(extended.extendedAgentCard).toBe(true);
    expect(extended.extendedCard).toEqual({
      description: 'Forecasts, and more for our customers',
      skills: [
        {
          id: 'alerts',
          name: 'Alerts',
          description: 'Alerts',
          tags: ['weather', 'vip'],
          examples: ['any storm?'],
        },
      ],
    });
    // The public part stays as the public card says.
    expect(extended.skills?.map((s) => s.id)).toEqual(['forecast']);
    expect(extended.description).toBe('Forecasts');
  });

  it('leaves out a description the public card has already', () => {
    const { definition } = importCard(card());
    const extended = withExtendedCard(definition, extendedCard({ description: 'Forecasts' }));
    expect(extended.extendedCard).toEqual({ skills: [expect.objectContaining({ id: 'alerts' })] });
  });

  it('names the field of an extended card that cannot be hosted', () => {
    const { definition } = importCard(card());
    const notACard = () => withExtendedCard(definition, { skills: [{ name: 'no id' }] });
    expect(notACard).toThrow(UpstreamCardError);
    expect(notACard).toThrow(expect.objectContaining({ field: 'extendedCard.skills.0.id' }));
    const badMode = () =>
      withExtendedCard(
        definition,
        extendedCard({ skills: [{ id: 'x', name: 'X', tags: [], inputModes: ['not a type'] }] }),
      );
    expect(badMode).toThrow(
      expect.objectContaining({ field: 'extendedCard.skills.0.inputModes.0' }),
    );
  });
});

describe('withKeptExtendedCard', () => {
  it('keeps the extended part read before, without the skills that became public', () => {
    const { definition: before } = importCard(card());
    const previous = withExtendedCard(before, {
      description: 'More',
      skills: [
        { id: 'alerts', name: 'Alerts', tags: [] },
        { id: 'radar', name: 'Radar', tags: [] },
      ],
    });
    const { definition: now } = importCard(
      card({ skills: [{ id: 'radar', name: 'Radar', tags: [] }] }),
    );
    const kept = withKeptExtendedCard(now, previous);
    expect(kept.extendedAgentCard).toBe(true);
    expect(kept.extendedCard?.description).toBe('More');
    expect(kept.extendedCard?.skills?.map((s) => s.id)).toEqual(['alerts']);
  });

  it('changes nothing when there was no extended card before', () => {
    const { definition } = importCard(card());
    expect(withKeptExtendedCard(definition, undefined)).toBe(definition);
    expect(withKeptExtendedCard(definition, definition)).toBe(definition);
  });
});

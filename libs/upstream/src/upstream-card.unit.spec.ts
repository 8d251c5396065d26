import { describe, expect, it } from 'vitest';
import { importCard, UpstreamCardError } from './upstream-card';

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

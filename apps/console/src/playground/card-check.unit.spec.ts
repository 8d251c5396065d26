import { describe, expect, it } from 'vitest';
import { checkCard, jsonRpcInterface } from './card-check';

const header = (value: object): string =>
  btoa(JSON.stringify(value)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');

const card = {
  name: 'Echo',
  description: 'Echoes.',
  version: '1.0.0',
  supportedInterfaces: [
    {
      url: 'https://x.test/agents/demo/echo/jsonrpc',
      protocolBinding: 'JSONRPC',
      protocolVersion: '1.0',
    },
    { url: 'x.test:50051', protocolBinding: 'GRPC', protocolVersion: '1.0', tenant: 'demo/echo' },
  ],
  capabilities: { streaming: true },
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [{ id: 'echo', name: 'Echo', description: 'Echoes.', tags: [] }],
  signatures: [{ protected: header({ alg: 'ES256', kid: 'k1', typ: 'JOSE' }), signature: 'c2ln' }],
};

describe('the agent card check (spec digest §4.5, §10.12)', () => {
  it('passes a complete, signed card with a JSON-RPC 1.0 interface', () => {
    expect(checkCard(card).map((c) => [c.name, c.ok])).toEqual([
      ['Required fields', true],
      ['Supported interfaces', true],
      ['Signature present', true],
    ]);
    expect(checkCard(card)[2]?.detail).toBe('ES256 key k1');
    expect(jsonRpcInterface(card)?.url).toBe('https://x.test/agents/demo/echo/jsonrpc');
  });

  it('names what is missing: a field, a skill field, a JSON-RPC interface, a usable signature', () => {
    const { version: _version, ...noVersion } = card;
    expect(checkCard(noVersion)[0]).toMatchObject({ ok: false, detail: 'missing: version' });
    expect(checkCard({ ...card, skills: [{ id: 'x' }] })[0]).toMatchObject({ ok: false });
    const grpcOnly = { ...card, supportedInterfaces: card.supportedInterfaces.slice(1) };
    expect(checkCard(grpcOnly)[1]).toMatchObject({
      ok: false,
      detail: 'no JSON-RPC 1.0 interface',
    });
    const patchVersion = [{ ...card.supportedInterfaces[0], protocolVersion: '1.0.1' }];
    expect(checkCard({ ...card, supportedInterfaces: patchVersion })[1]?.ok).toBe(false);
    expect(checkCard({ ...card, signatures: [] })[2]).toMatchObject({
      ok: false,
      detail: 'the card is not signed',
    });
    const noKid = [{ protected: header({ alg: 'ES256' }), signature: 'c2ln' }];
    expect(checkCard({ ...card, signatures: noKid })[2]?.ok).toBe(false);
  });
});

import { canonicalize, type AgentCard } from '@lib/a2a-protocol';
import { signingKey, type SigningKey } from '@lib/signing';
import { decodeProtectedHeader, flattenedVerify, importJWK } from 'jose';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signAgentCard, unsignedCard } from './agent-card.signing';

const JWKS_URL = 'https://agents.example.com/.well-known/jwks.json';

const card: AgentCard = {
  name: 'Echo',
  description: 'Echoes.',
  supportedInterfaces: [
    {
      url: 'https://a.example/jsonrpc',
      protocolBinding: 'JSONRPC',
      tenant: '',
      protocolVersion: '1.0',
    },
  ],
  version: '1.0.0',
  capabilities: { streaming: true, extensions: [] },
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [{ id: 'echo', name: 'Echo', description: 'Echoes €.', tags: ['demo'], examples: [] }],
};

const ecKey = (): KeyObject => generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
const rsaKey = (): KeyObject => generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;

/** What a client does (spec digest §10.12 step 6): JCS of the card without signatures, then JWS verify. */
async function verify(signed: AgentCard, key: SigningKey): Promise<void> {
  const { signatures, ...rest } = signed;
  const [signature] = signatures ?? [];
  // The detached payload, re-attached in its flattened-JWS form: base64url of the JCS bytes.
  const payload = Buffer.from(canonicalize(rest), 'utf8').toString('base64url');
  const publicKey = await importJWK({ ...key.jwk }, key.jwk.alg);
  await flattenedVerify(
    { protected: signature!.protected, signature: signature!.signature, payload },
    publicKey,
  );
}

describe('agent card signing (spec digest §10.12, RFC 7515)', () => {
  it.each([
    ['ES256', ecKey],
    ['RS256', rsaKey],
  ] as const)(
    'a %s signature verifies with jose over the JCS bytes of the card without signatures',
    async (alg, generate) => {
      const key = signingKey(generate());
      expect(key.algorithm).toBe(alg);
      const signed = signAgentCard(unsignedCard(card), key, JWKS_URL);
      expect(signed.signatures).toHaveLength(1);
      expect(decodeProtectedHeader(signed.signatures![0]!)).toStrictEqual({
        alg,
        kid: key.kid,
        typ: 'JOSE',
        jku: JWKS_URL,
      });
      await verify(signed, key);
    },
  );

  it('signs the ProtoJSON with presence honoured: empty non-required fields are gone from the signed card', () => {
    const signed = signAgentCard(unsignedCard(card), signingKey(ecKey()), JWKS_URL);
    expect(signed.supportedInterfaces[0]).not.toHaveProperty('tenant');
    expect(signed.capabilities).toStrictEqual({ streaming: true });
    expect(signed.skills[0]).not.toHaveProperty('examples');
    expect(unsignedCard(card).payload.toString('utf8')).toBe(
      canonicalize({ ...signed, signatures: undefined }),
    );
  });

  it('ES256 signatures are 64 bytes of IEEE P1363 r||s, not DER', () => {
    const signed = signAgentCard(unsignedCard(card), signingKey(ecKey()), JWKS_URL);
    expect(Buffer.from(signed.signatures![0]!.signature, 'base64url')).toHaveLength(64);
  });

  it('a card changed after signing no longer verifies', async () => {
    const key = signingKey(ecKey());
    const signed = signAgentCard(unsignedCard(card), key, JWKS_URL);
    const tampered: AgentCard = {
      ...signed,
      supportedInterfaces: [
        { url: 'https://evil.example/jsonrpc', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      ],
    };
    await expect(verify(tampered, key)).rejects.toThrow(/signature verification failed/);
    const otherKey = signingKey(ecKey());
    await expect(verify(signed, otherKey)).rejects.toThrow(/signature verification failed/);
  });
});

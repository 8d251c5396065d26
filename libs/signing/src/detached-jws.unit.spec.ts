import {
  compactVerify,
  createLocalJWKSet,
  decodeProtectedHeader,
  flattenedVerify,
  type JSONWebKeySet,
} from 'jose';
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { detachedJws, signDetached } from './detached-jws';
import { signingKey, type SigningKey } from './signing-key';

const ecKey = (): SigningKey =>
  signingKey(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey);
const rsaKey = (): SigningKey =>
  signingKey(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey);

const body = Buffer.from(
  '{"statusUpdate":{"taskId":"t-1","status":{"state":"TASK_STATE_WORKING"}}}',
);

/** What a receiver does: re-attach base64url(body) and verify against the published JWK Set by kid. */
async function verifyAsReceiver(
  signature: string,
  received: Buffer,
  jwks: JSONWebKeySet,
): Promise<Uint8Array> {
  const [protectedHeader, detached, sig] = signature.split('.');
  expect(detached).toBe('');
  const attached = `${protectedHeader}.${received.toString('base64url')}.${sig}`;
  const { payload } = await compactVerify(attached, createLocalJWKSet(jwks));
  return payload;
}

describe('detached JWS (RFC 7515 Appendix F)', () => {
  it.each([
    ['ES256', ecKey],
    ['RS256', rsaKey],
  ] as const)(
    'a %s signature is <protected>..<signature> and verifies with jose against the JWK Set',
    async (alg, key) => {
      const signer = key();
      const signature = signDetached(body, signer);
      expect(signature).toMatch(/^[\w-]+\.\.[\w-]+$/);
      expect(decodeProtectedHeader(signature)).toStrictEqual({
        alg,
        kid: signer.kid,
        typ: 'JOSE',
      });
      const jwks = { keys: [{ ...ecKey().jwk }, { ...signer.jwk }] };
      expect(Buffer.from(await verifyAsReceiver(signature, body, jwks))).toStrictEqual(body);
    },
  );

  it('a tampered body, or another key, fails verification', async () => {
    const signer = ecKey();
    const signature = signDetached(body, signer);
    const jwks = { keys: [{ ...signer.jwk }] };
    const tampered = Buffer.from(body.toString().replace('WORKING', 'COMPLETED'));
    await expect(verifyAsReceiver(signature, tampered, jwks)).rejects.toThrow(
      /signature verification failed/,
    );
    const other = ecKey();
    const impostor = { keys: [{ ...other.jwk, kid: signer.kid }] };
    await expect(verifyAsReceiver(signature, body, impostor)).rejects.toThrow(
      /signature verification failed/,
    );
  });

  it('flattened form: ES256 signatures are 64 bytes of IEEE P1363 r||s, not DER', async () => {
    const signer = ecKey();
    const jws = detachedJws(body, signer, {
      jku: 'https://platform.example/.well-known/jwks.json',
    });
    expect(Buffer.from(jws.signature, 'base64url')).toHaveLength(64);
    expect(decodeProtectedHeader(jws)).toMatchObject({
      jku: 'https://platform.example/.well-known/jwks.json',
    });
    const { payload } = await flattenedVerify(
      { ...jws, payload: body.toString('base64url') },
      createLocalJWKSet({ keys: [{ ...signer.jwk }] }),
    );
    expect(Buffer.from(payload)).toStrictEqual(body);
  });

  it('signs the bytes as given: an empty body too', async () => {
    const signer = ecKey();
    const empty = Buffer.alloc(0);
    const payload = await verifyAsReceiver(signDetached(empty, signer), empty, {
      keys: [{ ...signer.jwk }],
    });
    expect(payload).toHaveLength(0);
  });
});

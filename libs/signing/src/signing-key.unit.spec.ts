import { calculateJwkThumbprint } from 'jose';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadSigningKey, signingKey } from './signing-key';

const ecKey = (): KeyObject => generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
const rsaKey = (): KeyObject => generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;

describe('signingKey (RFC 7518 §3, RFC 7638)', () => {
  it('derives ES256 from an EC P-256 key and RS256 from an RSA key', () => {
    expect(signingKey(ecKey()).algorithm).toBe('ES256');
    expect(signingKey(rsaKey()).algorithm).toBe('RS256');
  });

  it('kid is the RFC 7638 thumbprint of the public key and the JWK has no private member', async () => {
    for (const key of [signingKey(ecKey()), signingKey(rsaKey())]) {
      expect(key.kid).toBe(await calculateJwkThumbprint({ ...key.jwk }, 'sha256'));
      expect(key.jwk).toMatchObject({ kid: key.kid, alg: key.algorithm, use: 'sig' });
      expect(key.jwk).not.toHaveProperty('d');
    }
  });

  it('refuses keys that cannot make ES256 or RS256 signatures', () => {
    const refused = [
      generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey,
      generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey,
      generateKeyPairSync('ed25519').privateKey,
    ];
    for (const key of refused) {
      expect(() => signingKey(key)).toThrow(/EC P-256 \(ES256\) or RSA >= 2048-bit/);
    }
    expect(() => signingKey(generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey)).toThrow(
      /must be a private key/,
    );
  });
});

describe('loadSigningKey', () => {
  const dir = mkdtempSync(join(tmpdir(), 'signing-key-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads a PKCS#8 PEM file: the same key, the same kid', () => {
    const privateKey = ecKey();
    const file = join(dir, 'key.pem');
    writeFileSync(file, privateKey.export({ format: 'pem', type: 'pkcs8' }));
    expect(loadSigningKey(file)?.kid).toBe(signingKey(privateKey).kid);
  });

  it('gives nothing when no file is configured: the caller decides', () => {
    expect(loadSigningKey(undefined)).toBeUndefined();
    expect(loadSigningKey('')).toBeUndefined();
  });

  it('fails naming the file when it is missing, not a key, or a key that cannot sign', () => {
    const missing = join(dir, 'missing.pem');
    expect(() => loadSigningKey(missing)).toThrow(`cannot load the signing key in ${missing}`);
    const garbage = join(dir, 'garbage.pem');
    writeFileSync(garbage, 'not a key');
    expect(() => loadSigningKey(garbage)).toThrow(`cannot load the signing key in ${garbage}`);
    const ed25519 = join(dir, 'ed25519.pem');
    writeFileSync(
      ed25519,
      generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }),
    );
    expect(() => loadSigningKey(ed25519)).toThrow(/ed25519\.pem: .*EC P-256 \(ES256\)/);
  });
});

import { canonicalize } from '@lib/a2a-protocol';
import { guardedFetch, isLoopbackAddress } from '@lib/push';
import { exportJWK, FlattenedSign, generateKeyPair } from 'jose';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchUpstreamCard } from './card-fetch';

/** A card server on 127.0.0.1: `/signed` (a signature its `/jwks` verifies), `/forged`, `/unsigned`. */
let server: Server;
let base: string;
const cards = new Map<string, unknown>();
let jwks: unknown;

const fetch = guardedFetch({
  allows: (_host, address) => isLoopbackAddress(address),
  bodyLimitBytes: 65_536,
  timeoutMs: 5_000,
});

beforeAll(async () => {
  server = createServer((req, res) => {
    const body = req.url === '/jwks' ? jwks : cards.get(req.url ?? '');
    res.writeHead(body === undefined ? 404 : 200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(body ?? {}));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  jwks = { keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' }] };
  const card = {
    name: 'Signed',
    description: 'A card with a signature',
    version: '1.0.0',
    supportedInterfaces: [
      { url: `${base}/rpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
    ],
  };
  const signature = await new FlattenedSign(new TextEncoder().encode(canonicalize(card)))
    .setProtectedHeader({ alg: 'ES256', kid: 'k1', typ: 'JOSE', jku: `${base}/jwks` })
    .sign(privateKey);
  const signed = { protected: signature.protected, signature: signature.signature };
  cards.set('/signed', { ...card, signatures: [signed] });
  cards.set('/forged', { ...card, name: 'Forged', signatures: [signed] });
  cards.set('/unsigned', card);
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('fetchUpstreamCard', () => {
  it('verifies a signature with the key its jku names, over the card without its signatures', async () => {
    expect((await fetchUpstreamCard(fetch, `${base}/signed`)).verified).toBe(true);
  });

  it('does not verify a card changed after it was signed, nor one without a signature', async () => {
    expect((await fetchUpstreamCard(fetch, `${base}/forged`)).verified).toBe(false);
    expect((await fetchUpstreamCard(fetch, `${base}/unsigned`)).verified).toBe(false);
  });

  it('says what is wrong with a card it cannot read', async () => {
    await expect(fetchUpstreamCard(fetch, `${base}/missing`)).rejects.toThrow('HTTP 404');
  });
});

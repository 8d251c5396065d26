/**
 * Agent cards end to end (spec digest §4.5, §10.11, §10.12, §13 "Agent card" and "Extended card") against the
 * built standalone platform: the interfaces a card declares, its JWS signature verified with `jose` against
 * the JWK Set fetched over HTTP, HTTP caching and revalidation (RFC 9110/9111), URLs behind a proxy
 * (PUBLIC_BASE_URL with a path prefix, PUBLIC_GRPC_ADDRESS) and GetExtendedAgentCard over JSON-RPC.
 */
import { canonicalize, type AgentCard } from '@lib/a2a-protocol';
import {
  createTestDatabase,
  startStandalone,
  type PlatformProcess,
  type TestDatabase,
} from '@lib/testing';
import { AGENT_PROFILES } from '@lib/worker-sdk';
import {
  calculateJwkThumbprint,
  createLocalJWKSet,
  exportJWK,
  flattenedVerify,
  type CompactJWSHeaderParameters,
  type JSONWebKeySet,
} from 'jose';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectRpcError, expectRpcResult, rawRpc, request } from './support/json-rpc';
import { A2A_DOMAIN, PLATFORM_DOMAIN } from './support/wire';

const RESUMABLE_STREAMS = 'https://a2a-platform.dev/extensions/resumable-streams/v1';
const cardPath = (agent: string): string => `/agents/demo/${agent}/.well-known/agent-card.json`;

interface Platform {
  db: TestDatabase;
  process: PlatformProcess;
  baseUrl: string;
  grpcTarget: string;
  close(): Promise<void>;
}

async function boot(prefix: string, env: Record<string, string> = {}): Promise<Platform> {
  const db = await createTestDatabase(prefix);
  try {
    const started = await startStandalone({ POSTGRES_URL: db.url, ...env });
    return {
      db,
      ...started,
      async close() {
        await started.process.stop();
        await db.drop();
      },
    };
  } catch (error) {
    await db.drop();
    throw error;
  }
}

interface HttpReply {
  status: number;
  headers: Record<string, string | undefined>;
  body: string;
}

/** A GET with an explicit Host header (fetch cannot set one) and any other request headers. */
function get(url: string, headers: Record<string, string> = {}): Promise<HttpReply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'GET', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const flat: Record<string, string | undefined> = {};
        for (const [name, value] of Object.entries(res.headers)) {
          flat[name] = Array.isArray(value) ? value.join(', ') : value;
        }
        resolve({
          status: res.statusCode ?? 0,
          headers: flat,
          body: Buffer.concat(chunks).toString('utf8'),
        });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

async function getCard(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ reply: HttpReply; card: AgentCard }> {
  const reply = await get(url, headers);
  expect(reply.status, `${url}: ${reply.body}`).toBe(200);
  expect(reply.headers['content-type']).toMatch(/^application\/json/);
  return { reply, card: JSON.parse(reply.body) as AgentCard };
}

async function fetchJwks(baseUrl: string): Promise<{ reply: HttpReply; jwks: JSONWebKeySet }> {
  const reply = await get(`${baseUrl}/.well-known/jwks.json`);
  expect(reply.status).toBe(200);
  return { reply, jwks: JSON.parse(reply.body) as JSONWebKeySet };
}

/**
 * What a client does (spec digest §10.12 step 6): the card without `signatures`, canonicalised with JCS, is
 * the detached payload of the one JWS in `signatures`; the key comes from the JWK Set by `kid`.
 */
async function verifyCard(
  card: AgentCard,
  jwks: JSONWebKeySet,
): Promise<CompactJWSHeaderParameters> {
  const { signatures, ...unsigned } = card;
  expect(signatures).toHaveLength(1);
  const [signature] = signatures!;
  const { protectedHeader } = await flattenedVerify(
    {
      protected: signature!.protected,
      signature: signature!.signature,
      payload: Buffer.from(canonicalize(unsigned), 'utf8').toString('base64url'),
    },
    createLocalJWKSet(jwks),
  );
  return protectedHeader as CompactJWSHeaderParameters;
}

function interfacesOf(card: AgentCard): Record<string, { url: string; tenant?: string }> {
  return Object.fromEntries(
    card.supportedInterfaces.map((i) => [
      i.protocolBinding,
      { url: i.url, ...(i.tenant === undefined ? {} : { tenant: i.tenant }) },
    ]),
  );
}

const sha256Tag = (body: string): string =>
  `"${createHash('sha256').update(body, 'utf8').digest('base64url')}"`;

describe('cards with URLs from the request (no PUBLIC_BASE_URL) and an ephemeral signing key', () => {
  let platform: Platform;
  let jwks: JSONWebKeySet;
  const url = (path: string): string => `${platform.baseUrl}${path}`;
  const grpcPort = (): string => platform.grpcTarget.split(':')[1]!;

  beforeAll(async () => {
    platform = await boot('e2e_cards');
    // An agent that declares an extended card but configured none, with a profile full of empty and
    // default values that ProtoJSON presence drops (or, for REQUIRED fields, keeps).
    await platform.db.pool.query(
      `INSERT INTO ops.agents (tenant_id, agent_id, profile) VALUES ('demo', 'cardless', $1)`,
      [
        JSON.stringify({
          name: 'Cardless',
          description: '',
          version: '0.1.0',
          skills: [{ id: 's', name: 'S', description: 'd', tags: ['t'], examples: [] }],
          extensions: [{ uri: 'urn:example:ext', description: '', required: false }],
          extendedAgentCard: true,
        }),
      ],
    );
    jwks = (await fetchJwks(platform.baseUrl)).jwks;
  });

  afterAll(async () => {
    await platform?.close();
  });

  it('§10.11/§4.5: the echo card declares JSONRPC, HTTP+JSON and GRPC (tenant demo/echo) at protocolVersion 1.0 with the request host', async () => {
    const { card } = await getCard(url(cardPath('echo')));
    expect(card.supportedInterfaces).toStrictEqual([
      {
        url: `${platform.baseUrl}/agents/demo/echo/jsonrpc`,
        protocolBinding: 'JSONRPC',
        protocolVersion: '1.0',
      },
      {
        url: `${platform.baseUrl}/agents/demo/echo/rest`,
        protocolBinding: 'HTTP+JSON',
        protocolVersion: '1.0',
      },
      {
        url: `127.0.0.1:${grpcPort()}`,
        protocolBinding: 'GRPC',
        tenant: 'demo/echo',
        protocolVersion: '1.0',
      },
    ]);
    expect(card).toMatchObject({
      name: AGENT_PROFILES.echo.name,
      description: AGENT_PROFILES.echo.description,
      version: AGENT_PROFILES.echo.version,
      capabilities: { streaming: true, pushNotifications: true, extendedAgentCard: true },
      skills: AGENT_PROFILES.echo.skills,
    });
  });

  it('§10.11: /.well-known/agent-card.json is the default agent demo/echo, byte for byte', async () => {
    const root = await getCard(url('/.well-known/agent-card.json'));
    const own = await getCard(url(cardPath('echo')));
    expect(root.reply.body).toBe(own.reply.body);
    expect(root.reply.headers['etag']).toBe(own.reply.headers['etag']);
  });

  it('§4.5: capabilities.extendedAgentCard is what each agent declares; every card lists the interfaces under its own tenant', async () => {
    const declared = { echo: true, interview: false, countdown: false, cardless: true };
    for (const [agent, extended] of Object.entries(declared)) {
      const { card } = await getCard(url(cardPath(agent)));
      expect(card.capabilities.extendedAgentCard, agent).toBe(extended);
      expect(card.supportedInterfaces.every((i) => i.protocolVersion === '1.0')).toBe(true);
      expect(interfacesOf(card), agent).toStrictEqual({
        JSONRPC: { url: `${platform.baseUrl}/agents/demo/${agent}/jsonrpc` },
        'HTTP+JSON': { url: `${platform.baseUrl}/agents/demo/${agent}/rest` },
        GRPC: { url: `127.0.0.1:${grpcPort()}`, tenant: `demo/${agent}` },
      });
    }
  });

  it('§10.12: every card carries one ES256 JWS {alg, kid, typ: JOSE, jku} that verifies against the JWK Set', async () => {
    const [key] = jwks.keys;
    for (const path of [
      '/.well-known/agent-card.json',
      cardPath('echo'),
      cardPath('interview'),
      cardPath('countdown'),
      cardPath('cardless'),
    ]) {
      const { card } = await getCard(url(path));
      const header = await verifyCard(card, jwks);
      expect(header, path).toStrictEqual({
        alg: 'ES256',
        kid: key!.kid,
        typ: 'JOSE',
        jku: `${platform.baseUrl}/.well-known/jwks.json`,
      });
    }
  });

  it('§10.12: a card changed after signing fails verification', async () => {
    const { card } = await getCard(url(cardPath('echo')));
    const moved: AgentCard = {
      ...card,
      supportedInterfaces: card.supportedInterfaces.map((i) => ({
        ...i,
        url: i.url.replace('127.0.0.1', 'attacker.example'),
      })),
    };
    await expect(verifyCard(moved, jwks)).rejects.toThrow(/signature verification failed/);
    const reworded: AgentCard = {
      ...card,
      skills: [{ ...card.skills[0]!, description: 'something else' }],
    };
    await expect(verifyCard(reworded, jwks)).rejects.toThrow(/signature verification failed/);
  });

  it('§10.12 step 1: the signed card is ProtoJSON with presence: empty non-required fields dropped, REQUIRED description "" kept', async () => {
    const { card } = await getCard(url(cardPath('cardless')));
    expect(card.description).toBe('');
    expect(card.skills).toStrictEqual([{ id: 's', name: 'S', description: 'd', tags: ['t'] }]);
    expect(card.capabilities.extensions).toContainEqual({ uri: 'urn:example:ext' });
    await verifyCard(card, jwks);
  });

  it('the JWK Set publishes the public key only, with kid = RFC 7638 thumbprint, alg and use "sig"', async () => {
    const { reply } = await fetchJwks(platform.baseUrl);
    expect(reply.headers['content-type']).toMatch(/^application\/jwk-set\+json/);
    expect(reply.headers['cache-control']).toBe('public, max-age=300');
    expect(jwks.keys).toHaveLength(1);
    const [key] = jwks.keys;
    expect(key).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
    expect(key).not.toHaveProperty('d');
    expect(key!.kid).toBe(await calculateJwkThumbprint(key!, 'sha256'));
    const again = await get(url('/.well-known/jwks.json'), {
      'If-None-Match': reply.headers['etag']!,
    });
    expect(again.status).toBe(304);
    expect(again.body).toBe('');
  });

  it('warns at start-up that the signing key is ephemeral', () => {
    expect(platform.process.log).toMatch(/AGENT_CARD_SIGNING_KEY_FILE is not set/);
  });

  it('§10.11 caching: Cache-Control public max-age, a strong ETag over the exact bytes, a stable Last-Modified, identical bytes on every request', async () => {
    const first = await getCard(url(cardPath('echo')));
    const second = await getCard(url(cardPath('echo')));
    const { headers } = first.reply;
    expect(headers['cache-control']).toBe('public, max-age=300');
    expect(headers['etag']).toBe(sha256Tag(first.reply.body));
    expect(headers['vary']).toBeUndefined();
    const lastModified = Date.parse(headers['last-modified']!);
    expect(lastModified).toBeLessThanOrEqual(Date.now());
    // ES256 signatures are randomised: the same bytes mean the card was signed once and kept.
    expect(second.reply.body).toBe(first.reply.body);
    expect(second.reply.headers['etag']).toBe(headers['etag']);
    expect(second.reply.headers['last-modified']).toBe(headers['last-modified']);
  });

  it('RFC 9110 §13.1.2: If-None-Match with the tag, a list holding its weak form, or * → 304 without a body; another tag → 200', async () => {
    const { reply } = await getCard(url(cardPath('echo')));
    const etag = reply.headers['etag']!;
    for (const value of [etag, `"stale", W/${etag}`, '*']) {
      const revalidated = await get(url(cardPath('echo')), { 'If-None-Match': value });
      expect(revalidated.status, value).toBe(304);
      expect(revalidated.body, value).toBe('');
      expect(revalidated.headers['etag'], value).toBe(etag);
      expect(revalidated.headers['cache-control'], value).toBe('public, max-age=300');
    }
    const changed = await get(url(cardPath('echo')), { 'If-None-Match': '"stale"' });
    expect(changed.status).toBe(200);
    expect(changed.body).toBe(reply.body);
  });

  it('RFC 9110 §13.1.3: If-Modified-Since → 304 unless the card changed since; ignored when If-None-Match is present', async () => {
    const { reply } = await getCard(url(cardPath('echo')));
    const lastModified = reply.headers['last-modified']!;
    const earlier = new Date(Date.parse(lastModified) - 60_000).toUTCString();
    expect((await get(url(cardPath('echo')), { 'If-Modified-Since': lastModified })).status).toBe(
      304,
    );
    expect((await get(url(cardPath('echo')), { 'If-Modified-Since': earlier })).status).toBe(200);
    const both = await get(url(cardPath('echo')), {
      'If-None-Match': '"stale"',
      'If-Modified-Since': lastModified,
    });
    expect(both.status).toBe(200);
  });

  it('without PUBLIC_BASE_URL the card names the Host the client used, for every interface and the jku', async () => {
    const host = 'cards.internal.test:9999';
    const viaHost = await getCard(url(cardPath('echo')), { Host: host });
    expect(interfacesOf(viaHost.card)).toStrictEqual({
      JSONRPC: { url: `http://${host}/agents/demo/echo/jsonrpc` },
      'HTTP+JSON': { url: `http://${host}/agents/demo/echo/rest` },
      GRPC: { url: `cards.internal.test:${grpcPort()}`, tenant: 'demo/echo' },
    });
    const header = await verifyCard(viaHost.card, jwks);
    expect(header.jku).toBe(`http://${host}/.well-known/jwks.json`);
    const direct = await getCard(url(cardPath('echo')));
    expect(viaHost.reply.headers['etag']).not.toBe(direct.reply.headers['etag']);
    const again = await getCard(url(cardPath('echo')), { Host: host });
    expect(again.reply.body).toBe(viaHost.reply.body);
  });

  it('an unknown agent has no card', async () => {
    expect((await get(url(cardPath('no-such-agent')))).status).toBe(404);
  });

  describe('GetExtendedAgentCard over JSON-RPC (§10.11, §13 "Extended card")', () => {
    const rpc = (agent: string): string => url(`/agents/demo/${agent}/jsonrpc`);

    it('an authenticated caller gets the signed extended card: the public card plus the skill only it sees', async () => {
      const reply = await rawRpc(rpc('echo'), request('GetExtendedAgentCard', {}, 'ext-1'));
      const extended = expectRpcResult<AgentCard>(reply, 'ext-1');
      const { card: publicCard } = await getCard(url(cardPath('echo')));
      const onlyExtended = AGENT_PROFILES.echo.extendedCard!.skills!;
      expect(extended.skills).toStrictEqual([...publicCard.skills, ...onlyExtended]);
      expect(publicCard.skills.map((s) => s.id)).not.toContain(onlyExtended[0]!.id);
      expect(extended.supportedInterfaces).toStrictEqual(publicCard.supportedInterfaces);
      expect(extended.capabilities).toStrictEqual(publicCard.capabilities);
      expect(extended.capabilities.extensions?.map((e) => e.uri)).toContain(RESUMABLE_STREAMS);
      const header = await verifyCard(extended, jwks);
      expect(header).toMatchObject({ alg: 'ES256', kid: jwks.keys[0]!.kid, typ: 'JOSE' });
      const tampered = { ...extended, skills: publicCard.skills };
      await expect(verifyCard(tampered, jwks)).rejects.toThrow(/signature verification failed/);
    });

    it('the extended card is the same bytes on every call (signed once)', async () => {
      const first = await rawRpc(rpc('echo'), request('GetExtendedAgentCard', undefined, 1));
      const second = await rawRpc(rpc('echo'), request('GetExtendedAgentCard', undefined, 1));
      expect(second.text).toBe(first.text);
    });

    it('without an API key → HTTP 401 UNAUTHENTICATED', async () => {
      const reply = await rawRpc(rpc('echo'), request('GetExtendedAgentCard', {}, 'ext-2'), {
        apiKey: null,
      });
      expectRpcError(reply, {
        http: 401,
        code: -32000,
        reason: 'UNAUTHENTICATED',
        domain: PLATFORM_DOMAIN,
        id: 'ext-2',
      });
    });

    it('an agent without the capability (countdown) → -32004 UNSUPPORTED_OPERATION', async () => {
      const reply = await rawRpc(rpc('countdown'), request('GetExtendedAgentCard', {}, 'ext-3'));
      expectRpcError(reply, {
        code: -32004,
        reason: 'UNSUPPORTED_OPERATION',
        domain: A2A_DOMAIN,
        id: 'ext-3',
      });
    });

    it('an agent that declares the capability but configured no extended card → -32007', async () => {
      const reply = await rawRpc(rpc('cardless'), request('GetExtendedAgentCard', {}, 'ext-4'));
      expectRpcError(reply, {
        code: -32007,
        reason: 'EXTENDED_AGENT_CARD_NOT_CONFIGURED',
        domain: A2A_DOMAIN,
        id: 'ext-4',
      });
    });
  });
});

describe('cards behind a proxy: PUBLIC_BASE_URL with a path prefix, PUBLIC_GRPC_ADDRESS and a configured RSA key', () => {
  const PUBLIC_BASE_URL = 'https://agents.example.com/a2a-prefix';
  const PUBLIC_GRPC_ADDRESS = 'grpc.example.com:443';
  let platform: Platform;
  let keyDir: string;
  let expectedKid: string;
  const url = (path: string): string => `${platform.baseUrl}${path}`;

  beforeAll(async () => {
    keyDir = mkdtempSync(join(tmpdir(), 'a2a-card-key-'));
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const keyFile = join(keyDir, 'card-signing.pem');
    writeFileSync(keyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    expectedKid = await calculateJwkThumbprint(await exportJWK(publicKey), 'sha256');
    platform = await boot('e2e_cards_proxy', {
      PUBLIC_BASE_URL: `${PUBLIC_BASE_URL}/`,
      PUBLIC_GRPC_ADDRESS,
      AGENT_CARD_SIGNING_KEY_FILE: keyFile,
      AGENT_CARD_MAX_AGE_S: '60',
    });
  });

  afterAll(async () => {
    await platform?.close();
    rmSync(keyDir, { recursive: true, force: true });
  });

  it('every interface URL uses the public base URL (prefix kept) and the public gRPC address, whatever the Host', async () => {
    const direct = await getCard(url(cardPath('echo')));
    const viaOtherHost = await getCard(url(cardPath('echo')), { Host: 'internal.local:8080' });
    expect(direct.card.supportedInterfaces).toStrictEqual([
      {
        url: `${PUBLIC_BASE_URL}/agents/demo/echo/jsonrpc`,
        protocolBinding: 'JSONRPC',
        protocolVersion: '1.0',
      },
      {
        url: `${PUBLIC_BASE_URL}/agents/demo/echo/rest`,
        protocolBinding: 'HTTP+JSON',
        protocolVersion: '1.0',
      },
      {
        url: PUBLIC_GRPC_ADDRESS,
        protocolBinding: 'GRPC',
        tenant: 'demo/echo',
        protocolVersion: '1.0',
      },
    ]);
    expect(direct.card.provider?.url).toBe(PUBLIC_BASE_URL);
    expect(viaOtherHost.reply.body).toBe(direct.reply.body);
    expect(viaOtherHost.reply.headers['etag']).toBe(direct.reply.headers['etag']);
    expect(direct.reply.headers['cache-control']).toBe('public, max-age=60');
  });

  it('§10.12: cards are RS256-signed with the configured key; kid is its thumbprint and jku the public JWK Set URL', async () => {
    const { reply, jwks } = await fetchJwks(platform.baseUrl);
    expect(reply.headers['cache-control']).toBe('public, max-age=60');
    expect(jwks.keys).toStrictEqual([
      expect.objectContaining({ kty: 'RSA', alg: 'RS256', use: 'sig', kid: expectedKid }),
    ]);
    for (const path of ['/.well-known/agent-card.json', cardPath('echo'), cardPath('countdown')]) {
      const { card } = await getCard(url(path));
      expect(await verifyCard(card, jwks), path).toStrictEqual({
        alg: 'RS256',
        kid: expectedKid,
        typ: 'JOSE',
        jku: `${PUBLIC_BASE_URL}/.well-known/jwks.json`,
      });
    }
    expect(platform.process.log).not.toMatch(/AGENT_CARD_SIGNING_KEY_FILE is not set/);
  });

  it('the extended card carries the public URLs too and verifies', async () => {
    const reply = await rawRpc(
      url('/agents/demo/echo/jsonrpc'),
      request('GetExtendedAgentCard', {}, 'proxy-ext'),
    );
    const extended = expectRpcResult<AgentCard>(reply, 'proxy-ext');
    expect(interfacesOf(extended)).toStrictEqual({
      JSONRPC: { url: `${PUBLIC_BASE_URL}/agents/demo/echo/jsonrpc` },
      'HTTP+JSON': { url: `${PUBLIC_BASE_URL}/agents/demo/echo/rest` },
      GRPC: { url: PUBLIC_GRPC_ADDRESS, tenant: 'demo/echo' },
    });
    const { jwks } = await fetchJwks(platform.baseUrl);
    expect((await verifyCard(extended, jwks)).alg).toBe('RS256');
  });
});

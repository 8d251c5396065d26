import { signingKey } from '@lib/signing';
import { compactVerify, createLocalJWKSet } from 'jose';
import { generateKeyPairSync } from 'node:crypto';
import http, {
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Resolver } from './destination-guard';
import { PushAllowlist } from './push-allowlist';
import {
  A2A_CONTENT_TYPE,
  SIGNATURE_HEADER,
  WebhookSender,
  type WebhookSenderOptions,
} from './webhook-sender';

/** Real receivers on loopback, ephemeral ports; the only addresses these tests may ever dial. */
interface Receiver {
  readonly host: string;
  readonly port: number;
  /** TCP connections accepted. */
  accepts: number;
  readonly requests: { headers: IncomingHttpHeaders; body: Buffer }[];
  close(): Promise<void>;
}

type Handler = (req: IncomingMessage, res: ServerResponse, body: Buffer) => void;

async function receiver(host: string, handler: Handler, port = 0): Promise<Receiver> {
  const server = http.createServer();
  const self: Receiver = {
    host,
    port: 0,
    accepts: 0,
    requests: [],
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  server.on('connection', () => self.accepts++);
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      self.requests.push({ headers: req.headers, body });
      handler(req, res, body);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return Object.assign(self, { port: (server.address() as AddressInfo).port });
}

const answer =
  (status: number, headers: Record<string, string> = {}): Handler =>
  (_req, res) => {
    res.writeHead(status, headers).end('{}');
  };

const key = signingKey(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey);
const body = Buffer.from(
  '{"statusUpdate":{"taskId":"t-1","status":{"state":"TASK_STATE_WORKING"}}}',
);

/** Every address handed to a socket. Anything but loopback trips the wire and is never connected. */
const dials: { address: string; port: number }[] = [];
const isLoopback = (address: string): boolean =>
  address.startsWith('127.') || address === '::1' || address.startsWith('::ffff:127.');

function sender(overrides: Partial<WebhookSenderOptions> = {}): WebhookSender {
  return new WebhookSender({
    signingKey: key,
    // acme's operator admits the loopback receivers; mallory has no entry.
    allowlist: new PushAllowlist({ acme: ['127.0.0.1/32', 'localhost'] }),
    connectTimeoutMs: 1_000,
    responseTimeoutMs: 300,
    bodyTimeoutMs: 300,
    responseBodyLimitBytes: 64 * 1024,
    retryAfterCapMs: 300_000,
    onDial: (address, port) => {
      dials.push({ address, port });
      if (!isLoopback(address)) {
        throw new Error(`tripwire: a test tried to dial ${address}`);
      }
    },
    ...overrides,
  });
}

describe('WebhookSender against loopback receivers', () => {
  const webhooks = sender();
  const receivers: Receiver[] = [];
  const listen = async (handler: Handler, host = '127.0.0.1', port = 0): Promise<Receiver> => {
    const started = await receiver(host, handler, port);
    receivers.push(started);
    return started;
  };
  const post = (tenant: string, url: string, headers?: Record<string, string>) =>
    webhooks.send({ tenant, url, body, headers });

  afterEach(() => {
    dials.length = 0;
  });
  afterAll(async () => {
    webhooks.close();
    await Promise.all(receivers.map((r) => r.close()));
  });

  describe('delivery', () => {
    it('2xx is delivered: signed body, A2A content type, the caller’s headers (spec digest §10.10)', async () => {
      const hook = await listen(answer(202));
      const result = await post('acme', `http://127.0.0.1:${hook.port}/hooks/a2a`, {
        'X-A2A-Delivery-Id': 'd-1',
        'X-A2A-Notification-Token': 'tok',
        'content-type': 'text/plain',
      });
      expect(result).toMatchObject({ outcome: 'delivered', status: 202 });
      expect(result.durationMs).toBeGreaterThanOrEqual(0);
      expect(dials).toStrictEqual([{ address: '127.0.0.1', port: hook.port }]);
      const [received] = hook.requests;
      expect(received!.body).toStrictEqual(body);
      expect(received!.headers).toMatchObject({
        'content-type': A2A_CONTENT_TYPE,
        'content-length': String(body.length),
        'x-a2a-delivery-id': 'd-1',
        'x-a2a-notification-token': 'tok',
      });
      // What a receiver does: re-attach the body to the detached JWS and verify it against the JWK Set.
      const [protectedHeader, , signature] = String(
        received!.headers[SIGNATURE_HEADER.toLowerCase()],
      ).split('.');
      const attached = `${protectedHeader}.${received!.body.toString('base64url')}.${signature}`;
      const verified = await compactVerify(attached, createLocalJWKSet({ keys: [{ ...key.jwk }] }));
      expect(verified.protectedHeader).toStrictEqual({ alg: 'ES256', kid: key.kid, typ: 'JOSE' });
    });

    it('reuses connections: many sends to one receiver, one connection', async () => {
      const hook = await listen(answer(200));
      for (let i = 0; i < 20; i++) {
        expect(await post('acme', `http://127.0.0.1:${hook.port}/`)).toMatchObject({
          outcome: 'delivered',
        });
      }
      expect(hook.accepts).toBe(1);
      expect(dials).toHaveLength(1);
    });

    it('an allowlisted host name is resolved, checked and dialled at the checked address', async () => {
      const hook = await listen(answer(204));
      const result = await post('acme', `http://localhost:${hook.port}/`);
      expect(result).toMatchObject({ outcome: 'delivered', status: 204 });
      expect(dials).toStrictEqual([{ address: '127.0.0.1', port: hook.port }]);
    });
  });

  it('a dial hook that throws stops the connection, for an IP literal and for a host name', async () => {
    const hook = await listen(answer(200));
    const vetoing = sender({
      onDial: () => {
        throw new Error('vetoed');
      },
    });
    for (const url of [`http://127.0.0.1:${hook.port}/`, `http://localhost:${hook.port}/`]) {
      expect(await vetoing.send({ tenant: 'acme', url, body })).toMatchObject({
        outcome: 'retry',
        error: 'vetoed',
      });
    }
    vetoing.close();
    expect(hook.accepts).toBe(0);
  });

  describe('classification', () => {
    it.each([
      [500, {}, undefined],
      [503, { 'Retry-After': '2' }, 2_000],
      [429, { 'Retry-After': '86400' }, 300_000],
      [408, {}, undefined],
    ])('HTTP %i is retried (Retry-After → %j ms)', async (status, headers, retryAfterMs) => {
      const hook = await listen(answer(status, headers));
      const result = await post('acme', `http://127.0.0.1:${hook.port}/`);
      expect(result).toMatchObject({ outcome: 'retry', status, error: `HTTP ${status}` });
      expect(result.outcome === 'retry' && result.retryAfterMs).toBe(retryAfterMs);
    });

    it('HTTP 404 is rejected', async () => {
      const hook = await listen(answer(404));
      expect(await post('acme', `http://127.0.0.1:${hook.port}/`)).toMatchObject({
        outcome: 'rejected',
        status: 404,
        error: 'HTTP 404',
      });
    });

    it.each([302, 307])(
      'HTTP %i to a non-allowlisted loopback receiver is rejected and never followed',
      async (status) => {
        const target = await listen(answer(200), '127.0.0.2');
        const hook = await listen(answer(status, { Location: `http://127.0.0.2:${target.port}/` }));
        const result = await post('acme', `http://127.0.0.1:${hook.port}/`);
        expect(result).toMatchObject({ outcome: 'rejected', status });
        expect(target.accepts).toBe(0);
        expect(dials.map((d) => d.port)).toStrictEqual([hook.port]);
      },
    );

    it('a refused connection is retried', async () => {
      const closed = await receiver('127.0.0.1', answer(200));
      await closed.close();
      const result = await post('acme', `http://127.0.0.1:${closed.port}/`);
      expect(result).toMatchObject({
        outcome: 'retry',
        error: expect.stringMatching(/ECONNREFUSED/),
      });
    });

    it('a URL that fails the registration check, or a header value that cannot be sent, is rejected', async () => {
      expect(await post('acme', 'ftp://127.0.0.1/')).toMatchObject({
        outcome: 'rejected',
        error: expect.stringMatching(/invalid webhook URL: scheme ftp/),
      });
      const hook = await listen(answer(200));
      expect(
        await post('acme', `http://127.0.0.1:${hook.port}/`, {
          'X-A2A-Notification-Token': 'a\nb',
        }),
      ).toMatchObject({ outcome: 'rejected', error: expect.stringMatching(/Invalid character/) });
      expect(hook.requests).toHaveLength(0);
    });
  });

  describe('timeouts and limits', () => {
    it('a receiver that never answers is retried after the response timeout; others are not held up', async () => {
      const silent = await listen(() => undefined);
      const healthy = await listen(answer(200));
      // A response timeout longer than the test: the healthy delivery can only finish first if it does not wait.
      const patient = sender({ responseTimeoutMs: 60_000 });
      let held = true;
      const waiting = patient
        .send({ tenant: 'acme', url: `http://127.0.0.1:${silent.port}/`, body })
        .finally(() => (held = false));
      await expect.poll(() => silent.requests.length).toBe(1);
      expect(
        await patient.send({ tenant: 'acme', url: `http://127.0.0.1:${healthy.port}/`, body }),
      ).toMatchObject({ outcome: 'delivered' });
      expect(held).toBe(true);
      patient.close();
      expect(await waiting).toMatchObject({ outcome: 'retry' });
      // With the 300 ms response timeout, the silent receiver's request ends on it.
      const stuck = await post('acme', `http://127.0.0.1:${silent.port}/`);
      expect(stuck).toMatchObject({ outcome: 'retry', error: 'no response within 300 ms' });
      expect(stuck.durationMs).toBeGreaterThanOrEqual(290);
    });

    it('a body that never ends keeps the verdict of its status; the wait is the body timeout', async () => {
      const dribbling = await listen((_req, res) => {
        res.writeHead(200);
        res.write('{');
      });
      const result = await post('acme', `http://127.0.0.1:${dribbling.port}/`);
      expect(result).toMatchObject({ outcome: 'delivered', status: 200 });
      expect(result.durationMs).toBeGreaterThanOrEqual(290);
    });

    it('reads no more of a response body than the cap, then closes the connection', async () => {
      const total = 64 * 1024 * 1024;
      let written = 0;
      let cutOff = false;
      const flood = await listen((_req, res) => {
        res.writeHead(200, { 'Content-Length': String(total) });
        res.on('close', () => (cutOff = !res.writableFinished));
        const chunk = Buffer.alloc(64 * 1024, 'x');
        const pump = (): void => {
          while (written < total && !res.destroyed) {
            written += chunk.length;
            if (!res.write(chunk)) {
              res.once('drain', pump);
              return;
            }
          }
          res.end();
        };
        pump();
      });
      // A body timeout far away: only the cap can stop the reading.
      const capped = sender({ bodyTimeoutMs: 30_000 });
      const result = await capped.send({
        tenant: 'acme',
        url: `http://127.0.0.1:${flood.port}/`,
        body,
      });
      capped.close();
      expect(result).toMatchObject({ outcome: 'delivered', status: 200 });
      await expect.poll(() => cutOff).toBe(true);
      // The sender keeps no body bytes (it counts them): what it did not read, the receiver could not send.
      expect(written).toBeLessThan(total);
    });

    it('name resolution that never finishes is retried after the connect timeout, nothing dialled', async () => {
      const hanging: Resolver = () => undefined;
      const slow = sender({ resolve: hanging, connectTimeoutMs: 200 });
      const result = await slow.send({ tenant: 'acme', url: 'http://localhost:9/', body });
      slow.close();
      expect(result).toMatchObject({ outcome: 'retry', error: 'not connected within 200 ms' });
      expect(dials).toHaveLength(0);
    });

    it('over https, the connect timeout covers the TLS handshake', async () => {
      const sockets: Socket[] = [];
      const silent = createServer((socket) => sockets.push(socket));
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', () => resolve()));
      const { port } = silent.address() as AddressInfo;
      const slow = sender({ connectTimeoutMs: 200 });
      const result = await slow.send({ tenant: 'acme', url: `https://127.0.0.1:${port}/`, body });
      slow.close();
      sockets.forEach((socket) => socket.destroy());
      silent.close();
      expect(result).toMatchObject({ outcome: 'retry', error: 'not connected within 200 ms' });
      expect(sockets).toHaveLength(1);
      expect(dials).toStrictEqual([{ address: '127.0.0.1', port }]);
    });
  });

  describe('SSRF guard (ADR 0010 decision 8): refused before any dial', () => {
    let v4: Receiver;
    let v6: Receiver;
    beforeAll(async () => {
      v4 = await listen(answer(200));
      v6 = await listen(answer(200), '::1', v4.port);
    });

    const loopbackProbes = [
      'http://127.0.0.1:PORT/',
      'http://127.1:PORT/',
      'http://0.0.0.0:PORT/',
      'http://[::1]:PORT/',
      'http://[::ffff:127.0.0.1]:PORT/',
      'http://localhost:PORT/',
      'http://2130706433:PORT/',
      'http://0177.0.0.1:PORT/',
      'http://0x7f000001:PORT/',
      'https://127.0.0.1:PORT/',
      'https://localhost:PORT/',
    ];
    const otherProbes = [
      'http://10.0.0.1/',
      'http://172.16.0.1/',
      'http://192.168.1.1/',
      'http://100.64.0.1/',
      'http://169.254.169.254/latest/meta-data/',
      'http://[fe80::1]/',
      'http://[fc00::1]/',
    ];

    it.each([...loopbackProbes, ...otherProbes])('%s without an allowlist entry', async (probe) => {
      const result = await post('mallory', probe.replace('PORT', String(v4.port)));
      expect(result).toMatchObject({
        outcome: 'rejected',
        error: expect.stringMatching(/^destination refused: .* is .* and not in the allowlist$/),
      });
      expect(result).not.toHaveProperty('status');
      expect(dials).toStrictEqual([]);
      expect(v4.accepts).toBe(0);
      expect(v6.accepts).toBe(0);
    });

    it('a pooled connection an allowlist admitted is never lent to another tenant', async () => {
      expect(await post('acme', `http://localhost:${v4.port}/`)).toMatchObject({
        outcome: 'delivered',
      });
      expect(await post('mallory', `http://localhost:${v4.port}/`)).toMatchObject({
        outcome: 'rejected',
        error: expect.stringMatching(/resolved from localhost\) is loopback/),
      });
      expect(v4.accepts).toBe(1);
      expect(dials).toHaveLength(1);
    });
  });
});

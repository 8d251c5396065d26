#!/usr/bin/env node
// Example webhook receiver for the platform's push notifications (docs/push.md).
//
//   node examples/push-receiver/receiver.mjs
//
// Plain Node ESM, no build step; `jose` comes from the repository's node_modules (`npm ci` first). It does what
// docs/push.md asks of a receiver: verify the detached JWS against the platform's JWK Set, take the delivery's
// identity from the signed header, drop duplicate deliveries, apply each task's events in generation order, and
// answer 2xx at once. Environment (all optional):
//   PORT        where to listen on 127.0.0.1                         (default 9000)
//   JWKS_URL    the platform's JWK Set                               (default http://127.0.0.1:8080/.well-known/jwks.json)
//   TOKEN       the X-A2A-Notification-Token the config registered   (default: not checked)
//   MAX_EVENTS  exit after applying this many events                 (default: run until Ctrl-C)
/* global console, URL */
import { compactVerify, createRemoteJWKSet } from 'jose';
import { createServer } from 'node:http';
import process, { env } from 'node:process';

const port = Number(env.PORT ?? 9000);
const jwks = createRemoteJWKSet(
  new URL(env.JWKS_URL ?? 'http://127.0.0.1:8080/.well-known/jwks.json'),
);
const maxEvents = env.MAX_EVENTS ? Number(env.MAX_EVENTS) : Infinity;

/** Delivery ids already applied: a redelivery after a crash carries the same id. */
const seen = new Set();
/** Per task, the highest generation applied: older events (a redriven one) are not applied over newer ones. */
const latest = new Map();
let applied = 0;

/**
 * The delivery's verified identity, or null when the signature does not verify. The signature is
 * `<protected>..<signature>`: the body goes between the dots (RFC 7515 appendix F).
 * @param {string | undefined} signature
 * @param {Buffer} body
 * @returns {Promise<{ deliveryId: string, taskId: string, generation: number } | null>}
 */
async function verify(signature, body) {
  const [header, empty, sig] = String(signature ?? '').split('.');
  if (!header || empty !== '' || !sig) {
    return null;
  }
  try {
    const { protectedHeader } = await compactVerify(
      `${header}.${body.toString('base64url')}.${sig}`,
      jwks,
    );
    const a2a = /** @type {Record<string, unknown>} */ (protectedHeader['a2a'] ?? {});
    if (
      typeof a2a['deliveryId'] !== 'string' ||
      typeof a2a['taskId'] !== 'string' ||
      typeof a2a['generation'] !== 'number'
    ) {
      return null;
    }
    return { deliveryId: a2a['deliveryId'], taskId: a2a['taskId'], generation: a2a['generation'] };
  } catch {
    return null;
  }
}

/**
 * What the event says, in one line: the StreamResponse member and the state it reports.
 * @param {Record<string, any>} response
 */
function describe(response) {
  const [kind = '?'] = Object.keys(response);
  const state = response.task?.status?.state ?? response.statusUpdate?.status?.state ?? '';
  return `${kind} ${state}`.trim();
}

const server = createServer((req, res) => {
  /** @type {Buffer[]} */
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', async () => {
    const body = Buffer.concat(chunks);
    if (env.TOKEN && req.headers['x-a2a-notification-token'] !== env.TOKEN) {
      res.writeHead(401).end();
      return;
    }
    const delivery = await verify(req.headers['x-a2a-signature'], body);
    if (!delivery) {
      console.log('rejected: the signature does not verify');
      res.writeHead(401).end();
      return;
    }
    // Accept first (2xx at once); a duplicate is acknowledged too, so the platform stops sending it.
    res.writeHead(204).end();
    if (seen.has(delivery.deliveryId)) {
      console.log(`duplicate ${delivery.deliveryId} ignored`);
      return;
    }
    seen.add(delivery.deliveryId);
    const before = latest.get(delivery.taskId) ?? 0;
    if (delivery.generation <= before) {
      console.log(
        `task ${delivery.taskId}: generation ${delivery.generation} is older than ${before}`,
      );
      return;
    }
    latest.set(delivery.taskId, delivery.generation);
    const response = JSON.parse(body.toString('utf8'));
    console.log(
      [`task ${delivery.taskId}`, `generation ${delivery.generation}`, describe(response)].join(
        '\t',
      ),
    );
    applied += 1;
    if (applied >= maxEvents) {
      server.close();
      process.exit(0);
    }
  });
});

server.listen(port, '127.0.0.1', () => {
  console.log(`receiving webhooks on http://127.0.0.1:${port}/ (Ctrl-C to stop)`);
});

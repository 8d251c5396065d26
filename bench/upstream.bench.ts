/**
 * The price of hosting an existing A2A server (`npm run bench:upstream` = `npm run build && node
 * dist/bench/upstream.bench.js`; issue 32, docs/upstream.md): the same load sent to the example A2A server
 * (`examples/upstream-agent`, the official a2a-js SDK, in memory) directly, and through the platform (the
 * standalone on a throw-away database and the bridge, the example imported as `demo/upstream-bench`), side
 * by side in one run, with the official JS client over JSON-RPC for both.
 *
 * Each round is a closed loop of `--requests N` (default 200) calls at `--concurrency` 1 and 8: a blocking
 * SendMessage of `echo …` (a task, WORKING, an artifact, COMPLETED) and a SendStreamingMessage of the same
 * read to its end. Direct and platform rounds alternate. Prints requests per second, p50 and p95 latency of
 * each, and the platform's figures as a ratio of the direct ones: what durability (every event in the
 * Postgres log before it is answered), tenancy and the extra hop cost. Nothing is asserted.
 */
import { Message, type SendMessageRequest } from '@a2a-js/sdk';
import { ClientFactory, type Client } from '@a2a-js/sdk/client';
import {
  createTestDatabase,
  startBridge,
  startStandalone,
  startUpstreamAgent,
  type PlatformProcess,
  type TestDatabase,
  type UpstreamAgentProcess,
} from '@lib/testing';
import { randomBytes, randomUUID } from 'node:crypto';
import { ascending, fmt, percentile, printMachine, table } from './support/figures';

const ADMIN_TOKEN = `bench-${randomUUID()}`;
const SECRETS_KEY = randomBytes(32).toString('base64');
const ALLOWLIST = JSON.stringify({ demo: ['127.0.0.1'] });
const API_KEY = { 'X-API-Key': 'demo-key' };
const CONCURRENCY = [1, 8];

type Kind = 'send' | 'stream';

interface Round {
  perSecond: number;
  latencies: number[];
}

function parseOptions(argv: readonly string[]): { requests: number } {
  const [flag, value] = argv;
  if (flag === undefined) {
    return { requests: 200 };
  }
  const n = Number(value);
  if (flag !== '--requests' || !Number.isInteger(n) || n < 1) {
    throw new Error('usage: upstream.bench.js [--requests N]');
  }
  return { requests: n };
}

function sendRequest(): SendMessageRequest {
  return {
    tenant: '',
    message: Message.fromJSON({
      messageId: randomUUID(),
      role: 'ROLE_USER',
      parts: [{ text: 'echo bench' }],
    }),
    configuration: undefined,
    metadata: undefined,
  };
}

async function once(client: Client, kind: Kind, headers: Record<string, string>): Promise<void> {
  const options = { serviceParameters: headers };
  if (kind === 'send') {
    await client.sendMessage(sendRequest(), options);
    return;
  }
  for await (const event of client.sendMessageStream(sendRequest(), options)) {
    void event;
  }
}

async function round(
  client: Client,
  kind: Kind,
  headers: Record<string, string>,
  requests: number,
  concurrency: number,
): Promise<Round> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < requests) {
        next += 1;
        const t0 = performance.now();
        await once(client, kind, headers);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  return { perSecond: (requests * 1000) / (performance.now() - started), latencies };
}

async function main(): Promise<void> {
  const { requests } = parseOptions(process.argv.slice(2));
  let db: TestDatabase | undefined;
  let upstream: UpstreamAgentProcess | undefined;
  let platform: PlatformProcess | undefined;
  let bridge: PlatformProcess | undefined;
  try {
    upstream = await startUpstreamAgent({ UPSTREAM_NAME: 'Upstream bench' });
    db = await createTestDatabase('bench_upstream');
    const started = await startStandalone({
      POSTGRES_URL: db.url,
      ADMIN_BOOTSTRAP_TOKEN: ADMIN_TOKEN,
      UPSTREAM_SECRETS_KEY: SECRETS_KEY,
      UPSTREAM_ALLOWLIST: ALLOWLIST,
    });
    platform = started.process;
    const imported = await fetch(
      `${started.baseUrl}/admin/v1/tenants/demo/agents/upstream-bench/import`,
      {
        method: 'POST',
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ cardUrl: upstream.cardUrl }),
      },
    );
    if (imported.status !== 201) {
      throw new Error(`import answered ${imported.status}: ${await imported.text()}`);
    }
    bridge = await startBridge({
      POSTGRES_URL: db.url,
      WORKER_TARGET: started.workerTarget,
      UPSTREAM_SECRETS_KEY: SECRETS_KEY,
      UPSTREAM_ALLOWLIST: ALLOWLIST,
    });
    await bridge.waitForOutput(/bridge serves demo\/upstream-bench/, 30_000);
    const factory = new ClientFactory();
    const direct = await factory.createFromUrl(`http://127.0.0.1:${upstream.httpPort}`);
    const hosted = await factory.createFromUrl(
      started.baseUrl,
      '/agents/demo/upstream-bench/.well-known/agent-card.json',
    );
    // Warm both paths (connections, caches, the JIT) before anything is counted.
    for (const kind of ['send', 'stream'] as const) {
      await round(direct, kind, {}, 20, 4);
      await round(hosted, kind, API_KEY, 20, 4);
    }
    const version = await db.pool.query<{ server_version: string }>('SHOW server_version');
    printMachine(version.rows[0]?.server_version ?? 'unknown');
    const rows: string[][] = [];
    for (const kind of ['send', 'stream'] as const) {
      for (const concurrency of CONCURRENCY) {
        const a = await round(direct, kind, {}, requests, concurrency);
        const b = await round(hosted, kind, API_KEY, requests, concurrency);
        const la = ascending(a.latencies);
        const lb = ascending(b.latencies);
        rows.push([
          kind === 'send' ? 'SendMessage' : 'SendStreamingMessage',
          String(concurrency),
          fmt(a.perSecond),
          fmt(b.perSecond),
          fmt(b.perSecond / a.perSecond, 3),
          fmt(percentile(la, 50)),
          fmt(percentile(lb, 50)),
          fmt(percentile(la, 95)),
          fmt(percentile(lb, 95)),
        ]);
      }
    }
    console.log('');
    console.log(`## Direct to the upstream vs through the platform (${requests} requests a round)`);
    console.log(
      table(
        [
          'call',
          'in flight',
          'direct /s',
          'platform /s',
          'platform / direct',
          'direct p50 ms',
          'platform p50 ms',
          'direct p95 ms',
          'platform p95 ms',
        ],
        rows,
        [0],
      ),
    );
  } finally {
    await bridge?.stop();
    await platform?.stop();
    await upstream?.process.stop();
    await db?.drop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});

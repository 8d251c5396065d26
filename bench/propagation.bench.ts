/**
 * How fast a change reaches where it is seen (`npm run bench:propagation` = `npm run build && node
 * dist/bench/propagation.bench.js`): the claims that tests no longer time (issue 30: a test waits for the
 * outcome; how long it took is measured here, on the same machine, and printed against the claim).
 *
 * The standalone (`npm start`: ingress, task-service and the example workers) on a throw-away database, with
 * a bootstrap admin token. `--rounds N` times each (default 20), one at a time:
 *
 * 1. **Task change → change feed** (`GET /admin/v1/tenants/demo/tasks/changes`, one stream open throughout):
 *    a blocking SendMessage to echo, then its COMPLETED change's arrival at the bench − the change's
 *    `updatedAt` (its event's `recorded_at`, `clock_timestamp()` in the committing transaction). Claim: 1 s.
 * 2. **Revoked API key → refused**: a key issued through the admin API and used once (so every cache holds
 *    it), revoked (`DELETE …/api-keys/{keyId}`), then ListTasks with it every 5 ms; from the revoke's answer
 *    to the first 401. Claim: 1 s (the invalidation notice, not a cache's expiry).
 * 3. **Changed agent definition → card**: `PUT /admin/v1/tenants/demo/agents/echo` with a new description,
 *    then the agent card every 5 ms; from the PUT's answer to the first card with the new description.
 *    Claim: 1 s.
 *
 * Prints p50, p95 and the maximum of each, and the maximum as a fraction of its claim. Nothing is asserted:
 * a figure over its claim is printed as such. Only loopback traffic; every wait is bounded (`--timeout-ms`,
 * default 10 000, per round). The database is dropped at the end.
 */
import { createTestDatabase, startStandalone, type TestDatabase } from '@lib/testing';
import { randomUUID } from 'node:crypto';
import { request, type IncomingMessage } from 'node:http';
import { ascending, fmt, percentile, printMachine, table } from './support/figures';
import { readSseBlocks } from './support/sse-blocks';
import { wallMs } from './support/wall-clock';

interface Options {
  rounds: number;
  timeoutMs: number;
}

const TENANT = 'demo';
const API_KEY = 'demo-key';
const ADMIN_TOKEN = `bench-${randomUUID()}`;
const CLAIM_MS = 1_000;
const POLL_MS = 5;

function parseOptions(argv: readonly string[]): Options {
  const options: Options = { rounds: 20, timeoutMs: 10_000 };
  for (let i = 0; i < argv.length; i += 2) {
    const flag = argv[i] ?? '';
    const value = Number(argv[i + 1]);
    if (!Number.isInteger(value) || value < 1) {
      throw new Error(`${flag} needs a positive whole number`);
    }
    if (flag === '--rounds') {
      options.rounds = value;
    } else if (flag === '--timeout-ms') {
      options.timeoutMs = value;
    } else {
      throw new Error(`unknown option ${flag} (--rounds N, --timeout-ms N)`);
    }
  }
  return options;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** One JSON call; the status and the parsed body (`{}` when empty). */
async function call(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: unknown } = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url, {
    method: init.method ?? 'GET',
    headers: {
      ...init.headers,
      ...(init.body !== undefined ? { 'Content-Type': 'application/json' } : {}),
    },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  const text = await response.text();
  return {
    status: response.status,
    body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
  };
}

/** Calls `probe` every POLL_MS until it says yes; the wall time of that answer. */
async function firstTime(probe: () => Promise<boolean>, timeoutMs: number): Promise<number> {
  const deadline = wallMs() + timeoutMs;
  for (;;) {
    if (await probe()) {
      return wallMs();
    }
    if (wallMs() > deadline) {
      throw new Error(`no change within ${timeoutMs} ms`);
    }
    await sleep(POLL_MS);
  }
}

/**
 * The change feed's COMPLETED changes as they arrive: each task's latency (arrival − `updatedAt`), kept until
 * asked for, since a change may arrive before the blocking send that made it has answered.
 */
class ChangeFeed {
  private readonly arrived = new Map<string, number>();
  private readonly waiting = new Map<string, (latency: number) => void>();
  private response: IncomingMessage | null = null;

  async open(baseUrl: string): Promise<void> {
    const url = new URL(`/admin/v1/tenants/${TENANT}/tasks/changes`, baseUrl);
    this.response = await new Promise<IncomingMessage>((resolve, reject) => {
      request(url, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } }, resolve)
        .on('error', reject)
        .end();
    });
    readSseBlocks(
      this.response,
      (block, at) => {
        const data = block
          .split('\n')
          .filter((line) => line.startsWith('data:'))
          .map((line) => line.slice(5).trim())
          .join('\n');
        if (!data) {
          return;
        }
        const change = JSON.parse(data) as { taskId?: string; state?: string; updatedAt?: string };
        if (change.state === 'TASK_STATE_COMPLETED' && change.taskId && change.updatedAt) {
          const latency = at - Date.parse(change.updatedAt);
          const waiter = this.waiting.get(change.taskId);
          if (waiter) {
            waiter(latency);
          } else {
            this.arrived.set(change.taskId, latency);
          }
        }
      },
      () => undefined,
    );
  }

  /** Resolves with the latency of `taskId`'s COMPLETED change once it arrives. */
  completed(taskId: string, timeoutMs: number): Promise<number> {
    const latency = this.arrived.get(taskId);
    if (latency !== undefined) {
      this.arrived.delete(taskId);
      return Promise.resolve(latency);
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no change of ${taskId}`)), timeoutMs);
      this.waiting.set(taskId, (arrived) => {
        clearTimeout(timer);
        this.waiting.delete(taskId);
        resolve(arrived);
      });
    });
  }

  close(): void {
    this.response?.destroy();
  }
}

async function changeFeed(baseUrl: string, options: Options): Promise<number[]> {
  const feed = new ChangeFeed();
  await feed.open(baseUrl);
  const latencies: number[] = [];
  try {
    for (let round = 0; round < options.rounds; round++) {
      const sent = await call(`${baseUrl}/agents/${TENANT}/echo/jsonrpc`, {
        method: 'POST',
        headers: { 'A2A-Version': '1.0', 'X-API-Key': API_KEY },
        body: {
          jsonrpc: '2.0',
          id: round,
          method: 'SendMessage',
          params: {
            message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'feed' }] },
          },
        },
      });
      const taskId =
        (sent.body['result'] as { task?: { id?: string } } | undefined)?.task?.id ?? '';
      latencies.push(await feed.completed(taskId, options.timeoutMs));
    }
  } finally {
    feed.close();
  }
  return latencies;
}

async function keyRevocation(baseUrl: string, options: Options): Promise<number[]> {
  const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
  const latencies: number[] = [];
  for (let round = 0; round < options.rounds; round++) {
    const issued = await call(`${baseUrl}/admin/v1/tenants/${TENANT}/api-keys`, {
      method: 'POST',
      headers: admin,
      body: { principalId: `bench-${round}` },
    });
    const secret = issued.body['secret'] as string;
    const keyId = (issued.body['credential'] as { keyId: string }).keyId;
    const list = (): Promise<{ status: number }> =>
      call(`${baseUrl}/agents/${TENANT}/echo/jsonrpc`, {
        method: 'POST',
        headers: { 'A2A-Version': '1.0', 'X-API-Key': secret },
        body: { jsonrpc: '2.0', id: 1, method: 'ListTasks', params: {} },
      });
    if ((await list()).status !== 200) {
      throw new Error('a new key was refused');
    }
    await call(`${baseUrl}/admin/v1/tenants/${TENANT}/api-keys/${keyId}`, {
      method: 'DELETE',
      headers: admin,
    });
    const revoked = wallMs();
    const refused = await firstTime(async () => (await list()).status === 401, options.timeoutMs);
    latencies.push(refused - revoked);
  }
  return latencies;
}

async function cardChange(baseUrl: string, options: Options): Promise<number[]> {
  const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
  const definition = `${baseUrl}/admin/v1/tenants/${TENANT}/agents/echo`;
  const cardUrl = `${baseUrl}/agents/${TENANT}/echo/.well-known/agent-card.json`;
  // The definition as stored, less what the store adds to it.
  const current = (await call(definition, { headers: admin })).body;
  for (const added of ['tenantId', 'agentId', 'createdAt', 'updatedAt']) {
    delete current[added];
  }
  const latencies: number[] = [];
  for (let round = 0; round < options.rounds; round++) {
    const description = `Echo, round ${round} ${randomUUID()}`;
    const card = { ...(current['card'] as Record<string, unknown>), description };
    const changed = await call(definition, {
      method: 'PUT',
      headers: admin,
      body: { ...current, card },
    });
    if (changed.status !== 200) {
      throw new Error(`PUT ${definition}: ${changed.status} ${JSON.stringify(changed.body)}`);
    }
    const put = wallMs();
    const served = await firstTime(
      async () => (await call(cardUrl)).body['description'] === description,
      options.timeoutMs,
    );
    latencies.push(served - put);
  }
  return latencies;
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  let db: TestDatabase | null = null;
  let platform: Awaited<ReturnType<typeof startStandalone>> | null = null;
  try {
    db = await createTestDatabase('bench_propagation');
    platform = await startStandalone({ POSTGRES_URL: db.url, ADMIN_BOOTSTRAP_TOKEN: ADMIN_TOKEN });
    const version = await db.pool.query<{ server_version: string }>('SHOW server_version');
    printMachine(version.rows[0]?.server_version ?? 'unknown');
    const measured: [string, number[]][] = [
      ['task change → change feed', await changeFeed(platform.baseUrl, options)],
      ['revoked API key → refused', await keyRevocation(platform.baseUrl, options)],
      ['changed agent definition → card', await cardChange(platform.baseUrl, options)],
    ];
    console.log('');
    console.log(`## Propagation (${options.rounds} rounds each, ms)`);
    console.log(
      table(
        ['what', 'p50', 'p95', 'max', 'claim', 'max / claim'],
        measured.map(([what, values]) => {
          const sorted = ascending(values);
          const max = sorted[sorted.length - 1] ?? Number.NaN;
          return [
            what,
            fmt(percentile(sorted, 50)),
            fmt(percentile(sorted, 95)),
            fmt(max),
            String(CLAIM_MS),
            fmt(max / CLAIM_MS, 3),
          ];
        }),
        [0],
      ),
    );
  } finally {
    await platform?.process.stop();
    await db?.drop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});

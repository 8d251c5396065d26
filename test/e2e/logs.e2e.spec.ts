/**
 * The platform's logs, end to end (issue 13, docs/observability.md): the standalone process and its worker
 * children started with LOG_FORMAT=json write nothing but JSON lines with the level, time and app; a call's
 * lines name its request id (the client's `X-Request-Id`, answered back), tenant, agent and task; no secret
 * the processes were given or were sent appears anywhere in their output.
 */
import {
  createTestDatabase,
  startStandalone,
  type PlatformProcess,
  type TestDatabase,
} from '@lib/testing';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonRpcUrl } from './support/json-rpc';

const SECRETS = {
  apiKey: `demo-api-key-${randomUUID()}`,
  workerSecret: `demo-worker-secret-${randomUUID()}`,
  postgresPassword: `pg-password-${randomUUID()}`,
  wrongKey: `a2a_key-0000_${randomUUID().replaceAll('-', '')}`,
};

let db: TestDatabase;
let platform: PlatformProcess;
let endpoint: string;

beforeAll(async () => {
  db = await createTestDatabase('e2e_logs');
  // Trust authentication ignores the password; the process is given it all the same.
  const url = new URL(db.url);
  url.password = SECRETS.postgresPassword;
  const started = await startStandalone({
    POSTGRES_URL: url.toString(),
    LOG_FORMAT: 'json',
    LOG_LEVEL: 'debug',
    A2A_DEMO_API_KEY: SECRETS.apiKey,
    A2A_DEMO_WORKER_SECRET: SECRETS.workerSecret,
  });
  platform = started.process;
  endpoint = jsonRpcUrl(started.baseUrl, 'demo', 'echo');
});

afterAll(async () => {
  await platform?.stop();
  await db?.drop();
});

function sendMessage(headers: Record<string, string>, text: string): Promise<Response> {
  return fetch(endpoint, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0', ...headers },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'SendMessage',
      params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }] } },
    }),
  });
}

/**
 * The processes' output as entries, once a line matching `until` was written (or after 15 s: then the
 * test's own expectation names what is missing).
 */
async function entries(until: (entry: Record<string, unknown>) => boolean) {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const output = platform.log;
    // The kept output is a tail: its first line may be cut.
    const lines = output.split('\n').slice(output.length >= 64_000 ? 1 : 0);
    const parsed = lines
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    if (parsed.some(until) || Date.now() > deadline) {
      return { output, parsed };
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('logs (LOG_FORMAT=json)', () => {
  it('name the call: the request id sent in X-Request-Id (answered back), tenant, agent and task', async () => {
    const response = await sendMessage(
      { 'X-API-Key': SECRETS.apiKey, 'X-Request-Id': 'e2e-logs-call-1' },
      'hello logs',
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe('e2e-logs-call-1');
    const { result } = (await response.json()) as { result: { task: { id: string } } };
    const answered = (e: Record<string, unknown>): boolean =>
      e['msg'] === 'A2A call answered' && e['requestId'] === 'e2e-logs-call-1';
    const { parsed } = await entries(answered);
    expect(parsed.find(answered)).toMatchObject({
      level: 'debug',
      app: 'standalone',
      component: 'A2aCall',
      tenant: 'demo',
      agent: 'echo',
      taskId: result.task.id,
      status: 200,
    });
  });

  it('replace a request id that is not a short token with one of their own', async () => {
    const response = await sendMessage(
      { 'X-API-Key': SECRETS.apiKey, 'X-Request-Id': 'not a token, and {braces}' },
      'second',
    );
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('are JSON lines with level, time and app from the platform and its workers, with no secret', async () => {
    const refused = await sendMessage({ 'X-API-Key': SECRETS.wrongKey }, 'refused');
    expect(refused.status).toBe(401);
    const { output, parsed } = await entries(
      (e) => e['msg'] === 'A2A call answered' && e['status'] === 401,
    );
    expect(parsed.length).toBeGreaterThan(10);
    for (const entry of parsed) {
      expect(['trace', 'debug', 'info', 'warn', 'error', 'fatal']).toContain(entry['level']);
      expect(new Date(entry['time'] as string).toISOString()).toBe(entry['time']);
      expect(['standalone', 'agents']).toContain(entry['app']);
    }
    expect(parsed.some((e) => e['app'] === 'agents' && e['msg'] === 'connected')).toBe(true);
    expect(parsed.some((e) => e['component'] === 'NestApplication')).toBe(true);
    for (const secret of Object.values(SECRETS)) {
      expect(output).not.toContain(secret);
    }
  });
});

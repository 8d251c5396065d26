/**
 * What the web console needs from the admin API (issue 14), against the real standalone process (`npm start`:
 * the task-service with its example workers, the admin API and the console on the ingress port): who a
 * credential is, the connected workers and their leases, a tenant's tasks with their event timeline from the
 * log, the live stream of task changes, and the console's static files with their security headers. A tenant
 * admin of one tenant sees nothing of another (404, as if it did not exist).
 */
import { startAgentWorker, type PlatformProcess } from '@lib/testing';
import { EXAMPLE_AGENT_IDS } from '@lib/worker-sdk';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_CONTENT_SECURITY_POLICY } from '../../apps/admin-api/src/console';
import { eventually, rawRpc, rawUserMessage, request, sentTask } from './support/json-rpc';
import { bootStandalone, seedAcme, type Standalone } from './support/platform';
import { openEventStream, type SseConnection } from './support/sse';

const TOKEN = `bootstrap-${randomUUID()}`;
const ACME_KEY = `acme-${randomUUID()}`;
const ACME_WORKER = `acme-worker-${randomUUID()}`;
const DEMO_KEY = 'demo-key';

let platform: Standalone;
let consoleDir: string;
let acmeWorker: PlatformProcess | undefined;
/** A key of tenant acme with `tenant:admin`. */
let acmeAdmin: string;

interface Answer {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

async function admin(path: string, token: string | null = TOKEN): Promise<Answer> {
  const response = await fetch(`${platform.baseUrl}${path}`, {
    headers: token !== null ? { Authorization: `Bearer ${token}` } : {},
  });
  const text = await response.text();
  return {
    status: response.status,
    body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
    headers: response.headers,
  };
}

/**
 * A task of the demo tenant's `agent`, created by `demo-user` (blocking unless `params` say otherwise); `message`
 * adds fields to the user message.
 */
async function demoTask(
  agent: string,
  text: string,
  extra: { message?: Record<string, unknown>; params?: Record<string, unknown> } = {},
) {
  return sentTask(
    await rawRpc(
      platform.endpoint('demo', agent),
      request('SendMessage', { message: rawUserMessage(text, extra.message), ...extra.params }),
      { apiKey: DEMO_KEY },
    ),
  );
}

function changes(query = '', token = TOKEN): Promise<SseConnection> {
  return openEventStream({
    method: 'GET',
    url: `${platform.baseUrl}/admin/v1/tenants/demo/tasks/changes${query}`,
    headers: { Authorization: `Bearer ${token}` },
  });
}

/**
 * How long a change may take to reach a change stream: long enough that only a lost change misses it (how
 * fast changes arrive is a benchmark's question, not a test's; issue 30).
 */
const CHANGE_DEADLINE_MS = 15_000;

/** The next `event: task` of a change stream whose task is `taskId` and whose state is `state`. */
async function changeOf(
  stream: SseConnection,
  taskId: string,
  state: string,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + CHANGE_DEADLINE_MS;
  for (;;) {
    const frame = await stream.next(Math.max(1, deadline - Date.now()));
    if (!frame) {
      throw new Error(`no ${state} change of ${taskId} within ${CHANGE_DEADLINE_MS} ms`);
    }
    const change = JSON.parse(frame.data) as Record<string, unknown>;
    expect(frame.event).toBe('task');
    if (change['taskId'] === taskId && change['state'] === state) {
      return change;
    }
  }
}

beforeAll(async () => {
  consoleDir = mkdtempSync(join(tmpdir(), 'a2a-console-'));
  writeFileSync(join(consoleDir, 'index.html'), '<!doctype html><title>operator</title>');
  writeFileSync(join(consoleDir, 'playground.html'), '<!doctype html><title>playground</title>');
  mkdirSync(join(consoleDir, 'assets'));
  writeFileSync(join(consoleDir, 'assets', 'app-3f9a1c.js'), 'console.log("console");\n');
  platform = await bootStandalone('e2e_console_api', {
    ADMIN_BOOTSTRAP_TOKEN: TOKEN,
    ADMIN_CONSOLE_DIR: consoleDir,
    WORKER_SESSIONS_REFRESH_MS: '300',
  });
  await seedAcme(platform.db.pool, ACME_KEY, ACME_WORKER);
  acmeWorker = await startAgentWorker('echo', platform.workerTarget, ACME_WORKER);
  const issued = await fetch(`${platform.baseUrl}/admin/v1/tenants/acme/api-keys`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ principalId: 'acme-admin', scopes: ['tenant:admin'] }),
  });
  expect(issued.status).toBe(201);
  acmeAdmin = ((await issued.json()) as { secret: string }).secret;
});

afterAll(async () => {
  await acmeWorker?.stop();
  await platform?.close();
});

describe('GET /admin/v1/whoami', () => {
  it('says which face of the console a credential gets: platform admin, or tenant admin of its tenant', async () => {
    expect(await admin('/admin/v1/whoami')).toMatchObject({
      status: 200,
      body: {
        principalId: 'bootstrap-admin',
        credentialId: 'bootstrap',
        role: 'platform-admin',
        tenantId: null,
        permissions: ['platform:admin', 'tenant:admin', 'authenticated'],
      },
    });
    const tenantAdmin = await admin('/admin/v1/whoami', acmeAdmin);
    expect(tenantAdmin.status).toBe(200);
    expect(tenantAdmin.body).toEqual({
      principalId: 'acme-admin',
      credentialId: expect.any(String) as string,
      role: 'tenant-admin',
      tenantId: 'acme',
      permissions: ['tenant:admin', 'authenticated'],
    });
  });

  it('refuses a missing credential and a key without tenant:admin (401), and audits the call', async () => {
    const missing = await admin('/admin/v1/whoami', null);
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect((await admin('/admin/v1/whoami', DEMO_KEY)).status).toBe(401);
    const audit = await admin('/admin/v1/tenants/acme/audit?operation=admin.whoami', acmeAdmin);
    expect(audit.body['records']).toContainEqual(
      expect.objectContaining({ principalId: 'acme-admin', outcome: 'ok', binding: 'ADMIN' }),
    );
  });
});

describe('GET /admin/v1/tenants/{t}/workers', () => {
  it('lists the sessions connected to the task-service, by agent, with capacity, replica and heartbeats', async () => {
    const listed = await eventually(
      () => admin('/admin/v1/tenants/demo/workers'),
      (answer) =>
        (answer.body['workers'] as unknown[] | undefined)?.length === EXAMPLE_AGENT_IDS.length,
    );
    const workers = listed.body['workers'] as Record<string, unknown>[];
    expect(workers.map((w) => w['agentId'])).toEqual([...EXAMPLE_AGENT_IDS].sort());
    for (const worker of workers) {
      expect(worker).toMatchObject({
        tenantId: 'demo',
        sessionId: expect.any(String) as string,
        replicaId: expect.any(String) as string,
        capacity: expect.any(Number) as number,
        inFlight: 0,
        leases: [],
        stale: false,
      });
      expect(Date.parse(worker['connectedAt'] as string)).toBeLessThanOrEqual(
        Date.parse(worker['lastSeenAt'] as string),
      );
    }
    const echo = await admin('/admin/v1/tenants/demo/workers?agentId=echo');
    expect((echo.body['workers'] as Record<string, unknown>[]).map((w) => w['agentId'])).toEqual([
      'echo',
    ]);
  });

  it('shows the leases a worker holds, with their epoch and expiry, while it runs a task', async () => {
    // A minute of countdown: the task still runs (and holds its lease) whenever the listing gets to it.
    const task = await demoTask('countdown', '60', {
      message: { metadata: { stepMs: 1_000 } },
      params: { configuration: { returnImmediately: true } },
    });
    try {
      const seen = await eventually(
        () => admin('/admin/v1/tenants/demo/workers?agentId=countdown'),
        (answer) => {
          const [worker] = answer.body['workers'] as Record<string, unknown>[];
          return (worker?.['leases'] as unknown[]).length === 1 && worker?.['inFlight'] === 1;
        },
      );
      const [worker] = seen.body['workers'] as Record<string, unknown>[];
      expect(worker?.['leases']).toEqual([
        { taskId: task.id, leaseEpoch: 1, expiresAt: expect.any(String) as string },
      ]);
      expect(worker?.['lastHeartbeatAt']).not.toBeNull();
    } finally {
      await rawRpc(platform.endpoint('demo', 'countdown'), request('CancelTask', { id: task.id }), {
        apiKey: DEMO_KEY,
      });
    }
  });

  it('shows a tenant admin its own workers, and another tenant’s as absent (404)', async () => {
    const own = await eventually(
      () => admin('/admin/v1/tenants/acme/workers', acmeAdmin),
      (answer) => (answer.body['workers'] as unknown[] | undefined)?.length === 1,
    );
    expect(own.body['workers']).toEqual([expect.objectContaining({ agentId: 'echo' })]);
    const other = await admin('/admin/v1/tenants/demo/workers', acmeAdmin);
    expect(other.status).toBe(404);
    expect(other.body).toMatchObject({ error: { status: 'NOT_FOUND' } });
    expect((await admin('/admin/v1/tenants/nobody/workers')).status).toBe(404);
  });
});

describe('the tasks of a tenant', () => {
  it('are listed newest first, every principal’s, filtered by agent, state and context, page by page', async () => {
    const first = await demoTask('echo', 'one');
    const second = await demoTask('echo', 'two', { message: { contextId: first.contextId } });
    const all = await admin('/admin/v1/tenants/demo/tasks?agentId=echo');
    expect(all.status).toBe(200);
    const tasks = all.body['tasks'] as Record<string, unknown>[];
    expect(tasks.slice(0, 2).map((t) => t['taskId'])).toEqual([second.id, first.id]);
    expect(tasks[0]).toEqual({
      taskId: second.id,
      contextId: first.contextId,
      agentId: 'echo',
      ownerId: 'demo-user',
      state: 'TASK_STATE_COMPLETED',
      statusTimestamp: expect.any(String) as string,
      version: expect.any(Number) as number,
    });

    const page1 = await admin(`/admin/v1/tenants/demo/tasks?contextId=${first.contextId}&limit=1`);
    expect((page1.body['tasks'] as Record<string, unknown>[]).map((t) => t['taskId'])).toEqual([
      second.id,
    ]);
    const cursor = page1.body['nextCursor'] as string;
    const page2 = await admin(
      `/admin/v1/tenants/demo/tasks?contextId=${first.contextId}&limit=1&cursor=${cursor}`,
    );
    expect((page2.body['tasks'] as Record<string, unknown>[]).map((t) => t['taskId'])).toEqual([
      first.id,
    ]);
    expect(page2.body['nextCursor']).toBeUndefined();

    const working = await admin('/admin/v1/tenants/demo/tasks?state=TASK_STATE_WORKING');
    expect(working.body['tasks'] as unknown[]).not.toContainEqual(
      expect.objectContaining({ taskId: first.id }),
    );
  });

  it('refuse bad filters with 400 naming the field', async () => {
    for (const [query, field] of [
      ['state=DONE', 'state'],
      ['limit=0', 'limit'],
      ['cursor=bm90LWEtY3Vyc29y', 'cursor'],
    ] as const) {
      const answer = await admin(`/admin/v1/tenants/demo/tasks?${query}`);
      expect(answer.status, query).toBe(400);
      expect(answer.body).toMatchObject({ error: { fields: [{ field }] } });
    }
  });

  it('are read one by one as stored: status, history, artifacts, agent, owner, version', async () => {
    const task = await demoTask('echo', 'read me');
    const answer = await admin(`/admin/v1/tenants/demo/tasks/${task.id}`);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      tenantId: 'demo',
      taskId: task.id,
      agentId: 'echo',
      ownerId: 'demo-user',
      state: 'TASK_STATE_COMPLETED',
      work: null,
      task: {
        id: task.id,
        status: { state: 'TASK_STATE_COMPLETED' },
        history: expect.arrayContaining([
          expect.objectContaining({ role: 'ROLE_USER' }),
        ]) as unknown,
      },
    });
    expect(answer.body['version']).toBeGreaterThan(2);
    expect((await admin(`/admin/v1/tenants/demo/tasks/${randomUUID()}`)).status).toBe(404);
  });

  it('have a timeline from the log: type, generation, time, binding, principal, request, trace, lease', async () => {
    const traceId = randomUUID().replace(/-/g, '');
    const reply = await rawRpc(
      platform.endpoint('demo', 'echo'),
      request('SendMessage', { message: rawUserMessage('trace me') }),
      { apiKey: DEMO_KEY, headers: { traceparent: `00-${traceId}-b7ad6b7169203331-01` } },
    );
    const task = sentTask(reply);
    const answer = await admin(`/admin/v1/tenants/demo/tasks/${task.id}/events`);
    expect(answer.status).toBe(200);
    const events = answer.body['events'] as Record<string, unknown>[];
    expect(events.map((e) => e['generation'])).toEqual(events.map((_, i) => i + 1));
    expect(events[0]).toMatchObject({
      type: 'TaskSubmitted',
      actor: { kind: 'caller', id: 'demo-user' },
      principalId: 'demo-user',
      binding: 'JSONRPC',
      traceId,
      requestId: expect.any(String) as string,
      summary: { role: 'ROLE_USER', parts: 1 },
    });
    const grant = events.find((e) => e['type'] === 'TaskLeaseGranted');
    expect(grant).toMatchObject({
      summary: { leaseEpoch: 1, workerId: expect.any(String) as string, attempt: 1 },
    });
    expect(events.at(-1)).toMatchObject({
      type: 'TaskStatusUpdated',
      actor: { kind: 'agent-worker' },
      principalId: null,
      binding: 'worker',
      summary: { state: 'TASK_STATE_COMPLETED' },
    });
    const after = await admin(`/admin/v1/tenants/demo/tasks/${task.id}/events?after=1&limit=1`);
    expect((after.body['events'] as Record<string, unknown>[]).map((e) => e['generation'])).toEqual(
      [2],
    );
    expect(after.body['nextAfter']).toBe(2);
    expect((await admin(`/admin/v1/tenants/demo/tasks/${randomUUID()}/events`)).status).toBe(404);
    expect((await admin(`/admin/v1/tenants/demo/tasks/${task.id}/events?after=x`)).status).toBe(
      400,
    );
  });

  it('show a cancel in the timeline: who asked, the deadline, and the canceled state', async () => {
    const task = await demoTask('countdown', '20', {
      message: { metadata: { stepMs: 500 } },
      params: { configuration: { returnImmediately: true } },
    });
    await eventually(
      () => admin(`/admin/v1/tenants/demo/tasks/${task.id}`),
      (answer) => answer.body['state'] === 'TASK_STATE_WORKING',
    );
    const canceled = await rawRpc(
      platform.endpoint('demo', 'countdown'),
      request('CancelTask', { id: task.id }),
      { apiKey: DEMO_KEY },
    );
    expect(canceled.status).toBe(200);
    const timeline = await eventually(
      () => admin(`/admin/v1/tenants/demo/tasks/${task.id}/events`),
      (answer) =>
        (answer.body['events'] as Record<string, unknown>[]).some(
          (e) => (e['summary'] as Record<string, unknown>)['state'] === 'TASK_STATE_CANCELED',
        ),
    );
    expect(timeline.body['events']).toContainEqual(
      expect.objectContaining({
        type: 'TaskCancelRequested',
        principalId: 'demo-user',
        summary: { requestedBy: 'demo-user', deadline: expect.any(String) as string },
      }),
    );
  });

  it('are another tenant’s to a tenant admin: 404 for the list, a task and its timeline', async () => {
    const task = await demoTask('echo', 'private');
    for (const path of [
      '/admin/v1/tenants/demo/tasks',
      `/admin/v1/tenants/demo/tasks/${task.id}`,
      `/admin/v1/tenants/demo/tasks/${task.id}/events`,
      '/admin/v1/tenants/demo/tasks/changes',
    ]) {
      const answer = await admin(path, acmeAdmin);
      expect(answer.status, path).toBe(404);
      expect(answer.body, path).toMatchObject({ error: { status: 'NOT_FOUND' } });
    }
    // Nor does acme's own listing show it.
    const own = await admin('/admin/v1/tenants/acme/tasks', acmeAdmin);
    expect(own.status).toBe(200);
    expect(JSON.stringify(own.body)).not.toContain(task.id);
    expect((await admin(`/admin/v1/tenants/acme/tasks/${task.id}`, acmeAdmin)).status).toBe(404);
  });
});

describe('GET /admin/v1/tenants/{t}/tasks/changes', () => {
  it('sends each change of a task, as an event-stream', async () => {
    const stream = await changes();
    try {
      expect(stream.status).toBe(200);
      expect(stream.response.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const task = await demoTask('echo', 'live');
      const completed = await changeOf(stream, task.id, 'TASK_STATE_COMPLETED');
      expect(completed).toEqual({
        taskId: task.id,
        contextId: task.contextId,
        agentId: 'echo',
        state: 'TASK_STATE_COMPLETED',
        version: expect.any(Number) as number,
        statusTimestamp: expect.any(String) as string,
        updatedAt: expect.any(String) as string,
      });
    } finally {
      stream.abort();
    }
  });

  it('sends only the changes that match its filters', async () => {
    const stream = await changes('?agentId=countdown');
    try {
      const echo = await demoTask('echo', 'not for this stream');
      const countdown = await demoTask('countdown', '1', { message: { metadata: { stepMs: 10 } } });
      await changeOf(stream, countdown.id, 'TASK_STATE_COMPLETED');
      expect(stream.frames.map((f) => f.data).join('\n')).not.toContain(echo.id);
    } finally {
      stream.abort();
    }
  });

  it('keeps sending changes after its notice connection is cut (it reconnects and catches up)', async () => {
    const stream = await changes();
    try {
      await eventually(
        () => listeners(),
        (n) => n === 1,
      );
      await platform.db.pool.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'a2a-admin:changes'`,
      );
      const task = await demoTask('echo', 'while deaf');
      await changeOf(stream, task.id, 'TASK_STATE_COMPLETED');
    } finally {
      stream.abort();
    }
  });

  it('stops listening once its last client goes away', async () => {
    const stream = await changes();
    await eventually(
      () => listeners(),
      (n) => n === 1,
    );
    stream.abort();
    await eventually(
      () => listeners(),
      (n) => n === 0,
    );
  });

  it('sends a comment line every 15 s while nothing changes, so that proxies keep it open', async () => {
    // Read until the first heartbeat; the deadline only ends a stream that never sends one.
    const controller = new AbortController();
    const deadline = setTimeout(() => controller.abort(), 60_000);
    // Before the request: the server's 15 s count starts once it has the request, so no sooner than this.
    const requestedAt = Date.now();
    let text = '';
    try {
      const response = await fetch(
        `${platform.baseUrl}/admin/v1/tenants/demo/tasks/changes?agentId=interview`,
        { headers: { Authorization: `Bearer ${TOKEN}` }, signal: controller.signal },
      );
      const body = response.body;
      if (!body) {
        throw new Error('the change stream has no body');
      }
      const reader: ReadableStreamDefaultReader<Uint8Array> = body.getReader();
      const decoder = new TextDecoder();
      while (!text.includes(': heartbeat\n\n')) {
        const { value, done } = await reader.read();
        if (done) {
          break;
        }
        text += decoder.decode(value, { stream: true });
      }
    } finally {
      clearTimeout(deadline);
      controller.abort();
    }
    expect(text).toContain(': heartbeat\n\n');
    // Not before the interval the stream promises (a lower bound: a slow machine only makes it longer; 1 s
    // spare for timer rounding).
    expect(Date.now() - requestedAt).toBeGreaterThan(14_000);
  });

  it('is audited when opened, like every admin call', async () => {
    const stream = await changes('?state=TASK_STATE_COMPLETED');
    stream.abort();
    const audit = await admin('/admin/v1/tenants/demo/audit?operation=admin.task.changes');
    expect((audit.body['records'] as unknown[]).length).toBeGreaterThan(0);
    const task = await demoTask('echo', 'audited read');
    await admin(`/admin/v1/tenants/demo/tasks/${task.id}/events`);
    const read = await admin('/admin/v1/tenants/demo/audit?operation=admin.task.events');
    expect(read.body['records']).toContainEqual(
      expect.objectContaining({ resource: `task/${task.id}`, outcome: 'ok' }),
    );
  });
});

describe('the web console at /console/', () => {
  const get = (path: string, init: RequestInit = {}) =>
    fetch(`${platform.baseUrl}${path}`, { redirect: 'manual', ...init });
  const expectSecurityHeaders = (response: Response) => {
    expect(response.headers.get('content-security-policy')).toBe(CONSOLE_CONTENT_SECURITY_POLICY);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('referrer-policy')).toBe('no-referrer');
  };

  it('serves the operator page, the playground and the hashed assets with a strict CSP', async () => {
    const index = await get('/console/');
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toMatch(/^text\/html/);
    expect(index.headers.get('cache-control')).toBe('no-cache');
    expect(await index.text()).toContain('operator');
    expectSecurityHeaders(index);
    expect(CONSOLE_CONTENT_SECURITY_POLICY).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' https: data:; " +
        "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    );

    const playground = await get('/console/playground.html');
    expect(playground.status).toBe(200);
    expect(await playground.text()).toContain('playground');
    expectSecurityHeaders(playground);

    const asset = await get('/console/assets/app-3f9a1c.js');
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toMatch(/javascript/);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expectSecurityHeaders(asset);
  });

  it('redirects /console to /console/, answers 404 for anything else, and serves nothing outside', async () => {
    const bare = await get('/console');
    expect(bare.status).toBe(301);
    expect(bare.headers.get('location')).toBe('/console/');
    expectSecurityHeaders(bare);
    for (const path of [
      '/console/missing.html',
      '/console/assets/nope.js',
      // (fetch resolves a literal or dot-encoded `..` itself; an encoded slash reaches the server.)
      '/console/..%2fpackage.json',
      '/console/assets%2f..%2f..%2fpackage.json',
    ]) {
      const answer = await get(path);
      expect(answer.status, path).toBe(404);
      expectSecurityHeaders(answer);
    }
    const post = await get('/console/', { method: 'POST' });
    expect(post.status).toBe(405);
    expectSecurityHeaders(post);
  });

  it('leaves the admin API and the A2A bindings as they were', async () => {
    expect((await admin('/admin/v1/whoami')).status).toBe(200);
    const api = await get('/admin/v1/openapi.json');
    expect(api.headers.get('content-security-policy')).toBeNull();
    expect(sentTask(await demoTaskReply()).status.state).toBe('TASK_STATE_COMPLETED');
  });
});

function demoTaskReply() {
  return rawRpc(
    platform.endpoint('demo', 'echo'),
    request('SendMessage', { message: rawUserMessage('still here') }),
    { apiKey: DEMO_KEY },
  );
}

/** The admin API's notice connections for change streams. */
async function listeners(): Promise<number> {
  const result = await platform.db.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'a2a-admin:changes'`,
  );
  return result.rows[0]?.n ?? 0;
}

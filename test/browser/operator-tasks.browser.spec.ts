/**
 * The operator's view of tasks and workers in the console (apps/console/src/operator: tasks-page, task-page,
 * workers-page) in Chromium against the whole platform: sign-in through `GET /admin/v1/whoami`, the task list
 * filling live from the change stream while the demo tenant's `countdown` agent works (JSON-RPC with the demo
 * API key), a task's history, artifacts and event timeline from the log (lease grants, cancels), and the
 * connected workers with their leases. Every page passes axe-core's WCAG 2.1 AA rules with no CSP refusal or
 * console error, and is photographed for docs/console/.
 */
import type { Task } from '@lib/a2a-protocol';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, rawRpc, rawUserMessage, request, sentTask } from '../e2e/support/json-rpc';
import { expectCleanPage, launchChromium, openPage, type PageProblems } from './support/browser';
import { bootConsolePlatform, type ConsolePlatform } from './support/console-platform';

const DEMO_KEY = 'demo-key';

let platform: ConsolePlatform;
let browser: Browser;
let page: Page;
let problems: PageProblems;
/** A countdown task that ran to its end while the task list watched. */
let completed: Task;

/** A task of the demo tenant's `agent` from `demo-user`, answered at once (it goes on in the background). */
async function startTask(agent: string, text: string, stepMs?: number): Promise<Task> {
  return sentTask(
    await rawRpc(
      platform.endpoint('demo', agent),
      request('SendMessage', {
        message: rawUserMessage(text, stepMs === undefined ? {} : { metadata: { stepMs } }),
        configuration: { returnImmediately: true },
      }),
      { apiKey: DEMO_KEY },
    ),
  );
}

/** Waits until the admin API reports `taskId` in `state`. */
async function stateReached(taskId: string, state: string): Promise<void> {
  await eventually(
    () => platform.admin<{ state: string }>('GET', `/tenants/demo/tasks/${taskId}`),
    (task) => task.state === state,
  );
}

/** The page as it is now is accessible, reported no problem, and is photographed. */
function checkPage(name: string): Promise<void> {
  return expectCleanPage(page, problems, `operator-${name}`);
}

/** Goes to a console route and waits for its main heading. */
async function visit(hash: string, heading: string | RegExp): Promise<void> {
  await page.goto(`${platform.consoleUrl}${hash}`);
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
}

/** Signs in with `credential` and answers what whoami said to the console. */
async function signIn(credential: string): Promise<unknown> {
  await page.goto(platform.consoleUrl);
  await page.getByLabel('Admin credential').fill(credential);
  const [whoami] = await Promise.all([
    page.waitForResponse((response) => response.url().endsWith('/admin/v1/whoami')),
    page.getByRole('button', { name: 'Sign in' }).click(),
  ]);
  expect(whoami.status()).toBe(200);
  return whoami.json();
}

beforeAll(async () => {
  [platform, browser] = await Promise.all([
    bootConsolePlatform('console_operator_tasks', { WORKER_SESSIONS_REFRESH_MS: '300' }),
    launchChromium(),
  ]);
  ({ page, problems } = await openPage(browser));
});

afterAll(async () => {
  await browser?.close();
  await platform?.close();
});

describe('the operator console’s tasks and workers', () => {
  it('signs a platform admin in through whoami', async () => {
    expect(await signIn(platform.adminToken)).toMatchObject({
      role: 'platform-admin',
      tenantId: null,
    });
    await page.getByText('Platform admin', { exact: true }).waitFor();
    await page.getByRole('link', { name: 'Tenants', exact: true }).waitFor();
    expect(problems.list).toEqual([]);
  });

  it('fills the task list live while countdown tasks run, and filters it by state and agent', async () => {
    await visit('#/tenants/demo/tasks', 'Tasks of demo');
    await page.getByText('Live: following changes.').waitFor();
    // A reload would lose this mark: the rows below change without one.
    await page.evaluate(() => {
      (globalThis as unknown as { notReloaded: boolean }).notReloaded = true;
    });

    completed = await startTask('countdown', '3', 700);
    const row = page.getByRole('row', { name: new RegExp(completed.id) });
    await expect.poll(() => row.textContent()).toMatch(/countdown\s*working/);
    // The list had not read this task: its row is completed with the owner.
    await expect.poll(() => row.textContent()).toContain('demo-user');
    await expect
      .poll(() => row.textContent(), { timeout: 10_000 })
      .toMatch(/countdown\s*completed/);
    expect(
      await page.evaluate(() => (globalThis as unknown as { notReloaded?: boolean }).notReloaded),
    ).toBe(true);

    // Working countdown tasks only: a new one shows while it works and leaves the list when it completes.
    await page.getByLabel('Agent').fill('countdown');
    await page.getByLabel('State').selectOption('TASK_STATE_WORKING');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('No tasks match.').waitFor();
    await page.getByText('Live: following changes.').waitFor();
    const [working, echo] = await Promise.all([
      startTask('countdown', '5', 700),
      startTask('echo', 'not a countdown'),
    ]);
    const workingRow = page.getByRole('row', { name: new RegExp(working.id) });
    await expect.poll(() => workingRow.textContent()).toMatch(/countdown\s*working/);
    await stateReached(echo.id, 'TASK_STATE_COMPLETED');
    expect(await page.getByRole('row', { name: new RegExp(echo.id) }).count()).toBe(0);
    expect(await page.getByRole('row', { name: new RegExp(completed.id) }).count()).toBe(0);
    await checkPage('tasks');
    await workingRow.waitFor({ state: 'detached', timeout: 10_000 });
    await page.getByText('No tasks match.').waitFor();
  });

  it('shows a task’s status, history, artifacts and its timeline with the lease grant', async () => {
    await visit(`#/tenants/demo/tasks/${completed.id}`, `Task ${completed.id}`);
    await page.getByRole('heading', { name: 'Status: completed' }).waitFor();
    const history = page.getByRole('region', { name: /^History/ });
    expect(await history.textContent()).toMatch(/user\s*3/);
    const artifacts = page.getByRole('region', { name: /^Artifacts/ });
    expect(await artifacts.textContent()).toMatch(/countdown\s*3\s*2\s*1/);
    const timeline = page.getByRole('table', { name: 'Events of the task' });
    const submitted = timeline.getByRole('row', { name: /TaskSubmitted/ });
    expect(await submitted.textContent()).toMatch(/caller demo-user\s*demo-user\s*JSONRPC/);
    const grant = timeline.getByRole('row', { name: /TaskLeaseGranted/ });
    expect(await grant.textContent()).toMatch(/leaseEpoch: 1, workerId: \S+/);
    expect(await grant.textContent()).toContain('attempt: 1');
    expect(
      await timeline
        .getByRole('row', { name: /TaskStatusUpdated/ })
        .last()
        .textContent(),
    ).toMatch(/agent-worker \S+\s*—\s*worker\s*state: TASK_STATE_COMPLETED/);
    await checkPage('task');
  });

  it('shows the cancel of a countdown task in its timeline: who asked, the deadline, the canceled state', async () => {
    const task = await startTask('countdown', '20', 500);
    await stateReached(task.id, 'TASK_STATE_WORKING');
    const canceled = await rawRpc(
      platform.endpoint('demo', 'countdown'),
      request('CancelTask', { id: task.id }),
      { apiKey: DEMO_KEY },
    );
    expect(canceled.status).toBe(200);
    await stateReached(task.id, 'TASK_STATE_CANCELED');
    await visit(`#/tenants/demo/tasks/${task.id}`, `Task ${task.id}`);
    await page.getByRole('heading', { name: 'Status: canceled' }).waitFor();
    const timeline = page.getByRole('table', { name: 'Events of the task' });
    expect(await timeline.getByRole('row', { name: /TaskCancelRequested/ }).textContent()).toMatch(
      /demo-user\s*JSONRPC\s*requestedBy: demo-user, deadline: \d{4}-\d\d-\d\d [\d:]+ UTC/,
    );
    expect(
      await timeline.getByRole('row', { name: /state: TASK_STATE_CANCELED/ }).textContent(),
    ).toMatch(/TaskStatusUpdated/);
    expect(problems.list).toEqual([]);
  });

  it('lists the demo agents’ connected workers with capacity, and a countdown task in flight as a lease', async () => {
    const task = await startTask('countdown', '5', 1_000);
    await eventually(
      () =>
        platform.admin<{ workers: { leases: unknown[]; inFlight: number }[] }>(
          'GET',
          '/tenants/demo/workers?agentId=countdown',
        ),
      ({ workers }) => workers[0]?.leases.length === 1 && workers[0].inFlight === 1,
    );
    await visit('#/tenants/demo/workers', 'Workers of demo');
    for (const agent of ['echo', 'interview', 'units']) {
      expect(
        await page.getByRole('row', { name: new RegExp(`\\s${agent}\\s`) }).textContent(),
      ).toMatch(/0 \/ \d+.*connected/s);
    }
    const countdown = page.getByRole('row', { name: /\scountdown\s/ });
    expect(await countdown.textContent()).toMatch(/1 \/ \d+\s*\S+…\s*epoch 1, until \d{4}-/);
    await countdown.getByRole('link', { name: `Task ${task.id}` }).waitFor();
    await checkPage('workers');
    await countdown.getByRole('link', { name: `Task ${task.id}` }).click();
    await page.getByRole('heading', { level: 1, name: `Task ${task.id}` }).waitFor();
    await expect
      .poll(() => page.getByRole('region', { name: /^Status/ }).textContent())
      .toMatch(/Work queue\s*leased, attempt 1, leased by \S+ \(epoch 1\)/);
  });

  it('signs a tenant admin in through whoami, straight into its own tenant’s tasks', async () => {
    const issued = await platform.admin<{ secret: string }>('POST', '/tenants/demo/api-keys', {
      principalId: 'demo-ops',
      scopes: ['tenant:admin'],
    });
    ({ page, problems } = await openPage(browser));
    expect(await signIn(issued.secret)).toMatchObject({ role: 'tenant-admin', tenantId: 'demo' });
    await page.getByRole('heading', { level: 1, name: 'Tenant demo' }).waitFor();
    await page.getByText('Tenant admin of demo').waitFor();
    expect(await page.getByRole('link', { name: 'Tenants', exact: true }).count()).toBe(0);
    await page.getByRole('link', { name: 'Tasks', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Tasks of demo' }).waitFor();
    await page.getByRole('row', { name: new RegExp(completed.id) }).waitFor();
    // No refusal told the console who this is: whoami did.
    expect(problems.list).toEqual([]);
  });
});

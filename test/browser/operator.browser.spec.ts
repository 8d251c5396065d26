/**
 * The operator's face of the console (apps/console/src/operator) in Chromium against the whole platform: a
 * platform admin signs in with the bootstrap token and runs tenants, agents, credentials, issuers, webhook
 * deliveries and the audit trail through the admin API; a tenant admin (whoami names its tenant) sees its own
 * tenant only. Every page passes axe-core's WCAG 2.1 AA rules with no CSP refusal or console error, and is
 * photographed for docs/console/.
 */
import { LANE_QUEUE } from '@lib/push';
import { Queue } from 'bullmq';
import { randomUUID } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRpc, rawUserMessage, request } from '../e2e/support/json-rpc';
import { expectCleanPage, launchChromium, openPage, type PageProblems } from './support/browser';
import { bootConsolePlatform, type ConsolePlatform } from './support/console-platform';

/** The redrives' lane jobs go to a queue of this file's own (no dispatcher runs: Kafka is not needed). */
const QUEUE_PREFIX = `console-op-${randomUUID().slice(0, 8)}`;
const REDIS_URL = 'redis://127.0.0.1:6379';

let platform: ConsolePlatform;
let browser: Browser;
let page: Page;
let problems: PageProblems;

/** The page as it is now is accessible, reported no problem, and is photographed. */
function checkPage(name: string): Promise<void> {
  return expectCleanPage(page, problems, `operator-${name}`);
}

/** Goes to a console route and waits for its main heading. */
async function visit(hash: string, heading: string | RegExp): Promise<void> {
  await page.goto(`${platform.consoleUrl}${hash}`);
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
}

beforeAll(async () => {
  [platform, browser] = await Promise.all([
    bootConsolePlatform('console_operator', { PUSH_QUEUE_PREFIX: QUEUE_PREFIX, REDIS_URL }),
    launchChromium(),
  ]);
  ({ page, problems } = await openPage(browser));
  await page
    .context()
    .grantPermissions(['clipboard-read', 'clipboard-write'], { origin: platform.baseUrl });
});

afterAll(async () => {
  const queue = new Queue(LANE_QUEUE, { connection: { url: REDIS_URL }, prefix: QUEUE_PREFIX });
  await queue.obliterate({ force: true }).catch(() => undefined);
  await queue.close();
  await browser?.close();
  await platform?.close();
});

describe('the operator console', () => {
  it('signs a platform admin in; creates, suspends and resumes a tenant', async () => {
    await page.goto(platform.consoleUrl);
    await page.getByLabel('Admin credential').fill(platform.adminToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('link', { name: 'demo', exact: true }).waitFor();
    expect(await page.getByRole('navigation', { name: 'Console' }).isVisible()).toBe(true);

    await page.getByLabel('Tenant id').fill('acme');
    await page.getByLabel('Display name').fill('Acme Corp');
    await page.getByLabel('Most active tasks (empty: no limit)').fill('25');
    await page.getByRole('button', { name: 'Create tenant' }).click();
    const acme = page.getByRole('row', { name: /acme Acme Corp/ });
    await expect.poll(() => acme.textContent()).toContain('25 active tasks');
    await page.getByRole('button', { name: 'Suspend acme' }).click();
    await page.getByRole('button', { name: 'Resume acme' }).waitFor();
    expect(await platform.admin<{ status: string }>('GET', '/tenants/acme')).toMatchObject({
      status: 'suspended',
    });
    await page.getByRole('button', { name: 'Resume acme' }).click();
    await page.getByRole('button', { name: 'Suspend acme' }).waitFor();
    expect(await platform.admin<{ status: string }>('GET', '/tenants/acme')).toMatchObject({
      status: 'active',
    });

    // The API's refusal is shown as it said it: the id is taken.
    await page.getByLabel('Tenant id').fill('acme');
    await page.getByLabel('Display name').fill('Acme again');
    await page.getByRole('button', { name: 'Create tenant' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/^409: /);
    problems.list.splice(0, problems.list.length, ...problems.list.filter((p) => !/409/.test(p)));
    await page.reload();
    await page.getByRole('link', { name: 'acme', exact: true }).waitFor();
    await checkPage('tenants');
  });

  it('shows the demo tenant’s quotas against its usage, and changes a quota', async () => {
    await rawRpc(
      platform.endpoint('demo', 'echo'),
      request('SendMessage', { message: rawUserMessage('hi') }),
    );
    await visit('#/tenants/demo', 'Tenant demo');
    const usage = page.getByRole('region', { name: 'Usage' });
    await expect.poll(() => usage.textContent()).toMatch(/Active tasks\s*\d+ \(no limit\)/);
    await page.getByLabel('Requests per second (empty: default)').fill('40');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => usage.textContent()).toMatch(/Requests this second\s*\d+ of 40/);
    expect(await platform.admin<{ quotas: unknown }>('GET', '/tenants/demo')).toMatchObject({
      quotas: { requestsPerSecond: 40 },
    });
    expect(
      await page.getByRole('link', { name: 'Overview and usage' }).getAttribute('aria-current'),
    ).toBe('page');
    await checkPage('tenant-overview');
  });

  it('lists the demo agents, defines a new one and edits it; issues and revokes a worker credential', async () => {
    await visit('#/tenants/demo/agents', 'Agents of demo');
    await page.getByRole('link', { name: 'echo', exact: true }).waitFor();
    await checkPage('agents');

    await page.getByRole('button', { name: 'New agent' }).click();
    await page.getByLabel('Agent id').fill('support');
    await page.getByLabel('Name', { exact: true }).fill('Support desk');
    await page.getByLabel('Description', { exact: true }).fill('Answers <b>questions</b>');
    await page
      .getByLabel(/^Skills/)
      .fill(
        JSON.stringify([{ id: 'faq', name: 'FAQ', description: 'Looks it up', tags: ['help'] }]),
      );
    await page.getByLabel('Most tasks leased at once (empty: no cap)').fill('5');
    await page.getByRole('button', { name: 'Create agent' }).click();
    await page.getByRole('heading', { level: 1, name: 'Agent support' }).waitFor();
    const card = page.getByRole('region', { name: /^Card:/ });
    // Server strings are text, never markup.
    await expect.poll(() => card.textContent()).toContain('Answers <b>questions</b>');
    expect(
      await platform.admin<{ policy: unknown }>('GET', '/tenants/demo/agents/support'),
    ).toMatchObject({
      card: { name: 'Support desk', skills: [{ id: 'faq' }] },
      policy: { maxConcurrency: 5 },
    });

    await page.getByRole('button', { name: 'Edit definition' }).click();
    await page.getByLabel('Version').fill('2.0.0');
    await page.getByRole('button', { name: 'Save agent' }).click();
    await page.getByRole('heading', { name: 'Card: Support desk 2.0.0' }).waitFor();

    await page.getByLabel('Label').fill('support worker');
    await page.getByRole('button', { name: 'Issue worker credential' }).click();
    const secret = page.getByRole('textbox', { name: 'New worker credential' });
    await expect.poll(() => secret.inputValue()).toMatch(/^a2aw_/);
    const [listed] = (
      await platform.admin<{
        workerCredentials: { credentialId: string; revokedAt: string | null }[];
      }>('GET', '/tenants/demo/agents/support/worker-credentials')
    ).workerCredentials;
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Agent support' }).waitFor();
    await page
      .getByRole('button', { name: `Revoke worker credential ${listed!.credentialId}` })
      .click();
    await page
      .getByRole('button', { name: /^Revoke worker credential/ })
      .waitFor({ state: 'detached' });
    expect(
      (
        await platform.admin<{ workerCredentials: { revokedAt: string | null }[] }>(
          'GET',
          '/tenants/demo/agents/support/worker-credentials',
        )
      ).workerCredentials[0]?.revokedAt,
    ).toEqual(expect.any(String));
    await checkPage('agent');
  });

  it('issues an API key whose secret is shown once, with a copy button, and revokes one', async () => {
    await visit('#/tenants/demo/api-keys', 'API keys of demo');
    await page.getByLabel('Principal id').fill('console-user');
    await page.getByLabel('Label').fill('from the console');
    await page.getByRole('checkbox', { name: 'a2a:message:send' }).check();
    await page.getByRole('checkbox', { name: 'a2a:tasks:read', exact: true }).check();
    await page.getByRole('button', { name: 'Issue API key' }).click();
    const secretField = page.getByRole('textbox', { name: 'New API key' });
    await expect.poll(() => secretField.inputValue()).toMatch(/^a2a_/);
    const secret = await secretField.inputValue();
    // The secret has the focus, so a keyboard user goes on to Copy.
    expect(
      await secretField.evaluate((field: { matches(selector: string): boolean }) =>
        field.matches(':focus'),
      ),
    ).toBe(true);
    await checkPage('api-keys');
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByText('Copied to the clipboard.').waitFor();
    expect(
      await page.evaluate(() =>
        (
          globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }
        ).navigator.clipboard.readText(),
      ),
    ).toBe(secret);

    // The secret works, then it is gone from the page; the list shows its prefix only.
    const sent = await rawRpc(
      platform.endpoint('demo', 'echo'),
      request('SendMessage', { message: rawUserMessage('with the new key') }),
      { apiKey: secret },
    );
    expect(sent.status).toBe(200);
    await page.getByRole('button', { name: 'Done' }).click();
    await secretField.waitFor({ state: 'detached' });
    const row = page.getByRole('row', { name: /console-user/ });
    const keyId = secret.split('_')[1]!;
    await expect.poll(() => row.textContent()).toContain(keyId);
    expect(await row.textContent()).not.toContain(secret);

    await page.getByRole('button', { name: `Revoke API key ${keyId}` }).click();
    await expect.poll(() => row.textContent()).toMatch(/revoked/);
    const refused = await rawRpc(
      platform.endpoint('demo', 'echo'),
      request('SendMessage', { message: rawUserMessage('with the revoked key') }),
      { apiKey: secret },
    );
    expect(refused.status).toBe(401);
  });

  it('issues an admin key and defines an OIDC issuer', async () => {
    await visit('#/admin-keys', 'Admin keys');
    await page.getByLabel('Principal id').fill('night-ops');
    await page.getByRole('button', { name: 'Issue admin key' }).click();
    await expect
      .poll(() => page.getByRole('textbox', { name: 'New admin key' }).inputValue())
      .toMatch(/\S{20,}/);
    await page.getByRole('row', { name: /night-ops/ }).waitFor();
    await checkPage('admin-keys');

    await visit('#/tenants/demo/oidc-issuers', 'OIDC issuers of demo');
    await page.getByLabel('Issuer id').fill('corp');
    await page.getByLabel('Issuer (exact iss)').fill('https://idp.example.com/');
    await page.getByLabel('Audience').fill('a2a-demo');
    await page.getByLabel('JWKS URL').fill('https://idp.example.com/jwks.json');
    await page.getByLabel(/^Scope map/).fill('{"agents.use": ["a2a:message:send"]}');
    await page.getByRole('button', { name: 'Save issuer' }).click();
    await page.getByRole('row', { name: /corp https:\/\/idp\.example\.com\// }).waitFor();
    await checkPage('oidc-issuers');
  });

  it('pages through the audit trail, filters it, and verifies its chain', async () => {
    for (let call = 0; call < 60; call += 1) {
      await platform.admin('GET', '/tenants/demo/usage');
    }
    await visit('#/tenants/demo/audit', 'Audit log of demo');
    const rows = page.getByRole('row');
    await expect.poll(() => rows.count()).toBe(51);
    await page.getByRole('button', { name: 'Load more' }).click();
    await expect.poll(() => rows.count()).toBeGreaterThan(61);
    const seqs = (await page.getByRole('row').allTextContents())
      .slice(1)
      .map((text) => Number(/^\s*(\d+)/.exec(text)?.[1]));
    expect(seqs).toStrictEqual([...seqs].sort((a, b) => b - a));

    await page.getByLabel('Operation').fill('admin.api-key.revoke');
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(() => rows.count()).toBe(2);
    expect(await rows.nth(1).textContent()).toMatch(
      /admin\.api-key\.revoke\s+ADMIN\s+api-key\/\S+\s+ok\b/,
    );

    await page.getByRole('button', { name: 'Verify chain' }).click();
    await expect.poll(() => page.getByRole('status', { name: /^Chain verified/ }).count()).toBe(1);
    const verified = page.getByRole('heading', { name: /^Chain verified: \d+ records, unbroken$/ });
    await verified.waitFor();
    const checked = Number(/(\d+) records/.exec((await verified.textContent()) ?? '')?.[1]);
    expect(checked).toBeGreaterThan(60);
    await checkPage('audit');
  });

  it('signs a tenant admin in: whoami names its tenant, and it sees that tenant only', async () => {
    const issued = await platform.admin<{ secret: string }>('POST', '/tenants/demo/api-keys', {
      principalId: 'demo-ops',
      scopes: ['tenant:admin'],
    });
    const tenantAdmin = await openPage(browser);
    page = tenantAdmin.page;
    problems = tenantAdmin.problems;
    await page.goto(platform.consoleUrl);
    await page.getByLabel('Admin credential').fill(issued.secret);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Tenant demo' }).waitFor();
    await page.getByText('Tenant admin of demo').waitFor();
    expect(await page.getByRole('link', { name: 'Tenants' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Suspend tenant' }).count()).toBe(0);
    // Another tenant does not exist for it.
    await visit('#/tenants/acme', 'Tenant acme');
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/^404: /);
    // The page asks for the tenant and its usage together: both refusals, and nothing else, are logged. The
    // second may come in after the alert that the first one raised.
    await expect.poll(() => problems.list.length).toBe(2);
    expect(
      problems.list
        .map((p) => /status of 404 .*\/admin\/v1(\/tenants\/acme\S*)\)$/.exec(p)?.[1])
        .sort(),
    ).toEqual(['/tenants/acme', '/tenants/acme/usage']);
    problems.list.splice(0);
    // Signed in again on a reload, it is taken back to its own tenant without asking for the other's data.
    await page.reload();
    await page.getByRole('region', { name: 'Usage' }).waitFor();
    expect(problems.list).toEqual([]);
    expect(new URL(page.url()).hash).toBe('#/tenants/demo');
    await checkPage('tenant-admin');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Admin credential').waitFor();
  });
});
